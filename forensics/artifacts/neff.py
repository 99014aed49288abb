"""Read NEFF files (the Neuron executable format) and, only when asked, unpack them safely.

A NEFF is a 1024-byte little-endian header followed by a tar payload, gzip-compressed or plain. There is no
magic number, so a file counts as a NEFF by its structure (docs/artifacts.md, "Recognising a NEFF"). Reading
facts never writes to disk: the tar is streamed and only small JSON members are kept in memory.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import posixpath
import re
import shutil
import struct
import tarfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, Any, cast

from forensics.artifacts.models import (
    DeviceCheck,
    DmaQueue,
    EngineStream,
    FeatureBit,
    FeatureBits,
    IoTensor,
    NeffChange,
    NeffDiff,
    NeffHeader,
    NeffReport,
    SubgraphFacts,
    VariableGroup,
)
from forensics.errors import InputError

HEADER = struct.Struct("<QQQQQ128sI32s16s256sI64sQI468x")
HEADER_SIZE = HEADER.size  # 1024

# What a payload may declare before we call it a tar bomb. Real NEFFs hold tens to a few thousand members;
# the largest carry a few GB of constants.
MAX_MEMBERS = 100_000
MAX_UNPACKED_BYTES = 64 * 2**30
MAX_JSON_BYTES = 16 * 2**20
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

# header feature_bits -> (name, also a def.json `neff_features` string). Unofficial map (neuronx-cc 2.24).
FEATURE_BITS: dict[int, tuple[str, bool]] = {
    0x2: ("collective_has_offset", True),
    0x4: ("neff_feature_custom_ops", True),
    0x8: ("neff_coalesced_ccops", True),
    0x10: ("neff_queue_set_instances", True),
    0x20: ("neff_has_functions", True),
    0x40: ("neff_feature_dynamic_pwp", True),
    0x80: ("indirect_memcpy_32b_sem_wait", True),
    0x100: ("indirect_memcpy_bound_check", True),
    0x200: ("DMA_desc_higher_dim", True),
    0x400: ("neff_feature_vnc", True),
    0x800: ("DVE_perf_mode", False),
    0x1000: ("DGE", False),
    0x2000: ("POOL_RSQRT", False),
    0x4000: ("remote_sem", True),
    0x8000: ("DGE_cast", False),
    0x10000: ("vector_DGE", False),
    0x20000: ("embedding_stride32", False),
    0x100000: ("SQI_no_rearm", False),
    0x200000: ("hardware_DGE", False),
    0x400000: ("partial_sb2sb_ccop", False),
    0x1000000: ("arch_above_39", False),
    0x2000000: ("large_tensor_support", False),
}
NEWER_COMPILER_MASK = 0x7FFFFFFFF8000000  # bits the runtime reads as "NEFF from a newer compiler"


# ---------------------------------------------------------------- header, hash, payload stream


def read_header(path: Path) -> tuple[NeffHeader, int, str, list[str]]:
    """The decoded header, the file size, the payload kind and warnings; InputError when not a NEFF."""
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(HEADER_SIZE + 512)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if size < HEADER_SIZE:
        raise InputError(f"{path}: not a NEFF: {size} bytes is shorter than the {HEADER_SIZE}-byte header")
    (pkg, header_size, data_size, major, minor, build, num_tpb, stored_hash, uuid, name, requested, per_node,
     features, lnc) = HEADER.unpack(head[:HEADER_SIZE])
    if header_size != HEADER_SIZE or pkg not in (1, 2):
        raise InputError(f"{path}: not a NEFF: no 1024-byte header with pkg_version 1 or 2 at the start")
    available = size - HEADER_SIZE
    if data_size > available:
        raise InputError(
            f"{path}: truncated NEFF: the header declares {data_size} payload bytes but the file holds {available}"
        )
    warnings = [f"{available - data_size} bytes after the declared payload are ignored"] if data_size < available else []
    payload = head[HEADER_SIZE:]
    if payload[:2] == b"\x1f\x8b":
        kind = "gzip-tar"
    elif payload[257:262] == b"ustar":
        kind = "tar"
    else:
        raise InputError(f"{path}: not a NEFF: the payload at offset 1024 is neither gzip nor tar")
    tpb_per_node = list(per_node)
    while tpb_per_node and tpb_per_node[-1] == 0:
        tpb_per_node.pop()
    header = NeffHeader(
        pkg_version=pkg,
        header_size=header_size,
        data_size=data_size,
        neff_version=f"{major}.{minor}",
        build_version=_cstring(build),
        num_tpb=num_tpb,
        hash=stored_hash.hex(),
        uuid=uuid.hex(),
        name=_cstring(name),
        requested_tpb_count=requested,
        tpb_per_node=tpb_per_node,
        feature_bits=features,
        lnc_size=lnc,
    )
    return header, size, kind, warnings


def _cstring(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _member_file(tar: tarfile.TarFile, member: tarfile.TarInfo) -> IO[bytes]:
    """A regular member's content (extractfile returns None only for other kinds, checked before)."""
    handle = tar.extractfile(member)
    if handle is None:
        raise InputError(f"NEFF member {member.name!r} cannot be read as a file")
    return handle


