"""Slots, not CPU counts: how many runs may go at once, and which NeuronCores each one gets.

A run that needs the device gets its own slice of NeuronCores (`NEURON_RT_VISIBLE_CORES`, and `{cores}` in
the command): two runs never share a core, which would make one of them fail with "NeuronCore(s) not
available" and come back UNTESTABLE. The default pool is the cores this host offers (the orchestrator's own
`NEURON_RT_VISIBLE_CORES` when set, else the sum of `nc_count` that `neuron-ls --json-output` reports)
divided by the cores one run needs. A compile-only run needs no core but host memory: neuronx-cc is
OOM-killed when too many compile at once, so their pool is capped by MemAvailable / `--mem-per-run`.
Without a Neuron device (no neuron-ls: CI with the test double) the pool is the number of CPUs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field

from nforensics.errors import InputError

VISIBLE_CORES = "NEURON_RT_VISIBLE_CORES"
CORES = "cores"  # the placeholder filled with a run's slice, e.g. `--nc {cores}`
NEURON_LS_FALLBACK = "/opt/aws/neuron/bin/neuron-ls"  # where the Neuron tools install it, often not on PATH
DEFAULT_MEM_PER_RUN = 8 << 30  # one neuronx-cc compile of a mid-size graph; large LLM graphs need more
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """`8G`, `512M`, `16GiB`, `1.5g`, or bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", str(text), re.IGNORECASE)
    if not m or float(m[1]) <= 0:
        raise InputError(f"--mem-per-run must be a size such as 8G or 512M, got {text!r}")
    return int(float(m[1]) * _UNITS[m[2].lower()])


def _human(size: int) -> str:
    for unit, scale in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}iB"
    return f"{size} B"


def parse_core_list(text: str) -> list[int] | None:
    """`NEURON_RT_VISIBLE_CORES` syntax: `3`, `0-3`, `0,2,4-5`. None when it is not that."""
    cores: list[int] = []
    for part in text.replace(" ", "").split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m or (m[2] and int(m[2]) < int(m[1])):
            return None
        cores.extend(range(int(m[1]), int(m[2] or m[1]) + 1))
    return cores or None


def core_range(cores: list[int]) -> str:
    """A slice as NEURON_RT_VISIBLE_CORES takes it: `2-3` when contiguous, else `0,2`."""
    if len(cores) > 1 and cores == list(range(cores[0], cores[-1] + 1)):
        return f"{cores[0]}-{cores[-1]}"
    return ",".join(map(str, cores))


