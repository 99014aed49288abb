"""The Ray backend (`--backend ray [--address auto|ray://HOST:PORT]`): each run is a Ray task.

A run that needs the device asks for `neuron_cores` (Ray's own resource on Trainium/Inferentia nodes; Ray
gives the task its cores as NEURON_RT_VISIBLE_CORES, which becomes the run's `{cores}`) and no CPU, since it
only waits on its subprocess; a compile-only run asks for one CPU and `--mem-per-run` of Ray's `memory`
resource. Ray's scheduler keeps the cluster within those resources. The task runs
`nforensics.experiments.runner.execute`, the same function the local pool runs, so verdicts are identical;
results come back to the driver, which journals them (the journal never leaves this host), so `--resume`
and `--repeat` work as with the local pool.

Joining or starting the cluster (nforensics/rayconnect.py, shared with triage) follows Ray's own rule, and Ray
is imported only for `--backend ray` (the `ray` extra). Every node needs nforensics installed
(the task imports it).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, Iterator, Sequence

from nforensics.errors import InputError
from nforensics.experiments.runner import Outcome, RunSpec, stopped_by
from nforensics.experiments.slots import VISIBLE_CORES, Pool
from nforensics.rayconnect import RayConnection

NEURON_CORES = "neuron_cores"  # Ray's resource name for NeuronCores (ray._private.accelerators.neuron)


def run_on_ray(spec: RunSpec) -> Outcome:
    """The task body: one run on a Ray worker, with the cores Ray gave this task."""
    from nforensics.experiments.runner import execute

    cores = os.environ.get(VISIBLE_CORES) if spec.cores else None
    return execute(replace(spec, visible_cores=cores or None))


class RayBackend:
    """Runs at most `workers` tasks in flight (the cluster's slots, or `--workers`), in completion order."""

    def __init__(self, pool: Pool, address: str | None = None) -> None:
        self._cluster = RayConnection(address)
        self._ray = ray = self._cluster.ray
        try:
            self._size(pool)
        except InputError:
            self.close()
            raise
        self._task = ray.remote(max_retries=0)(run_on_ray)  # a retried run would hide a crash of the worker

    def _size(self, pool: Pool) -> None:
        nodes = self._cluster.nodes()
        if pool.device:
            per_node = [int(r.get(NEURON_CORES, 0)) // pool.cores_per_run for r in nodes]
            if not any(per_node):
                most = max((int(r.get(NEURON_CORES, 0)) for r in nodes), default=0)
                raise InputError(f"each run needs {pool.cores_per_run} {NEURON_CORES} but no node of the Ray cluster "
                                 f"has that many (at most {most}); use --compile-only for runs without the device")
            slots = sum(per_node)
            self._options: dict[str, Any] = {"num_cpus": 0, "resources": {NEURON_CORES: pool.cores_per_run}}
            unit = f"{pool.cores_per_run} {NEURON_CORES}"
        else:
            fits = [min(int(r.get("CPU", 0)), int(r.get("memory", 0) // pool.mem_per_run)) for r in nodes]
            if not any(fits):
                raise InputError(f"no node of the Ray cluster has a CPU and --mem-per-run {pool.mem_per_run >> 20} MiB "
                                 "of Ray memory free for a compile: lower --mem-per-run")
            slots = sum(fits)
            self._options = {"num_cpus": 1, "memory": pool.mem_per_run}
            unit = f"1 CPU + {pool.mem_per_run >> 20} MiB"
        self.workers = min(pool.workers, slots) if pool.workers else slots
        self.why = f"Ray: {self.workers} tasks at a time of {unit} ({len(nodes)} node(s), {slots} slots)"

    def run(self, specs: Sequence[RunSpec]) -> Iterator[tuple[RunSpec, Outcome]]:
        ray = self._ray
        queued = list(reversed(specs))
        pending: dict[Any, RunSpec] = {}
        try:
            while queued or pending:
                while queued and len(pending) < self.workers:
                    spec = queued.pop()
                    pending[self._task.options(**self._options).remote(spec)] = spec
                try:
                    done, _ = ray.wait(list(pending), num_returns=1)
                except SystemExit:  # Ray turns our SIGTERM/SIGHUP handler's SystemExit(128 + N) into exit 1
                    signum = stopped_by()
                    if signum is None:
                        raise
                    raise SystemExit(128 + signum) from None
                for ref in done:
                    yield pending.pop(ref), self._outcome(ref)
        finally:
            for ref in pending:  # interrupted: KeyboardInterrupt in each task, whose execute kills its run's tree
                ray.cancel(ref, force=False)

    def _outcome(self, ref: Any) -> Outcome:
        try:
            return self._ray.get(ref)
        except self._ray.exceptions.RayError as exc:  # the worker or its node died: the run tested nothing
            note = f"Ray: {type(exc).__name__}: {str(exc).strip().splitlines()[-1][:200] if str(exc).strip() else ''}"
            return Outcome("UNTESTABLE", None, None, 0.0, note, "", "")

    def close(self) -> None:
        self._cluster.close()
