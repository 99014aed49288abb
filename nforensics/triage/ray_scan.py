"""`triage --backend ray [--address ...]`: the per-file analysis as Ray tasks over a cluster.

A task is the local pool's own unit (scan.analyse_chunk: 16 paths in, their FileResults out), so both
backends give identical results, and they come back in input order as the pool's do. Only those small
results travel to this process, which alone reads and writes the triage store (scan.py): a nightly run
sends the cluster only the new files, as the local pool gets only those.

At most `in_flight` tasks are out at a time (twice the cluster's CPUs, so each CPU has its next task
waiting while this process takes a result; `--jobs N` caps it at N), so the memory here stays bounded
whatever the number of files. Each task asks for one CPU. The files must be readable by every node under
the path this process sees (shared storage), and every node needs the same nforensics installed (the task
imports it, and the store keys results by this process's analyser).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Iterator

from nforensics.errors import InputError
from nforensics.rayconnect import RayConnection
from nforensics.triage.runs import FileResult
from nforensics.triage.scan import CHUNK, analyse_chunk, chunks


class RayAnalysis:
    """A scan.Mapper on a Ray cluster; `why` says what it found there."""

    def __init__(self, address: str | None, jobs: int | None) -> None:
        self._cluster = RayConnection(address)
        nodes = self._cluster.nodes()
        cpus = sum(int(resources.get("CPU", 0)) for resources in nodes)
        if not cpus:
            self.close()
            raise InputError("no node of the Ray cluster has a CPU to analyse files on")
        self.in_flight = jobs or 2 * cpus
        self.why = f"Ray: {self.in_flight} tasks of {CHUNK} files at a time ({len(nodes)} node(s), {cpus} CPUs)"
        self._task = self._cluster.ray.remote(num_cpus=1)(analyse_chunk)

    def __call__(self, paths: list[str], redact: bool) -> Iterator[FileResult]:
        out: deque[tuple[list[str], Any]] = deque()
        try:
            for task in chunks(paths, redact):
                out.append((task[0], self._task.remote(task)))
                if len(out) >= self.in_flight:
                    yield from self._results(*out.popleft())
            while out:
                yield from self._results(*out.popleft())
        finally:
            for _, ref in out:  # stopped early (an error, Ctrl-C): the cluster does not go on for nothing
                self._cluster.ray.cancel(ref)

    def _results(self, paths: list[str], ref: Any) -> list[FileResult]:
        ray = self._cluster.ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayError as exc:
            # A worker or node that died loses only its task's files: skipped with the reason, and not stored
            # (no size), so the next run analyses them again.
            lines = str(exc).strip().splitlines()
            why = f"Ray: {type(exc).__name__}" + (f": {lines[-1][:200]}" if lines else "")
            return [FileResult(path=path, size=-1, mtime_ns=-1, error=f"{path}: {why}") for path in paths]

    def close(self) -> None:
        self._cluster.close()
