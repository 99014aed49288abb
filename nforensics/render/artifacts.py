"""Text (rich tables) and JSON for the artifact commands: `neff`, `neff diff`, `cache`, `nki`. Output only."""

from __future__ import annotations

import io
import json
from collections.abc import Callable

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from nforensics.artifacts.models import CacheReport, KernelFacts, NeffDiff, NeffReport, NkiReport
from nforensics.render import check_format
from nforensics.render.terminal import capture_console, render_text

Report = NeffReport | NeffDiff | CacheReport | NkiReport


def render_artifact(report: Report, format: str, *, color: bool = False) -> str:
    """The text form of a cache report ends with the explanation of each failed entry's log (`cache --failed`)."""
    check_format(format)
    if format == "json":
        return report.model_dump_json(indent=2) + "\n"
    buffer = io.StringIO()
    console = capture_console(buffer, color)
    for part in _TEXT[type(report)](report):
        console.print(part)
    return buffer.getvalue() + (_explanations(report) if isinstance(report, CacheReport) else "")


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold", header_style="bold", box=None, padding=(0, 1))
    for index, column in enumerate(columns):
        table.add_column(column, overflow="fold", no_wrap=index == 0)  # names and keys stay on one line
    return table


def _size(n: int | None) -> str:
    if n is None:
        return "-"
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB"):  # noqa: B007 - the unit the loop stops at is the one to print
        value /= 1024
        if value < 1024:
            break
    return f"{value:.1f} {unit}"


# ---------------------------------------------------------------- neff


def _neff(report: NeffReport) -> list[RenderableType]:
    header = report.header
    if report.hash_ok:
        hash_text = f"verified ({report.hash_algorithm}, {report.hash_order} byte order)"
    elif report.hash_ok is None:
        hash_text = report.hash_note or "not checked"
    else:
        hash_text = report.hash_note or "mismatch"
    target = report.target or "unknown"
    if report.codename:
        cores = f" ({', '.join(report.platforms)}; {report.neuron_core})" if report.neuron_core else ""
        target = f"{report.codename} = {target}{cores}"
    bits = report.feature_bits
    summary = _table(f"NEFF {report.path}", "field", "value")
    rows: list[tuple[str, str | Text]] = [
        ("file", f"{_size(report.file_size)}, {report.payload} payload, {report.members} members, "
                 f"{_size(report.unpacked_bytes)} unpacked"),
        ("NEFF version", f"{header.neff_version} (pkg_version {header.pkg_version})"),
        ("compiler", report.compiler_version or "unknown (no info.json)"),
        ("target", target),
        ("lnc_size", str(report.lnc_size)),
        ("subgraphs", ", ".join(report.subgraphs) or "-"),
        ("hash", hash_text),
        ("feature_bits", f"{bits.value}: {', '.join(b.name for b in bits.decoded) or 'none'}"
                         + (f"; unknown {', '.join(bits.unknown_bits)}" if bits.unknown_bits else "")
                         + " (best effort, unofficial bit names)"),
        ("header", f"name {header.name!r}, num_tpb {header.num_tpb}, requested_tpb_count {header.requested_tpb_count}, "
                   f"tpb_per_node {header.tpb_per_node}, build_version {header.build_version!r}, uuid {header.uuid}"),
    ]
    if bits.newer_compiler_bits:
        rows.append(("note", "feature bits from a newer compiler than the map knows"))
    if report.device_check:
        check = report.device_check
        rows.append(("device", Text(f"{check.device}: {check.note}", style="bold red" if check.newer_than_device else "")))
    if report.extracted_to:
        rows.append(("extracted to", report.extracted_to))
    for name, value in rows:
        summary.add_row(name, value)
    parts: list[RenderableType] = [summary]

    subgraphs = _table("Subgraphs", "subgraph", "activation sets", "DMA queues (owner, queues, DGE)", "semaphores",
                       "events", "spill variables")
    variables = _table("Variables by type", "subgraph", "type", "count", "bytes")
    streams = _table("Instruction streams", "subgraph", "engine", "file", "bytes", "64-byte records", "DMA descriptors")
    for name, sg in report.per_subgraph.items():
        queues = ", ".join(f"{q} ({d.owner}, {d.num_queues}{', DGE' if d.dge else ''})" for q, d in sg.dma_queues.items())
        subgraphs.add_row(name, ", ".join(sg.activation_sets) or "-", queues or "-", str(sg.runtime_semaphores),
                          str(sg.runtime_events), str(sg.spill_variables))
        for kind, group in sg.variables.items():
            variables.add_row(name, kind, str(group.count), _size(group.total_bytes))
        for engine, stream in sg.engines.items():
            streams.add_row(name, engine, stream.instr_file or "-", str(stream.bytes), str(stream.records_64b),
                            str(stream.dma_descriptors))
    parts += [subgraphs, variables, streams]
    if report.io:
        tensors = _table("I/O tensors", "direction", "name", "dtype", "shape", "bytes")
        for t in report.io:
            tensors.add_row(t.direction, t.name, t.dtype or "-", "x".join(map(str, t.shape)) if t.shape else "-", str(t.bytes))
        parts.append(tensors)
    parts += [Text(f"warning: {w}", style="yellow") for w in report.warnings]
    return parts