def _check_hash(header: NeffHeader, digest: Any) -> tuple[bool | None, str | None, str | None]:
    """(ok, byte order, note) for the payload's digest. Producers store it plainly or with each 32-bit word reversed."""
    computed = digest.digest()
    stored = bytes.fromhex(header.hash)[: len(computed)]
    if not any(stored):
        return None, None, "no hash stored in the header"
    if stored == computed:
        return True, "digest", None
    if stored == b"".join(computed[i : i + 4][::-1] for i in range(0, len(computed), 4)):
        return True, "word-swapped", None
    note = (
        f"hash mismatch: the stored hash is neither the {digest.name.upper()} of the payload nor its word-swapped form "
        "(the runtime checks it only with load verification on; this alone does not make the file unusable)"
    )
    return False, None, note


class _Window(io.RawIOBase):
    """The declared payload of an open NEFF: reads stop at data_size, so trailing bytes never reach tarfile.
    Every byte read also feeds the digest, if one is given, so hashing needs no second pass over the file."""

    def __init__(self, f: Any, length: int, digest: Any = None) -> None:
        self._f, self._left, self._digest = f, length, digest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._f.read(min(len(buffer), self._left))
        buffer[: len(data)] = data
        self._left -= len(data)
        if self._digest is not None:
            self._digest.update(data)
        return len(data)

    def drain(self) -> None:
        """Read to the end of the window: tarfile stops at its end-of-archive blocks, the digest covers all of it."""
        buffer = bytearray(1 << 20)
        while self.readinto(buffer):
            pass


@contextmanager
def _payload(
    path: Path, header: NeffHeader, kind: str, digest: Any = None
) -> Iterator[tuple[tarfile.TarFile, Iterator[tarfile.TarInfo]]]:
    """Stream the tar payload; the member iterator enforces the bomb limits before a member is used.
    With a digest, the whole declared payload has been fed to it once the block ends."""
    with path.open("rb") as f:
        f.seek(HEADER_SIZE)
        window = _Window(f, header.data_size, digest)
        stream = io.BufferedReader(window, buffer_size=1 << 20)
        try:
            with tarfile.open(fileobj=stream, mode="r|gz" if kind == "gzip-tar" else "r|") as tar:
                yield tar, _bounded(path, tar)
        except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            raise InputError(f"{path}: the NEFF payload is not a readable tar archive ({exc})") from None
        if digest is not None:
            window.drain()


def _bounded(path: Path, tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    count = total = 0
    for member in tar:
        count += 1
        total += max(member.size, 0)
        if count > MAX_MEMBERS:
            raise InputError(f"{path}: refusing the payload: more than {MAX_MEMBERS} tar members (a tar bomb?)")
        if total > MAX_UNPACKED_BYTES:
            raise InputError(
                f"{path}: refusing the payload: its members declare more than {MAX_UNPACKED_BYTES} bytes (a tar bomb?)"
            )
        yield member


def unsafe_reason(member: tarfile.TarInfo) -> str | None:
    """Why writing this member could escape the target folder or create something other than files, or None."""
    name = member.name
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name):
        return "has an absolute path"
    if ".." in PurePosixPath(name).parts:
        return "climbs out of the folder with '..'"
    if member.ischr() or member.isblk() or member.isfifo():
        return "is a device file or FIFO"
    if member.issym() or member.islnk():
        link = member.linkname
        base = posixpath.dirname(name) if member.issym() else ""
        resolved = posixpath.normpath(posixpath.join(base, link))
        if link.startswith("/") or resolved == ".." or resolved.startswith("../"):
            return f"is a link pointing outside the folder ({link})"
        return None
    if not (member.isfile() or member.isdir()):
        return "has an unsupported tar member type"
    return None


# ---------------------------------------------------------------- facts


