"""The experiment journal: SQLite (stdlib), one row per finished run, committed as each run finishes.

WAL mode with synchronous=NORMAL survives the orchestrator being killed (kill -9, Ctrl-C): a committed
run is never lost, and `--resume` reuses it instead of running it again. A session is one invocation of
a strategy with one plan; resuming continues the latest session with the same plan.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import cast

from nforensics.errors import InputError, install_extra
from nforensics.experiments.runner import Outcome

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    strategy TEXT NOT NULL,
    expect TEXT NOT NULL,
    plan TEXT NOT NULL,
    started REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions(id),
    key TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    knobs TEXT NOT NULL,
    argv TEXT NOT NULL,
    env TEXT NOT NULL,
    unset_env TEXT NOT NULL,
    verdict TEXT NOT NULL,
    code TEXT,
    exit_code INTEGER,
    seconds REAL NOT NULL,
    note TEXT NOT NULL,
    stdout TEXT NOT NULL,
    stderr TEXT NOT NULL,
    finished REAL NOT NULL,
    UNIQUE (session, key, attempt)
);
"""

_COLUMNS = ("id", "session", "key", "attempt", "knobs", "argv", "env", "unset_env", "verdict", "code",
            "exit_code", "seconds", "note", "stdout", "stderr", "finished")  # fmt: skip
_JSON_COLUMNS = ("knobs", "argv", "env", "unset_env")


@dataclass(frozen=True)
class RunRecord(Outcome):
    """One finished run as stored: its outcome plus where it belongs and what was run."""

    id: int
    session: int
    key: str
    attempt: int
    knobs: dict[str, str]
    argv: list[str]
    env: dict[str, str]
    unset_env: list[str]
    finished: float

    @classmethod
    def from_row(cls, row: tuple) -> "RunRecord":
        values = dict(zip(_COLUMNS, row, strict=True))
        for name in _JSON_COLUMNS:
            values[name] = json.loads(values[name])
        return cls(**values)

    def row(self) -> tuple:
        values = asdict(self)
        for name in _JSON_COLUMNS:
            values[name] = json.dumps(values[name])
        return tuple(values[c] for c in _COLUMNS)