def _neff_diff(diff: NeffDiff) -> list[RenderableType]:
    if not diff.changes:
        return [Text(f"{diff.a} and {diff.b}: no differences in compiler, target, features, subgraphs, tables or sizes")]
    table = _table(f"{len(diff.changes)} differences", "what", "A", "B")
    for change in diff.changes:
        table.add_row(change.key, _value(change.a), _value(change.b))
    return [Text(f"A = {diff.a}\nB = {diff.b}"), table]


def _value(value: object) -> str:
    if value is None:
        return "-"
    return json.dumps(value) if isinstance(value, (dict, list)) else str(value)


# ---------------------------------------------------------------- cache


def _cache(report: CacheReport) -> list[RenderableType]:
    counts = ", ".join(f"{n} {state}" for state, n in sorted(report.counts.items())) or "no entries"
    heading = Text(f"Compile cache {report.root} (from {report.root_from})\n{counts}, {_size(report.total_bytes)}", style="bold")
    table = _table("", "module", "compiler", "state", "flags", "size", "age", "NEFF / error")
    for e in report.entries:
        detail = e.error or (f"lnc {e.neff_lnc_size}, features {e.neff_feature_bits}" if e.neff_lnc_size is not None else "-")
        style = {"failed": "red", "incomplete": "yellow"}.get(e.state, "")
        table.add_row(e.module, e.compiler_version, Text(e.state, style=style), " ".join(e.flags or []) or "-",
                      _size(e.size_bytes), _age(e.age_seconds), detail)
    parts: list[RenderableType] = [heading, table]
    for e in report.entries:  # `cache --failed`: the facts of each failed entry's HLO module
        if e.hlo_facts or e.hlo_note:
            parts.append(Text(f"\nHLO of {e.module} ({e.hlo})", style="bold"))
            parts += [Text(f"  • {fact}") for fact in e.hlo_facts]
            if e.hlo_note:
                parts.append(Text(f"  {e.hlo_note}", style="yellow"))
    if report.ignored:
        parts.append(Text(f"ignored (not cache folders): {', '.join(report.ignored)}", style="dim"))
    return parts


def _explanations(report: CacheReport) -> str:
    return "".join(render_text([e.diagnosis], color=False) for e in report.entries if e.diagnosis)


def _age(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


# ---------------------------------------------------------------- nki


def _nki(report: NkiReport) -> list[RenderableType]:
    kernels = _table(f"NKI kernels in {report.path}", "kernel", "line", "nc_matmul", "SBUF", "PSUM", "HBM", "uses",
                     "loops (trip count)", "calls/graph", "grid")
    for k in report.kernels:
        uses = [name for name, flag in (("sendrecv", k.uses_sendrecv), ("core_barrier", k.uses_core_barrier),
                                        ("program_id", k.uses_program_id)) if flag]
        kernels.add_row(k.name, str(k.line), _matmuls(k), str(k.sbuf_allocations), str(k.psum_allocations),
                        str(k.hbm_allocations), ", ".join(uses) or "-",
                        ", ".join(f"{loop.kind}({'?' if loop.trip_count is None else loop.trip_count})"
                                  for loop in k.loops) or "-",
                        f"{k.calls_per_graph}{'' if k.calls_per_graph_exact else ' (at least)'}",
                        str(k.grid_max) if k.grid_max is not None else "-")
    parts: list[RenderableType] = [kernels]
    sites = _table("Launches", "kernel", "line", "in", "grid", "repeat", "scope runs per graph")
    for k in report.kernels:
        for site in k.call_sites:
            grid = "[" + ", ".join("?" if d is None else str(d) for d in site.grid) + "]" if site.grid else "-"
            sites.add_row(k.name, str(site.line), site.scope, grid, str(site.repeat), str(site.scope_runs))
    if sites.row_count:
        parts.append(sites)
    for pair in report.back_to_back:
        parts.append(Text(f"back to back without xm.mark_step()/torch_xla.sync() in {pair.scope}: "
                          f"{pair.first} (line {pair.first_line}) then {pair.second} (line {pair.second_line}); "
                          "XLA's lazy mode compiles them into one graph", style="yellow"))
    parts += [Text(f"warning: {w}", style="yellow") for w in report.warnings]
    return parts


def _matmuls(kernel: KernelFacts) -> str:
    unrolled = kernel.nc_matmul_calls_unrolled
    return f"{kernel.nc_matmul_calls} ({unrolled} unrolled)" if unrolled != kernel.nc_matmul_calls else str(unrolled)


_TEXT: dict[type, Callable] = {NeffReport: _neff, NeffDiff: _neff_diff, CacheReport: _cache, NkiReport: _nki}
