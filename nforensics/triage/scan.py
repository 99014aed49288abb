"""Which files to read, which of them the store already knows, and the analysis of the rest on every core.

Only small FileResults travel back from the workers (a process pool here, Ray tasks with --backend ray:
ray_scan.py), and they are handed on as they arrive, so the parent holds results, never logs. Only the
parent reads and writes the store, so a run is incremental the same way on either backend.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path

from nforensics.batch import default_jobs, input_files
from nforensics.errors import InputError
from nforensics.triage.runs import FileResult, analyse_file
from nforensics.triage.store import TriageStore

CHUNK = 16  # files per task: a small log takes ~20 ms to analyse, a task's round trip well under 1 ms
_SAVE_EVERY = 500  # results written to the store per transaction


@dataclass
class ScanStats:
    files: int = 0
    analysed: int = 0  # analysed in this run
    reused: int = 0  # taken from the store unchanged
    skipped: dict[str, str] = field(default_factory=dict)  # path -> why it could not be read (one line)


def triage_files(specs: Sequence[str], pattern: str = "*") -> tuple[list[str], set[str]]:
    """Every file to read (absolute paths, in order, once) and those named on the command line. A path
    that does not exist, standard input or a folder with no files is an input error, found before any work."""
    if "-" in specs:
        raise InputError("triage reads files and folders, not standard input: save the log to a file first")
    missing = [spec for spec in specs if not Path(spec).exists()]
    if missing:
        raise InputError(f"{missing[0]}: no such file or folder")
    found = {str(Path(spec).resolve()): named for spec, named in input_files(specs, pattern)}
    return list(found), {path for path, named in found.items() if named}


def analyse_chunk(task: tuple[list[str], bool]) -> list[FileResult]:
    """One task of either backend: a chunk of files in, their results out."""
    paths, redact = task
    return [analyse_file(path, redact) for path in paths]


def chunks(paths: list[str], redact: bool) -> Iterator[tuple[list[str], bool]]:
    iterator = iter(paths)
    while chunk := list(islice(iterator, CHUNK)):
        yield chunk, redact


def local_map(paths: list[str], redact: bool, *, jobs: int) -> Iterator[FileResult]:
    """The files analysed in this process (jobs=1) or over a pool of `jobs` processes, in input order."""
    if jobs <= 1 or len(paths) <= CHUNK:
        yield from (analyse_file(path, redact) for path in paths)
        return
    from nforensics.knowledge import load_kb

    load_kb()  # loaded once here, so forked workers start with the catalogue instead of each reading it
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for results in pool.map(analyse_chunk, chunks(paths, redact)):
            yield from results


Mapper = Callable[[list[str], bool], Iterator[FileResult]]  # (paths, redact) -> their results in input order


@contextmanager
def analysers(backend: str, address: str | None, jobs: int | None) -> Iterator[tuple[Mapper, str | None]]:
    """Where files are analysed, and for a cluster a line saying what it found there: a local process pool
    of `jobs` (default: the cores), or Ray tasks (at most `jobs` at a time), the cluster joined or started
    here and left or stopped on the way out."""
    if backend != "ray":
        yield partial(local_map, jobs=jobs or default_jobs()), None
        return
    from nforensics.triage.ray_scan import RayAnalysis

    cluster = RayAnalysis(address, jobs)
    try:
        yield cluster, cluster.why
    finally:
        cluster.close()


def scan(paths: list[str], *, store: TriageStore | None, mapper: Mapper,
         redact: bool = True) -> tuple[Iterator[FileResult], ScanStats]:
    """Every file's result: the store's where path, size and mtime are unchanged, else analysed now (and
    stored). Results stream; `stats` is complete once the iterator is exhausted."""
    stats = ScanStats(files=len(paths))
    known = store.stamps() if store else {}
    unchanged, todo = set(), []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            todo.append(path)  # analyse_file says why it cannot be read
            continue
        if known.get(path) == (info.st_size, info.st_mtime_ns):
            unchanged.add(path)
        else:
            todo.append(path)

    def results() -> Iterator[FileResult]:
        if store and unchanged:
            for result in store.results(unchanged):
                stats.reused += 1
                yield _noted(result, stats)
        pending: list[FileResult] = []
        for result in mapper(todo, redact):
            stats.analysed += 1
            if store:
                pending.append(result)
                if len(pending) >= _SAVE_EVERY:
                    store.save(pending)
                    pending.clear()
            yield _noted(result, stats)
        if store and pending:
            store.save(pending)

    return results(), stats


def _noted(result: FileResult, stats: ScanStats) -> FileResult:
    if result.error:
        stats.skipped[result.path] = result.error
    return result
