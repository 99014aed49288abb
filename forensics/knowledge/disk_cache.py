"""Results that are slow to compute and rarely change, cached on disk between runs.

Validating the catalogue's signature files compiles hundreds of regular expressions (about a second), and scanning
every installed distribution for signature-pack entry points takes a few hundred milliseconds; a process
that starts for one `explain` cannot afford either each time. Each result is keyed by the nforensics
version and a stamp of its inputs (file names, sizes, mtimes), so any change recomputes it. Like lark's
parser cache it is an optimisation only: an unreadable or unwritable cache is ignored.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from forensics import __version__

T = TypeVar("T")


def cache_dir() -> Path:
    explicit = os.environ.get("NFORENSICS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nforensics"


def stamp(paths: Iterable[Path]) -> list[str]:
    """What identifies the state of these files or folders: name, size and mtime (missing ones too)."""
    parts = []
    for path in paths:
        try:
            info = path.stat()
            parts.append(f"{path.resolve()}:{info.st_size}:{info.st_mtime_ns}")
        except OSError:
            parts.append(f"{path}:missing")
    return parts


def remember(kind: str, inputs: list[str], compute: Callable[[], T]) -> T:
    """`compute()`, or its earlier result when `inputs` (a stamp) are unchanged."""
    key = hashlib.sha256("\0".join([__version__, kind, *inputs]).encode()).hexdigest()[:24]
    target = cache_dir() / f"{kind}-{key}.pickle"
    try:
        with target.open("rb") as handle:
            return pickle.load(handle)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        pass
    result = compute()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=target.parent, delete=False) as handle:
            pickle.dump(result, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(handle.name, target)
    except (OSError, pickle.PicklingError):
        pass
    return result
