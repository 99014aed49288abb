"""Read NEFF files (the Neuron executable format): every fact they give away, the device check, and diffs.

A NEFF is a 1024-byte little-endian header followed by a tar payload, gzip-compressed or plain. There is no
magic number, so a file counts as a NEFF by its structure (docs/artifacts.md, "Recognising a NEFF"). Reading
facts never writes to disk: the tar is streamed and only small JSON members are kept in memory.

neff_header.py reads the header (and its hash and feature bits), neff_payload.py streams the tar members
within the bomb limits, neff_extract.py unpacks them only when asked; this module turns the JSON members
into facts.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from pathlib import Path
from typing import Any, cast

from nforensics.artifacts.models import (
    DeviceCheck,
    DmaQueue,
    EngineStream,
    IoTensor,
    NeffChange,
    NeffDiff,
    NeffReport,
    SubgraphFacts,
    VariableGroup,
)
from nforensics.artifacts.neff_header import check_hash, decode_feature_bits, read_header
from nforensics.artifacts.neff_payload import member_file, open_payload, unsafe_reason
from nforensics.errors import InputError

MAX_JSON_BYTES = 16 * 2**20
MAX_JSON_TOTAL = 64 * 2**20  # all JSON members kept together; past it the rest are skipped with a warning
# Large JSON members the facts do not need; skipping them keeps memory flat on big NEFFs.
SKIPPED_JSON = {"act_info.json", "tensor_map.json", "kernel_debug_info.json"}

# Target codename (kelf-*.json "target") -> (compiler --target, platforms, NeuronCore generation). Inferred
# from public material: docs/artifacts.md, "Target codenames".
CODENAMES: dict[str, tuple[str, list[str], int]] = {
    "tonga": ("inf1", ["inf1"], 1),
    "sunda": ("trn1", ["trn1", "trn1n", "inf2"], 2),
    "cayman": ("trn2", ["trn2"], 3),
}
DEVICE_GENERATIONS = {"inf1": 1, "inf2": 2, "trn1": 2, "trn1n": 2, "gen2": 2,
                      "trn2": 3, "trn2u": 3, "gen3": 3, "trn3": 4, "gen4": 4}
DEVICE_PATTERN = re.compile(r"(inf1|inf2|trn1n?|trn2u?|trn3|gen[234])(?:\.[a-z0-9]+)?")

# ---------------------------------------------------------------- facts


def read_neff(path: Path | str, device: str | None = None) -> NeffReport:
    """Every fact a NEFF file gives away without running it. Raises InputError when it is not a readable NEFF."""
    path = Path(path)
    header, size, kind, warnings = read_header(path)
    algorithm = "md5" if header.pkg_version == 2 else "sha256"
    digest = hashlib.new(algorithm)
    sizes: dict[str, int] = {}
    raw_json: dict[str, bytes] = {}
    members = unpacked = kept = skipped_json = 0
    with open_payload(path, header, kind, digest) as (tar, stream):
        for member in stream:
            members += 1
            unpacked += max(member.size, 0)
            reason = unsafe_reason(member)
            if reason:
                warnings.append(f"member {member.name!r} {reason}")
            if not member.isfile():
                continue
            name = posixpath.normpath(member.name)
            sizes[name] = member.size
            if name.endswith(".json") and name.count("/") <= 1 and posixpath.basename(name) not in SKIPPED_JSON:
                if member.size > MAX_JSON_BYTES:
                    continue
                if kept + member.size > MAX_JSON_TOTAL:
                    skipped_json += 1
                    continue
                kept += member.size
                raw_json[name] = member_file(tar, member).read()
    if skipped_json:
        warnings.append(f"{skipped_json} JSON members not read: the JSON kept is capped at {MAX_JSON_TOTAL} bytes")
    hash_ok, hash_order, hash_note = check_hash(header, digest)
    documents = _Documents(raw_json, warnings)

    info = documents.get("info.json")
    # kelf-0.json names the subgraphs and the target; old multi-core NEFFs have kelf-a.json, kelf-b.json.
    kelfs = [documents.get(name) for name in sorted(raw_json) if re.fullmatch(r"kelf-[^/]*\.json", name)]
    graphs = [g for kelf in kelfs for g in _list(kelf.get("graphs")) if isinstance(g, dict)]
    codename = next((str(kelf["target"]) for kelf in kelfs if kelf.get("target")), None)
    if not graphs:  # no kelf file: fall back to the folders that hold a def.json
        graphs = [{"name": n.split("/")[0], "definition": n} for n in sorted(sizes) if n.endswith("/def.json")]
    # Facts once per definition file: a hostile kelf can list thousands of graphs that share one def.json.
    by_definition: dict[str, SubgraphFacts] = {}
    per_subgraph = {}
    for graph in graphs:
        definition = _definition(graph)
        if definition not in by_definition:
            by_definition[definition] = _subgraph(graph, documents, sizes)
        per_subgraph[str(graph.get("name"))] = by_definition[definition]

    target, platforms, generation = CODENAMES.get(codename or "", (None, [], None))
    if codename and generation is None:
        warnings.append(f"unknown target codename {codename!r}")
    report = NeffReport(
        path=str(path),
        file_size=size,
        header=header,
        payload=cast(Any, kind),  # the reader yields only the Literal's values
        hash_algorithm=cast(Any, algorithm),
        hash_ok=hash_ok,
        hash_order=cast(Any, hash_order),
        hash_note=hash_note,
        compiler_version=_str(info.get("tool_version")),
        kelp_version=_str(info.get("kelp_version")),
        codename=codename,
        target=target,
        platforms=platforms,
        neuron_core=f"NeuronCore-v{generation}" if generation else None,
        lnc_size=header.lnc_size,
        subgraphs=list(per_subgraph),
        feature_bits=decode_feature_bits(header.feature_bits),
        activation_sets={name: sg.activation_sets for name, sg in per_subgraph.items()},
        io=_io_tensors(documents.get("neff.json"), documents, graphs),
        per_subgraph=per_subgraph,
        hlo_stats={k: v for k, v in documents.get("hlo_stats.json").items() if isinstance(v, (int, float))},
        members=members,
        unpacked_bytes=unpacked,
        warnings=warnings,
    )
    if device:
        report.device_check = check_device(report, device)
    return report


class _Documents:
    """Parsed JSON members; a member that is missing or not a JSON object reads as {} (with a warning if broken)."""

    def __init__(self, raw: dict[str, bytes], warnings: list[str]) -> None:
        self._raw, self._warnings = raw, warnings
        self._parsed: dict[str, Any] = {}

    def get(self, name: str, keep: bool = True) -> dict[str, Any]:
        """The member parsed. `keep=False` for the big per-subgraph members read once (def.json, an engine's
        json): parsed JSON takes about ten times its text, so at most a definition and one engine's json are
        held at a time."""
        name = posixpath.normpath(name)
        if name in self._parsed:
            return self._parsed[name]
        value: Any = {}
        if name in self._raw:
            try:
                value = json.loads(self._raw[name])
            except (ValueError, RecursionError):  # RecursionError: hostile nesting
                self._warnings.append(f"member {name!r} is not valid JSON")
        document = value if isinstance(value, dict) else {}
        if keep:
            self._parsed[name] = document
        return document


def _definition(graph: dict[str, Any]) -> str:
    return _str(graph.get("definition")) or f"{graph.get('name')}/def.json"


def _subgraph(graph: dict[str, Any], documents: _Documents, sizes: dict[str, int]) -> SubgraphFacts:
    definition = _definition(graph)
    folder = posixpath.dirname(definition)
    spec = documents.get(definition, keep=False)
    facts = SubgraphFacts(
        definition=definition,
        neff_features=[str(f) for f in _list(spec.get("neff_features"))],
        runtime_semaphores=_int(spec.get("runtime_semaphore_count")),
        runtime_events=_int(spec.get("runtime_event_count")),
        rank_world_size=_int(spec.get("#rank_world_size")),
    )
    for name, queue in _dict(spec.get("dma_queue")).items():
        queue = _dict(queue)
        facts.dma_queues[name] = DmaQueue(
            type=_str(queue.get("type")),
            owner=_str(queue.get("owner")),
            num_queues=_int(queue.get("num_queues")),
            semaphores=len(_list(queue.get("semaphore_set"))),
            dge=queue.get("type") == "dynamic" or "dynamic_dma" in queue,
        )
    for name, var in _dict(spec.get("var")).items():
        var = _dict(var)
        group = facts.variables.setdefault(str(var.get("type", "unknown")), VariableGroup(count=0, total_bytes=0))
        group.count += 1
        group.total_bytes += _int(var.get("size")) or 0
        facts.spill_variables += "Spill" in name
    # Engines are the def.json keys <key> -> "<Engine>.json" that come with a <key>_instr stream.
    for key, engine_json in spec.items():
        if not (isinstance(engine_json, str) and engine_json.endswith(".json") and f"{key}_instr" in spec):
            continue
        engine = documents.get(posixpath.join(folder, engine_json), keep=False)
        instr = _str(spec.get(f"{key}_instr"))
        stream_bytes = sizes.get(posixpath.normpath(posixpath.join(folder, instr))) if instr else None
        facts.engines[engine_json[: -len(".json")]] = EngineStream(
            instr_file=instr,
            bytes=stream_bytes,
            records_64b=stream_bytes // 64 if stream_bytes is not None else None,
            dma_descriptors=len(_list(engine.get("dma"))),
        )
        facts.activation_sets += [str(s) for s in _list(engine.get("activation_function_sets"))]
        if engine.get("act_semaphore") is not None:
            facts.activation_semaphore = _int(engine.get("act_semaphore"))
    return facts


def _io_tensors(graph: dict[str, Any], documents: _Documents, graphs: list[dict[str, Any]]) -> list[IoTensor]:
    """Inputs and outputs: names, dtypes and shapes from neff.json signatures, sizes from the first def.json."""
    tensors: dict[tuple[str, str], IoTensor] = {}
    for signature in _dict(_dict(graph.get("metadata")).get("signatures")).values():
        for direction in ("input", "output"):
            for name, spec in _dict(_dict(signature).get(f"{direction}s")).items():
                spec = _dict(spec)
                shape = spec.get("shape")
                tensors[(direction, name)] = IoTensor(
                    name=name,
                    direction=direction,
                    dtype=_str(spec.get("dtype")),
                    shape=[int(d) for d in shape] if isinstance(shape, list) and all(isinstance(d, int) for d in shape) else None,
                )
    if graphs:
        definition = _str(graphs[0].get("definition")) or ""
        for name, var in _dict(documents.get(definition).get("var")).items():
            var = _dict(var)
            if var.get("type") in ("input", "output"):
                tensor = tensors.setdefault((var["type"], name), IoTensor(name=name, direction=var["type"]))
                tensor.bytes = _int(var.get("size"))
    return list(tensors.values())


def device_generation(device: str) -> int:
    """NeuronCore generation of a device or instance type (trn1, inf2, trn2, trn1.32xlarge, ...)."""
    match = DEVICE_PATTERN.fullmatch(device.strip().lower())
    if not match:
        raise InputError(
            f"unknown device {device!r}: expected inf1, inf2, trn1, trn1n, trn2, trn3 or an instance type like trn1.2xlarge"
        )
    return DEVICE_GENERATIONS[match.group(1)]


def check_device(report: NeffReport, device: str) -> DeviceCheck:
    """Can a device of this generation run the NEFF? Flags a NEFF built for a newer NeuronCore (seed 002)."""
    device_gen = device_generation(device)
    neff_gen = CODENAMES[report.codename][2] if report.codename in CODENAMES else None
    basis = f"target {report.codename}"
    if neff_gen is None and report.lnc_size > 1:  # LNC>1 exists only from NeuronCore-v3 on
        neff_gen, basis = 3, f"lnc_size {report.lnc_size}"
    check = DeviceCheck(device=device, device_core=f"NeuronCore-v{device_gen}", note="")
    if neff_gen is None:
        check.note = "the NEFF does not say which NeuronCore it was built for"
        return check
    check.neff_core = f"NeuronCore-v{neff_gen}"
    check.newer_than_device = neff_gen > device_gen
    if neff_gen > device_gen:
        check.note = (
            f"built for {check.neff_core} ({basis}) but {device} has {check.device_core}: "
            "its runtime will refuse instructions it does not know; recompile for the device's target"
        )
    elif neff_gen < device_gen:
        check.note = f"built for an older NeuronCore ({check.neff_core}); recompile for {device}"
    else:
        check.note = f"built for {check.neff_core}, the same generation as {device}"
    return check


def neff_facts(report: NeffReport) -> dict[str, object]:
    """Flat facts for hypothesis evidence rules (keys documented in docs/artifacts.md)."""
    facts: dict[str, object] = {
        "neff.compiler_version": report.compiler_version,
        "neff.codename": report.codename,
        "neff.target": report.target,
        "neff.neuron_core": report.neuron_core,
        "neff.lnc_size": report.lnc_size,
        "neff.subgraphs": len(report.subgraphs),
        "neff.hash_ok": report.hash_ok,
        "neff.feature_bits": report.header.feature_bits,
        "neff.features": [bit.name for bit in report.feature_bits.decoded],
        "neff.activation_sets_max": max((len(s) for s in report.activation_sets.values()), default=0),
        "neff.spill_variables": sum(sg.spill_variables for sg in report.per_subgraph.values()),
    }
    if report.device_check:
        facts["neff.device"] = report.device_check.device
        if report.device_check.newer_than_device is not None:
            facts["neff.newer_than_device"] = report.device_check.newer_than_device
    return {key: value for key, value in facts.items() if value is not None}


def diff_neffs(a: Path | str, b: Path | str) -> NeffDiff:
    """What changed between two NEFFs: compiler, target, features, subgraphs, tables, sizes."""
    diff = NeffDiff(a=str(a), b=str(b))
    _diff(_comparable(read_neff(a)), _comparable(read_neff(b)), "", diff.changes)
    return diff


# Per-file identity, or a second spelling of a compared value: never a change worth showing.
_NOT_COMPARED = {"path", "warnings", "extracted_to", "device_check", "hash_note", "feature_bits"}
_NOT_COMPARED_HEADER = {"uuid", "hash", "feature_bits", "lnc_size"}


def _comparable(report: NeffReport) -> dict[str, Any]:
    dump = report.model_dump(mode="json", exclude=_NOT_COMPARED)
    dump["header"] = {k: v for k, v in dump["header"].items() if k not in _NOT_COMPARED_HEADER}
    dump["feature_bits"] = report.feature_bits.value
    dump["features"] = [bit.name for bit in report.feature_bits.decoded]
    # I/O tensors are keyed by name, so a reordering is not a change.
    dump["io"] = {t.pop("name"): t for t in dump["io"]}
    # activation_sets.<sg> already reports these; comparing them again per subgraph would show each change twice.
    for subgraph in dump["per_subgraph"].values():
        subgraph.pop("activation_sets", None)
    return dump


def _diff(a: Any, b: Any, key: str, changes: list[NeffChange]) -> None:
    """Walk both dumps; a table present on one side only is one change, not one per field."""
    if isinstance(a, dict) and isinstance(b, dict):
        for name in dict.fromkeys([*a, *b]):
            _diff(a.get(name), b.get(name), f"{key}.{name}" if key else str(name), changes)
    elif a != b:
        changes.append(NeffChange(key=key, a=a, b=b))


# ---------------------------------------------------------------- tolerant JSON accessors (hostile input)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
