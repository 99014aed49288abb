"""The 1024-byte NEFF header: reading and checking it, the payload hash it stores, and its feature bits.

There is no magic number, so a file counts as a NEFF by its structure (docs/artifacts.md, "Recognising a
NEFF"): a header of the right size and package version, a payload no longer than the file, and a payload
that starts as gzip or tar.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from nforensics.artifacts.models import FeatureBit, FeatureBits, NeffHeader
from nforensics.errors import InputError


HEADER = struct.Struct("<QQQQQ128sI32s16s256sI64sQI468x")
HEADER_SIZE = HEADER.size  # 1024

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


def check_hash(header: NeffHeader, digest: Any) -> tuple[bool | None, str | None, str | None]:
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
