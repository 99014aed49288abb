"""Text (rich tables) and JSON for `nforensics hlo` and `nforensics hlo diff`. Output only: the facts are decided
in nforensics/artifacts/hlo_facts.py."""

from __future__ import annotations

import io
import json

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from nforensics.artifacts.hlo_models import BigOp, HloDiff, HloReport
from nforensics.render import check_format
from nforensics.render.terminal import capture_console

TOP_OPS = 15
SITES = 5


def render_hlo(report: HloReport | HloDiff, format: str, *, color: bool = False) -> str:
    check_format(format)
    if format == "json":
        return report.model_dump_json(indent=2) + "\n"
    buffer = io.StringIO()
    console = capture_console(buffer, color)
    for part in _parts(report) if isinstance(report, HloReport) else _diff(report):
        console.print(part)
    return buffer.getvalue()


def _diff(diff: HloDiff) -> list[RenderableType]:
    heading = Text(f"A = {diff.a}\nB = {diff.b}")
    if not diff.changes:
        return [heading, Text("no differences in ops, element types, custom-calls, convolutions, collectives, "
                              "memory or dynamic shapes")]
    table = _table(f"{len(diff.changes)} differences", "what", "A", "B")
    table.columns[0].no_wrap = False  # a long key folds; the values it compares stay whole
    for column in table.columns[1:]:
        column.no_wrap = True
    for change in diff.changes:
        table.add_row(change.key, "-" if change.a is None else str(change.a), "-" if change.b is None else str(change.b))
    return [heading, table]


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold", header_style="bold", box=None, padding=(0, 1))
    for index, column in enumerate(columns):
        table.add_column(column, overflow="fold", no_wrap=index == 0)
    return table


def size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):  # noqa: B007 - the unit the loop stops at is the one to print
        value /= 1024
        if value < 1024:
            break
    return f"{value:.1f} {unit}"


def _parts(report: HloReport) -> list[RenderableType]:
    heading = Text(f"HLO module {report.module} ({report.form}, {report.path})\n", style="bold")
    heading.append(f"entry {report.entry}, {report.computations} computations, {report.instructions} instructions",
                   style="")
    return [heading, _ops(report), *_dtypes(report), *_custom_calls(report), *_convolutions(report), _memory(report),
            *_dynamic(report), *_collectives(report), *_biggest(report)]


def _ops(report: HloReport) -> Table:
    table = _table("Ops", "opcode", "count")
    for opcode, count in list(report.ops.items())[:TOP_OPS]:
        table.add_row(opcode, str(count))
    if len(report.ops) > TOP_OPS:
        rest = list(report.ops.items())[TOP_OPS:]
        table.add_row(f"{len(rest)} more", str(sum(n for _, n in rest)), style="dim")
    return table


def _dtypes(report: HloReport) -> list[RenderableType]:
    facts = report.dtypes
    line = Text("Element types: ", style="bold")
    line.append(", ".join(f"{dtype} {n}" for dtype, n in facts.compute.items()) or "-", style="")
    line.append(" (arithmetic instructions)", style="dim")
    if facts.converts:
        line.append("\nconverts: " + ", ".join(f"{change} {n}" for change, n in facts.converts.items()), style="")
    if facts.mixed_bf16_f32:
        line.append("\nbf16 and f32 mix: f32 islands in a bf16 graph, or the reverse", style="yellow")
    parts: list[RenderableType] = [line]
    if facts.sites:
        table = _table("", "convert", "change", "computation", "op_name")
        for site in facts.sites[:SITES]:
            table.add_row(site.name, site.change, site.computation, site.op_name or "-")
        if len(facts.sites) > SITES:
            table.add_row(f"{len(facts.sites) - SITES} more (--format json lists up to 20)", "", "", "", style="dim")
        parts.append(table)
    return parts


def _custom_calls(report: HloReport) -> list[RenderableType]:
    if not report.custom_calls:
        return []
    table = _table("Custom calls", "target", "calls", "kernels (calls)")
    for call in report.custom_calls:
        kernels = ", ".join(f"{name} ({n})" for name, n in call.kernels.items())
        repeated = any(n > 1 for n in call.kernels.values())
        table.add_row(call.target, str(call.calls), Text(kernels, style="yellow" if repeated else ""))
    return [table]


def _convolutions(report: HloReport) -> list[RenderableType]:
    if not report.convolutions:
        return []
    table = _table("Convolutions", "name", "output", "window", "stride", "pad", "dilation", "groups", "dim_labels", "role")
    table.padding = (0, 1, 0, 0)  # one space between columns: nine columns fit 110 characters
    for column in table.columns:
        column.no_wrap = True
    notes = Text()
    for conv in report.convolutions:
        groups = f"{conv.feature_group_count}" + (f" (batch {conv.batch_group_count})" if conv.batch_group_count > 1 else "")
        role = f"{conv.backward} gradient" if conv.backward else "forward"
        table.add_row(conv.name, conv.shape, conv.window, conv.stride, conv.padding, f"{conv.lhs_dilate}/{conv.rhs_dilate}",
                      groups, conv.dim_labels, Text(role, style="yellow" if conv.backward else ""))
        if conv.backward:
            of = f" of {conv.backward_of}" if conv.backward_of else ""
            notes.append(f"{conv.name} is the {conv.backward} gradient{of}: {conv.why}\n", style="")
        if conv.source or conv.op_name:
            notes.append(f"{conv.name} comes from {conv.source or conv.op_name}\n", style="dim")
    return [table, notes] if notes else [table]


def _memory(report: HloReport) -> Table:
    memory = report.memory
    table = _table("HBM estimate (from shapes)", "what", "bytes")
    table.add_row(f"{memory.parameters} parameters", size(memory.parameter_bytes))
    table.add_row("outputs", size(memory.output_bytes))
    table.add_row("parameters + outputs", size(memory.estimate_bytes))
    table.add_row("intermediates (none freed: an upper bound)", size(memory.intermediate_bytes))
    if memory.largest:
        table.add_row(f"largest tensor: {memory.largest}", size(memory.largest_bytes))
    return table


def _dynamic(report: HloReport) -> list[RenderableType]:
    if not report.dynamic:
        return []
    table = _table(f"Dynamic shapes ({len(report.dynamic)} instructions)", "name", "opcode", "shape")
    for item in report.dynamic[:SITES * 2]:
        table.add_row(item.name, item.opcode, item.shape)
    return [table]


def _collectives(report: HloReport) -> list[RenderableType]:
    if not report.collectives:
        return []
    table = _table("Collectives", "name", "opcode", "replica groups / pairs", "channel", "bytes", "op_name")
    for item in report.collectives:
        groups = item.replica_groups if item.replica_groups is not None else item.source_target_pairs
        table.add_row(item.name, item.opcode, json.dumps(groups).replace(" ", "") if groups is not None else "-",
                      str(item.channel_id) if item.channel_id else "-", size(item.bytes), item.op_name or "-")
    return [table]


def _biggest(report: HloReport) -> list[RenderableType]:
    return [_op_table(title, ops) for title, ops in (("Biggest ops (by output bytes)", report.biggest),
                                                      ("Ops asked for (--op)", report.named)) if ops]


def _op_table(title: str, ops: list[BigOp]) -> RenderableType:
    table = _table(title, "name", "opcode", "shape", "bytes", "source")
    for op in ops:
        table.add_row(op.name, op.opcode, op.shape, size(op.bytes), op.source or op.op_name or "-")
    return table
