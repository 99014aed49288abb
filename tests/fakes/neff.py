"""A synthetic NEFF as the compiler lays it out: a 1024-byte header (with the payload's hash) and a tar
payload of the JSON and binary members nforensics reads. Built in memory, so NEFF tests need no ../shared."""

from __future__ import annotations

import hashlib
import io
import json
import struct
import tarfile
from pathlib import Path


def definition(subgraph: str = "sg00") -> dict:
    return {
        "act": "Activation.json", "act_instr": "Activation.bin", "pe": "PE.json", "pe_instr": "PE.bin",
        "neff_features": ["neff_feature_vnc"], "runtime_semaphore_count": 3, "runtime_event_count": 12,
        "dma_queue": {
            "qPoolDynamic": {"type": "dynamic", "owner": "pool", "num_queues": 16, "semaphore_set": list(range(16))},
            "qIn": {"type": "in", "owner": "sp", "num_queues": 2, "semaphore_set": [1, 2]},
        },
        "var": {
            "x": {"type": "input", "size": 65536}, "out": {"type": "output", "size": 32768},
            "-t1_i0_RematSpillSave0_sg0000": {"type": "virtual", "size": 512},
            "-t1_i1_RematSpillSave1_sg0000": {"type": "virtual", "size": 512},
        },
    }


def standard_members(codename: str = "cayman", version: str = "2.99.1.0+abcdef12", subgraphs=("sg00", "sg01"),
                     activation_sets=("exp_and_others", "gelu_and_others")) -> dict[str, bytes]:
    members = {
        "neff.json": json.dumps({"metadata": {"signatures": {"default": {
            "inputs": {"x": {"id": 0, "dtype": "float16", "shape": [128, 256]}}, "outputs": {}}}}}).encode(),
        "kelf-0.json": json.dumps({"graphs": [{"name": s, "definition": f"{s}/def.json"} for s in subgraphs],
                                   "version": "0.5", "target": codename}).encode(),
        "info.json": json.dumps({"tool_version": version, "kelp_version": "Dynamic"}).encode(),
        "hlo_stats.json": json.dumps({"HloMacCount": 4194304, "Traffic": 262144}).encode(),
    }
    for s in subgraphs:
        members[f"{s}/def.json"] = json.dumps(definition(s)).encode()
        members[f"{s}/Activation.json"] = json.dumps(
            {"activation_function_sets": list(activation_sets), "act_semaphore": 12, "dma": [{"id": 1}]}).encode()
        members[f"{s}/PE.json"] = json.dumps({"dma": [], "instr": "PE.bin"}).encode()
        members[f"{s}/Activation.bin"] = bytes(64 * 5)
        members[f"{s}/PE.bin"] = bytes(64 * 12)
    return members


def tar_payload(members: dict[str, bytes], extra: list[tarfile.TarInfo] = (), gzip: bool = True) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gzip else "w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info in extra:
            tar.addfile(info, io.BytesIO(bytes(info.size)) if info.isfile() else None)
    return buffer.getvalue()


def neff_bytes(payload: bytes, *, pkg_version: int = 2, feature_bits: int = 0x209C00, lnc_size: int = 2,
               hash_order: str = "word-swapped", data_size: int | None = None, trailing: bytes = b"") -> bytes:
    digest = (hashlib.md5 if pkg_version == 2 else hashlib.sha256)(payload).digest()
    if hash_order == "word-swapped":
        digest = b"".join(digest[i:i + 4][::-1] for i in range(0, len(digest), 4))
    elif hash_order == "wrong":
        digest = bytes(16) + b"\x01" * (len(digest) - 16) if len(digest) > 16 else b"\x01" * 16
    header = struct.pack(
        "<QQQQQ128sI32s16s256sI64sQI468x", pkg_version, 1024, len(payload) if data_size is None else data_size,
        2, 0, b"", 1, digest.ljust(32, b"\0"), bytes(range(16)), b"file.neff", 1, bytes([1] + [0] * 63),
        feature_bits, lnc_size,
    )
    return header + payload + trailing


def write_neff(folder: Path, name: str = "model.neff", members: dict[str, bytes] | None = None, **options) -> Path:
    gzip = options.pop("gzip", True)
    extra = options.pop("extra", [])
    path = folder / name
    path.write_bytes(neff_bytes(tar_payload(standard_members() if members is None else members, extra, gzip), **options))
    return path
