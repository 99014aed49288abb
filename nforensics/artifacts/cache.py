"""Read the persistent Neuron compile cache: one entry per compiled graph, read-only.

Layout: <root>/neuronxcc-<compiler version>[+<build>]/MODULE_<graph hash>+<flags hash>/ holding
compile_flags.json, model.hlo_module.pb, model.neff, model.done, and model.log after a failure.
The state rules are inferred from public logs (docs/artifacts.md, "Compile cache").
"""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from collections import Counter
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from nforensics.artifacts.models import CacheEntry, CacheReport, CacheState
from nforensics.artifacts.neff_header import HEADER_SIZE, read_header
from nforensics.errors import InputError

DEFAULT_CACHE = Path("/var/tmp/neuron-compile-cache")
VERSION_DIR = re.compile(r"neuronxcc-(?P<version>\d+\.\d+\.\d+\.\d+)(?:\+(?P<build>[0-9a-f]+))?")
MODULE_DIR = re.compile(r"MODULE_(?P<graph>\d+|[0-9a-f]{20})\+(?P<flags>[0-9a-f]{8})")
HLO_FILES = ("model.hlo_module.pb", "model.hlo.pb")
# A failed entry's first line that says what went wrong.
ERROR_LINE = re.compile(r"\b(?:ERROR|Error|error|NCC_[A-Z]{4}\d{3}|Failed compilation|Assertion)\b")
MAX_LOG_BYTES = 4 * 2**20


def cache_root(directory: Path | str | None, env: Mapping[str, str] = os.environ) -> tuple[Path, str]:
    """The cache folder and where it came from. The wrapper's --cache_dir flag wins over the environment variable."""
    if directory:
        return Path(directory), "argument"
    try:
        flags = shlex.split(env.get("NEURON_CC_FLAGS", ""))
    except ValueError:
        flags = []
    for index, flag in enumerate(flags):
        if flag.startswith("--cache_dir=") or (flag == "--cache_dir" and index + 1 < len(flags)):
            url = flag.split("=", 1)[1] if "=" in flag else flags[index + 1]
            return _local(url, "NEURON_CC_FLAGS --cache_dir"), "NEURON_CC_FLAGS --cache_dir"
    if env.get("NEURON_COMPILE_CACHE_URL"):
        return _local(env["NEURON_COMPILE_CACHE_URL"], "NEURON_COMPILE_CACHE_URL"), "NEURON_COMPILE_CACHE_URL"
    return DEFAULT_CACHE, "default"


def _local(url: str, source: str) -> Path:
    if "://" in url and not url.startswith("file://"):
        raise InputError(f"{source} points to a remote cache ({url}); copy it locally and run: nforensics cache DIR")
    return Path(url.removeprefix("file://"))


def scan_cache(root: Path | str, *, root_from: str = "argument", failed_only: bool = False,
               now: float | None = None) -> CacheReport:
    """Every entry under root (read-only). Folders that match neither naming pattern are listed as ignored."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"{root}: no compile cache here (not a folder)")
    report = CacheReport(root=str(root), root_from=root_from)
    now = time.time() if now is None else now
    for version_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        version = VERSION_DIR.fullmatch(version_dir.name)
        if not version:
            report.ignored.append(version_dir.name)
            continue
        for module_dir in sorted(p for p in version_dir.iterdir() if p.is_dir()):
            module = MODULE_DIR.fullmatch(module_dir.name)
            if not module:
                report.ignored.append(f"{version_dir.name}/{module_dir.name}")
                continue
            entry = _entry(module_dir, version, module, now)
            if not failed_only or entry.state == "failed":
                report.entries.append(entry)
    report.counts = dict(Counter(e.state for e in report.entries))
    report.total_bytes = sum(e.size_bytes for e in report.entries)
    return report


def _entry(folder: Path, version: re.Match[str], module: re.Match[str], now: float) -> CacheEntry:
    stats = {p.name: p.stat() for p in folder.iterdir() if p.is_file()}
    files = {name: st.st_size for name, st in stats.items()}
    newest = max((st.st_mtime for st in stats.values()), default=folder.stat().st_mtime)
    neff = folder / "model.neff" if files.get("model.neff") else None
    log = folder / "model.log" if "model.log" in files else None
    entry = CacheEntry(
        path=str(folder),
        compiler_version=version["version"],
        compiler_build=version["build"],
        module=folder.name,
        graph_hash=module["graph"],
        flags_hash=module["flags"],
        flags=_flags(folder / "compile_flags.json") if "compile_flags.json" in files else None,
        state=_state(files),
        files=files,
        size_bytes=sum(files.values()),
        modified=datetime.fromtimestamp(newest, timezone.utc).isoformat(timespec="seconds"),
        age_seconds=max(0, int(now - newest)),
        neff=str(neff) if neff else None,
        hlo=next((str(folder / h) for h in HLO_FILES if h in files), None),
        log=str(log) if log else None,
    )
    if entry.state == "failed" and log:
        entry.error = _first_error(log)
    if neff and files["model.neff"] >= HEADER_SIZE:
        try:
            header = read_header(neff)[0]
            entry.neff_lnc_size, entry.neff_feature_bits = header.lnc_size, hex(header.feature_bits)
        except InputError:
            pass  # a failed or partial entry may hold a placeholder; the state already says so
    return entry


def _state(files: dict[str, int]) -> CacheState:
    """done: model.done and a non-empty model.neff; failed: model.log without model.done; else incomplete."""
    if "model.done" in files and files.get("model.neff"):
        return "done"
    if "model.log" in files and "model.done" not in files:
        return "failed"
    return "incomplete"


def _flags(path: Path) -> list[str] | None:
    """compile_flags.json is undocumented: a JSON list of flags, or one command-line string."""
    try:
        value = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError:
            return value.split()
    if isinstance(value, list):
        return [str(v) for v in value]
    return None


def _first_error(log: Path) -> str | None:
    with log.open("rb") as f:
        text = f.read(MAX_LOG_BYTES).decode("utf-8", "replace")
    line = next((line for line in text.splitlines() if ERROR_LINE.search(line)), None)
    return line.strip()[:300] if line else None