class Journal:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=60)  # another orchestrator may be committing
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.DatabaseError) as exc:
            raise InputError(f"cannot use {self.path} as an experiment journal: {exc}") from None

    _lock: object = None  # the open lock file of the session this orchestrator runs

    def close(self) -> None:
        self._db.close()
        if self._lock is not None:
            self._lock.close()  # type: ignore[attr-defined]
            self._lock = None

    def _claim(self, session: int) -> None:
        """Run `session` alone: two `--resume` of one session at once would run every remaining variant
        twice and collide on the journal. An advisory lock (released by the OS however we end, kill -9
        included) makes the second one stop with a clear message instead."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no second-orchestrator check
            return
        lock = open(self.path.with_name(f"{self.path.name}.session-{session}.lock"), "a")  # noqa: SIM115
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            raise InputError(
                f"session {session} of {self.path} is being run by another nforensics right now:"
                " wait for it to finish, then --resume again (or leave out --resume for a new session)"
            ) from None
        self._lock = lock

    def open_session(self, strategy: str, expect: str, plan: dict, resume: bool) -> int:
        """Start a session, or with `resume` continue the latest one with the same strategy and plan."""
        plan_text = json.dumps(plan, sort_keys=True)
        if resume:
            row = self._db.execute(
                "SELECT id FROM sessions WHERE strategy = ? AND expect = ? AND plan = ? ORDER BY id DESC LIMIT 1",
                (strategy, expect, plan_text),
            ).fetchone()
            if row:
                self._claim(row[0])
                return row[0]
        with self._db:
            cursor = self._db.execute(
                "INSERT INTO sessions (strategy, expect, plan, started) VALUES (?, ?, ?, ?)",
                (strategy, expect, plan_text, time.time()),
            )
        session = cast(int, cursor.lastrowid)  # set by the INSERT just made
        self._claim(session)
        return session

    def record(self, session: int, key: str, spec, outcome: Outcome) -> RunRecord:
        """Store one finished run (a runner.RunSpec and its Outcome) and commit at once."""
        v = spec.variant
        record = RunRecord(**asdict(outcome), id=0, session=session, key=key, attempt=spec.attempt,
                           knobs=dict(v.knobs), argv=list(v.argv), env=dict(v.env), unset_env=list(v.unset_env),
                           finished=time.time())  # fmt: skip
        values = record.row()[1:]
        with self._db:
            cursor = self._db.execute(
                f"INSERT OR IGNORE INTO runs ({', '.join(_COLUMNS[1:])}) VALUES ({', '.join('?' * len(values))})",
                values,
            )
        if cursor.rowcount == 0:  # someone recorded this run first (the lock above makes that rare): theirs stands
            row = self._db.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM runs WHERE session = ? AND key = ? AND attempt = ?",
                (session, key, spec.attempt),
            ).fetchone()
            return RunRecord.from_row(row)
        return replace(record, id=cast(int, cursor.lastrowid))

    def session_runs(self, session: int | None = None) -> list[RunRecord]:
        query = f"SELECT {', '.join(_COLUMNS)} FROM runs"
        rows = self._db.execute(query + " WHERE session = ? ORDER BY id", (session,)) if session is not None \
            else self._db.execute(query + " ORDER BY id")  # fmt: skip
        return [RunRecord.from_row(r) for r in rows]

    def sessions(self) -> list[tuple[int, str, str]]:
        return list(self._db.execute("SELECT id, strategy, expect FROM sessions ORDER BY id"))


def _existing(path: str | Path) -> Journal:
    if not Path(path).is_file():
        raise InputError(f"no experiment journal at {path}")
    return Journal(path)


def run_rows(path: str | Path, session: int | None = None) -> list[dict[str, object]]:
    """All runs (or one session's) as flat rows, one column per knob (`knob.NAME`), every row with every
    column (None where a run has no such knob)."""
    journal = _existing(path)
    try:
        records = journal.session_runs(session)
    finally:
        journal.close()
    knob_names = list(dict.fromkeys(k for r in records for k in r.knobs))
    rows: list[dict[str, object]] = []
    for r in records:
        row: dict[str, object] = {"session": r.session, "run": r.id, "attempt": r.attempt}
        row.update({f"knob.{k}": r.knobs.get(k) for k in knob_names})
        row.update(verdict=r.verdict, code=r.code, exit_code=r.exit_code, seconds=round(r.seconds, 3),
                   note=r.note, command=" ".join(r.argv), env=" ".join(f"{k}={v}" for k, v in r.env.items()),
                   key=r.key)  # fmt: skip
        rows.append(row)
    return rows


def check_export(csv: str | None, parquet: str | None) -> None:
    """Before the first run, not after the whole sweep: Parquet needs pyarrow (an extra), and each file's
    folder must exist."""
    import importlib.util

    if parquet and importlib.util.find_spec("pyarrow") is None:
        raise InputError(f"--parquet needs pyarrow, which is not installed: {install_extra('parquet')} (or use --csv)")
    for option, target in (("--csv", csv), ("--parquet", parquet)):
        if target and not Path(target).resolve().parent.is_dir():
            raise InputError(f"{option} {target}: folder {Path(target).parent} does not exist")


def export(path: str | Path, session: int | None, csv: str | None = None, parquet: str | None = None) -> None:
    """The session's runs as CSV (the stdlib's csv) and/or Parquet (pyarrow); no pandas needed."""
    rows = run_rows(path, session)
    columns = list(rows[0]) if rows else ["session", "run", "attempt", "verdict", "code", "exit_code", "seconds",
                                          "note", "command", "env", "key"]  # fmt: skip
    try:
        if csv:
            import csv as csv_module

            with open(csv, "w", newline="", encoding="utf-8") as f:
                writer = csv_module.DictWriter(f, fieldnames=columns)
                writer.writeheader()
                writer.writerows(rows)
        if parquet:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(rows) if rows else pa.table({c: [] for c in columns}), parquet)
    except OSError as exc:
        raise InputError(f"cannot write {exc.filename}: {exc.strerror}") from None


def sessions_of(path: str | Path) -> list[tuple[str, str, list]]:
    """Every session of a journal as (strategy, expectation, runs), for a bug report's Reproduction Steps
    (rendered by nforensics/render/experiments.py journal_markdown)."""
    journal = _existing(path)
    try:
        return [(strategy, expect, journal.session_runs(session)) for session, strategy, expect in journal.sessions()]
    finally:
        journal.close()