def neuron_ls_cores() -> int | None:
    """NeuronCores on this host by `neuron-ls --json-output` (the sum of each device's `nc_count`, as Ray
    counts them); None when neuron-ls is absent or says nothing usable."""
    tool = shutil.which("neuron-ls") or (NEURON_LS_FALLBACK if os.access(NEURON_LS_FALLBACK, os.X_OK) else None)
    if not tool:
        return None
    try:
        done = subprocess.run([tool, "--json-output"], capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
        devices = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    if not isinstance(devices, list):
        return None
    total = sum(d.get("nc_count", 0) for d in devices if isinstance(d, dict) and isinstance(d.get("nc_count"), int))
    return total or None


def host_cores() -> tuple[list[int] | None, str]:
    """The NeuronCores runs may use, and where that came from."""
    own = os.environ.get(VISIBLE_CORES)
    if own and (listed := parse_core_list(own)):
        return listed, f"{VISIBLE_CORES}={own}"
    count = neuron_ls_cores()
    return (list(range(count)), "neuron-ls") if count else (None, "")


def available_memory(meminfo: str = "/proc/meminfo") -> int | None:
    """MemAvailable in bytes (what can be allocated without swapping), None when unknown (not Linux)."""
    try:
        with open(meminfo, encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Pool:
    """How many runs at once and, for device runs, each worker's NeuronCore slice."""

    workers: int
    cores_per_run: int  # 0: compile-only runs (no device)
    slots: tuple[str, ...] = ()  # NEURON_RT_VISIBLE_CORES of each worker; empty for compile-only runs
    mem_per_run: int = DEFAULT_MEM_PER_RUN
    why: str = ""  # how the size was chosen, shown beside the progress bar
    warnings: list[str] = field(default_factory=list)

    @property
    def device(self) -> bool:
        return self.cores_per_run > 0


def plan_pool(workers: int | None, cores_per_run: int | None, compile_only: bool, mem_per_run: int | None,
              local: bool = True) -> Pool:
    """The pool for this host: see the module's docstring. An explicit `--workers` wins, except that
    device runs can never be given more slots than there are cores (they would only fight over them).
    With `local` False (a cluster backend sizes itself from the cluster) only the request is checked."""
    if workers is not None and workers < 1:
        raise InputError("--workers must be at least 1")
    mem = mem_per_run or DEFAULT_MEM_PER_RUN
    if compile_only:
        if cores_per_run:
            raise InputError("--compile-only runs need no NeuronCores: leave out --cores-per-run")
        return _compile_pool(workers, mem) if local else Pool(workers or 0, 0, (), mem)
    per_run = 1 if cores_per_run is None else cores_per_run
    if per_run < 1:
        raise InputError("--cores-per-run must be at least 1 (use --compile-only for runs without the device)")
    if not local:
        return Pool(workers or 0, per_run, (), mem)
    cores, source = host_cores()
    if cores is None:  # no Neuron device here: nothing to share out, slices are only labels
        size = workers or cpu_count()
        slots = tuple(core_range(list(range(i * per_run, (i + 1) * per_run))) for i in range(size))
        return Pool(size, per_run, slots, mem, f"{size} workers" + ("" if workers else " (no neuron-ls: one per CPU)"))
    fits = len(cores) // per_run
    if fits < 1:
        raise InputError(f"each run needs {per_run} NeuronCores but {source} gives {len(cores)}")
    if workers is not None and workers > fits:
        raise InputError(f"--workers {workers} runs of {per_run} NeuronCore(s) need {workers * per_run} cores, "
                         f"{source} gives {len(cores)}: at most --workers {fits}")
    size = workers or fits
    slots = tuple(core_range(cores[i * per_run:(i + 1) * per_run]) for i in range(size))
    return Pool(size, per_run, slots, mem, f"{size} slots of {per_run} NeuronCore(s) ({len(cores)} from {source})")


def _compile_pool(workers: int | None, mem: int) -> Pool:
    free = available_memory()
    cap = max(1, free // mem) if free else cpu_count()
    size = workers or min(cpu_count(), cap)
    why = f"{size} compiles at once ({_human(mem)} each" + (f", {_human(free)} free)" if free else ")")
    warnings = []
    if workers and free and workers > cap:
        warnings.append(f"--workers {workers} compiles of {_human(mem)} each need {_human(workers * mem)}, "
                        f"only {_human(free)} is free: expect the host's OOM killer (UNTESTABLE runs)")
    return Pool(size, 0, (), mem, why, warnings)


# Untestable runs that ran out of something this host shares between runs, not out of luck: the catalogue's
# signatures for it (knowledge/signatures/<id>.toml), and SIGKILL, the host OOM killer's signal.
RESOURCE_SIGNATURES = {
    "nrt-neuroncores-not-available": "NeuronCores in use",
    "nrt-no-neuron-device-available": "no free Neuron device",
    "neuronx-cc-killed-host-oom": "host out of memory",
    "ncc-f137-forcibly-killed-host-memory": "host out of memory",
    "nrt-status-host-mem-alloc": "host out of memory",
}
_ADVICE = {
    "NeuronCores in use": "give each run its own cores (fewer --workers, --cores-per-run N) and stop other users of the device",
    "no free Neuron device": "free the device (neuron-ls shows who holds it) or run fewer at once",
    "host out of memory": "run fewer compiles at once (--mem-per-run SIZE or fewer --workers)",
}


def resource_reason(verdict: str, code: str | None, note: str) -> str | None:
    """Why an UNTESTABLE run could not run, when it is a resource this host shares between runs."""
    if verdict != "UNTESTABLE":
        return None
    if note.startswith("killed by signal 9"):
        return "host out of memory"
    if code:
        from nforensics.knowledge import load_kb

        signature = load_kb().get(code)
        return RESOURCE_SIGNATURES.get(signature.id if signature else code)
    return None


def starvation(runs) -> str | None:
    """A warning when most runs (journal.RunRecord) were untestable for lack of a resource: the experiment
    then tested next to nothing, however its answer reads."""
    reasons = Counter(r for r in (resource_reason(x.verdict, x.code, x.note) for x in runs) if r)
    starved = sum(reasons.values())
    if not runs or starved * 2 <= len(runs):
        return None
    main, _ = reasons.most_common(1)[0]
    causes = ", ".join(f"{reason}: {n}" for reason, n in reasons.most_common())
    return (f"{starved} of {len(runs)} runs were UNTESTABLE for lack of resources ({causes}), so they tested "
            f"nothing: {_ADVICE[main]}")
