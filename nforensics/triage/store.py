"""The triage store: per-file results kept in SQLite, keyed by path, size and mtime, so a nightly run over a
growing folder analyses only the files that are new or changed.

A result is reused only when it was made by the same analyser: this nforensics version and the same
catalogue, grammars and code (a stamp of the package's files), so a change of recognition is never hidden
behind old results. Results are JSON (the FileResult model), never pickle.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

from nforensics import __version__
from nforensics.diagnose.fingerprint import FINGERPRINT_VERSION
from nforensics.errors import InputError
from nforensics.knowledge.disk_cache import private_dir, stamp
from nforensics.triage.runs import FileResult

STORE_FILE = "triage.sqlite"
_PACKAGE = Path(__file__).resolve().parents[1]
_ANALYSER_FILES = (".py", ".toml", ".lark", ".bin", ".jsonl")  # what decides a file's findings
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    analyser TEXT NOT NULL,
    result TEXT NOT NULL
)
"""


@cache
def analyser_stamp() -> str:
    """What made a result: nforensics version, fingerprint version, and a hash of the package's files
    (names, sizes, mtimes) and of the grammars beside it in a source checkout."""
    folders = [_PACKAGE, _PACKAGE.parent / "grammars"]
    files = sorted(p for folder in folders if folder.is_dir() for p in folder.rglob("*") if p.suffix in _ANALYSER_FILES)
    digest = hashlib.sha256("\n".join(stamp(files)).encode()).hexdigest()[:16]
    return f"{__version__}/{FINGERPRINT_VERSION}/{digest}"


def default_store_dir() -> Path | None:
    """The project's private cache folder (NFORENSICS_CACHE_DIR moves it); None when it cannot be had safely."""
    return private_dir()


class TriageStore:
    def __init__(self, folder: Path) -> None:
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._db = sqlite3.connect(folder / STORE_FILE)
            self._db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise InputError(f"--store {folder}: cannot open the triage store ({exc})") from None
        self._analyser = analyser_stamp()

    def close(self) -> None:
        self._db.close()

    def stamps(self) -> dict[str, tuple[int, int]]:
        """path -> (size, mtime_ns) of every result this analyser made."""
        rows = self._db.execute("SELECT path, size, mtime_ns FROM files WHERE analyser = ?", (self._analyser,))
        return {path: (size, mtime) for path, size, mtime in rows}

    def results(self, paths: set[str]) -> Iterator[FileResult]:
        """The stored results of these paths, streamed (a store of 100,000 files is not loaded at once)."""
        rows = self._db.execute("SELECT path, result FROM files WHERE analyser = ?", (self._analyser,))
        for path, result in rows:
            if path in paths:
                yield FileResult.model_validate_json(result)

    def save(self, results: Iterable[FileResult]) -> None:
        rows = [(r.path, r.size, r.mtime_ns, self._analyser, r.model_dump_json()) for r in results if r.size >= 0]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)", rows)
