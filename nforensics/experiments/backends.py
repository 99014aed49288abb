"""Where runs execute: a backend takes RunSpecs and yields (spec, outcome) in completion order.

`LocalBackend` is a pool of threads on this host (threads only wait on child processes). When the runs need
the device, each worker owns one NeuronCore slice of the pool (nforensics/experiments/slots.py) for as long
as a run of it lasts, so two runs never share a core. `RayBackend` (nforensics/experiments/ray_backend.py)
implements the same interface on a Ray cluster; it is imported only when `--backend ray` is asked for.
"""

from __future__ import annotations

import queue
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Iterator, Protocol, Sequence

from nforensics.experiments.runner import Outcome, RunSpec, execute, kill_running
from nforensics.experiments.slots import Pool, cpu_count

class Backend(Protocol):
    """Where runs execute. A cluster backend implements the same interface."""

    workers: int  # how many runs it takes at a time (reducers batch their candidates by it)

    def run(self, specs: Sequence[RunSpec]) -> Iterator[tuple[RunSpec, Outcome]]:
        """Yield each spec with its outcome as soon as it finishes (completion order)."""

    def close(self) -> None: ...


class LocalBackend:
    """A local pool: `workers` runs at a time. With `slots`, each run holds one of them (its NeuronCore
    slice, NEURON_RT_VISIBLE_CORES) while it runs; there are exactly as many slots as workers."""

    def __init__(self, workers: int | None = None, slots: Sequence[str] = ()) -> None:
        self.workers = max(1, workers or len(slots) or cpu_count())
        if slots and len(slots) != self.workers:
            raise ValueError("one NeuronCore slot per worker")
        self._free: queue.SimpleQueue[str] = queue.SimpleQueue()
        for slot in slots:
            self._free.put(slot)
        self._slotted = bool(slots)
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="nforensics-run")

    def _execute(self, spec: RunSpec) -> Outcome:
        if not self._slotted or not spec.cores:
            return execute(spec)
        slot = self._free.get_nowait()  # a worker thread is free, so is its slot
        try:
            return execute(replace(spec, visible_cores=slot))
        finally:
            self._free.put(slot)

    def run(self, specs: Sequence[RunSpec]) -> Iterator[tuple[RunSpec, Outcome]]:
        pending: dict[Future, RunSpec] = {self._pool.submit(self._execute, s): s for s in specs}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield pending.pop(future), future.result()
        finally:
            if pending:  # interrupted (Ctrl-C, error): stop queued runs and kill those in flight
                for future in pending:
                    future.cancel()
                kill_running()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def make_backend(kind: str, pool: Pool, address: str | None = None) -> Backend:
    """The backend `--backend` names (checked by rayconnect.check_backend), sized by the pool (slots.plan_pool)."""
    if kind == "ray":
        from nforensics.experiments.ray_backend import RayBackend

        return RayBackend(pool, address)
    return LocalBackend(pool.workers, pool.slots if pool.device else ())