def read_neff(path: Path | str, device: str | None = None) -> NeffReport:
    """Every fact a NEFF file gives away without running it. Raises InputError when it is not a readable NEFF."""
    path = Path(path)
    header, size, kind, warnings = read_header(path)
    algorithm = "md5" if header.pkg_version == 2 else "sha256"
    digest = hashlib.new(algorithm)
    sizes: dict[str, int] = {}
    raw_json: dict[str, bytes] = {}
    members = unpacked = 0
    with _payload(path, header, kind, digest) as (tar, stream):
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
                if member.size <= MAX_JSON_BYTES:
                    raw_json[name] = _member_file(tar, member).read()
    hash_ok, hash_order, hash_note = _check_hash(header, digest)
    documents = _Documents(raw_json, warnings)

    info = documents.get("info.json")
    # kelf-0.json names the subgraphs and the target; old multi-core NEFFs have kelf-a.json, kelf-b.json.
    kelfs = [documents.get(name) for name in sorted(raw_json) if re.fullmatch(r"kelf-[^/]*\.json", name)]
    graphs = [g for kelf in kelfs for g in _list(kelf.get("graphs")) if isinstance(g, dict)]
    codename = next((str(kelf["target"]) for kelf in kelfs if kelf.get("target")), None)
    if not graphs:  # no kelf file: fall back to the folders that hold a def.json
        graphs = [{"name": n.split("/")[0], "definition": n} for n in sorted(sizes) if n.endswith("/def.json")]
    per_subgraph = {str(g.get("name")): _subgraph(g, documents, sizes) for g in graphs}

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

    def get(self, name: str) -> dict[str, Any]:
        name = posixpath.normpath(name)
        if name not in self._parsed:
            value: Any = {}
            if name in self._raw:
                try:
                    value = json.loads(self._raw[name])
                except (ValueError, RecursionError):  # RecursionError: hostile nesting
                    self._warnings.append(f"member {name!r} is not valid JSON")
            self._parsed[name] = value if isinstance(value, dict) else {}
        return self._parsed[name]


def _subgraph(graph: dict[str, Any], documents: _Documents, sizes: dict[str, int]) -> SubgraphFacts:
    definition = _str(graph.get("definition")) or f"{graph.get('name')}/def.json"
    folder = posixpath.dirname(definition)
    spec = documents.get(definition)
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
        engine = documents.get(posixpath.join(folder, engine_json))
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


def decode_feature_bits(value: int) -> FeatureBits:
    decoded, unknown = [], []
    for bit in range(64):
        mask = 1 << bit
        if value & mask:
            if mask in FEATURE_BITS:
                name, named = FEATURE_BITS[mask]
                decoded.append(FeatureBit(bit=hex(mask), name=name, named=named))
            else:
                unknown.append(hex(mask))
    return FeatureBits(
        value=hex(value), decoded=decoded, unknown_bits=unknown, newer_compiler_bits=bool(value & NEWER_COMPILER_MASK)
    )


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


# ---------------------------------------------------------------- extraction


def extract_neff(path: Path | str, dest: Path | str) -> Path:
    """Unpack the payload into dest (absent or empty). Every member is checked before anything is written."""
    path, dest = Path(path), Path(dest)
    header, _, kind, _ = read_header(path)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(f"{dest}: refusing to extract into a folder that is not empty")
    with _payload(path, header, kind) as (_, stream):
        for member in stream:
            reason = unsafe_reason(member)
            if reason:
                raise InputError(f"{path}: refusing to extract: member {member.name!r} {reason}")
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{dest}: cannot create the folder ({exc.strerror or exc})") from None
    root = dest.resolve()
    with _payload(path, header, kind) as (tar, stream):
        for member in stream:
            try:
                _write_member(tar, member, root)
            except OSError as exc:
                raise InputError(f"{dest}: cannot write member {member.name!r} ({exc.strerror or exc})") from None
    return root


def _write_member(tar: tarfile.TarFile, member: tarfile.TarInfo, root: Path) -> None:
    parts = [p for p in PurePosixPath(member.name).parts if p not in ("", ".")]
    if not parts:
        return
    target = root.joinpath(*parts)
    if member.isdir():
        target.mkdir(parents=True, exist_ok=True)
        _inside(root, target)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    _inside(root, target.parent)  # a parent reached through an in-folder symlink must still resolve inside
    if member.issym():
        os.symlink(member.linkname, target)
    elif member.islnk():
        source = root.joinpath(*PurePosixPath(posixpath.normpath(member.linkname)).parts)
        _inside(root, source)
        os.link(source, target)
    else:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "wb") as out, _member_file(tar, member) as source_file:
            shutil.copyfileobj(source_file, out, 1 << 20)


def _inside(root: Path, path: Path) -> None:
    real = Path(os.path.realpath(path))
    if real != root and root not in real.parents:
        raise InputError(f"refusing to extract: {path} resolves outside {root}")


# ---------------------------------------------------------------- tolerant JSON accessors (hostile input)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
