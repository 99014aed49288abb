"""Speed of the experiment runner against issues 6 and 17's targets, measured in one run on this machine.

1. Scheduler overhead: the median time a no-op variant takes through the runner (own temp dir and process
   group, judged by the oracle, journaled in SQLite) minus the median time of a bare `subprocess.run` of the
   same command. Target: at most 20 ms.
2. Throughput: 64 variants of 0.5 s each on 2 workers. Ideal wall time is 64 * 0.5 / 2 = 16 s; target:
   within 10 % of it (ratio <= 1.10).

3. The same scheduler overhead through the Ray backend (issue 17), when Ray is installed: a local Ray
   instance of 2 CPUs and 4 `neuron_cores` started in the run, each no-op variant a Ray task asking for one
   NeuronCore, measured the same way (median through the runner minus the bare subprocess). No target: the
   figure is stated beside the local pool's.

    .venv/bin/python bench/runner_overhead.py [--quick] [--no-ray]
"""

from __future__ import annotations

import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nforensics.experiments.journal import Journal  # noqa: E402
from nforensics.experiments.oracle import expectation  # noqa: E402
from nforensics.experiments.plan import Template  # noqa: E402
from nforensics.experiments.backends import LocalBackend  # noqa: E402
from nforensics.experiments.runner import Experiment  # noqa: E402


def experiment(tmp: Path, name: str, workers: int, backend=None, cores: int = 0) -> Experiment:
    journal = Journal(tmp / f"{name}.sqlite")
    session = journal.open_session("bench", "NCC_IXLV002", {"bench": name}, resume=False)
    return Experiment(journal, session, backend or LocalBackend(workers), expectation("NCC_IXLV002"), timeout=60,
                      cores=cores)


def overhead(tmp: Path, samples: int, backend=None, cores: int = 0, name: str = "overhead") -> tuple[float, float, float]:
    bare = []
    for i in range(samples):
        start = time.perf_counter()
        subprocess.run(["true", str(i)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        bare.append(time.perf_counter() - start)
    exp = experiment(tmp, name, workers=1, backend=backend, cores=cores)
    template = Template(argv=("true", "{i}"))
    exp.run([template.variant({"i": "warm-up"})])  # loads the knowledge base and grammars once
    through = []
    for i in range(samples):
        start = time.perf_counter()
        exp.run([template.variant({"i": str(i)})])
        through.append(time.perf_counter() - start)
    exp.backend.close()
    exp.journal.close()
    bare_ms, through_ms = statistics.median(bare) * 1000, statistics.median(through) * 1000
    return bare_ms, through_ms, through_ms - bare_ms


def throughput(tmp: Path, variants: int, seconds: float, workers: int) -> tuple[float, float]:
    exp = experiment(tmp, "throughput", workers=workers)
    template = Template(argv=("sleep", str(seconds)), env=(("BENCH_VARIANT", "{i}"),))
    start = time.perf_counter()
    results = exp.run(template.variant({"i": str(i)}) for i in range(variants))
    wall = time.perf_counter() - start
    assert len(results) == variants and all(r.verdict == "PASSES" for r in results)
    exp.backend.close()
    exp.journal.close()
    return wall, variants * seconds / workers


def ray_overhead(tmp: Path, samples: int) -> tuple[float, float, float, float] | None:
    """(bare, through, added) ms per no-op variant through the Ray backend, and seconds to start Ray."""
    try:
        import ray
    except ImportError:
        return None
    from nforensics.experiments.ray_backend import RayBackend
    from nforensics.experiments.slots import Pool

    start = time.perf_counter()
    ray.init(num_cpus=2, resources={"neuron_cores": 4}, include_dashboard=False, log_to_driver=False,
             logging_level=logging.ERROR)
    started = time.perf_counter() - start
    try:
        backend = RayBackend(Pool(1, 1), None)  # one task at a time, as the local figure: latency, not throughput
        return (*overhead(tmp, samples, backend, cores=1, name="ray"), started)
    finally:
        ray.shutdown()


def main() -> None:
    quick = "--quick" in sys.argv
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        bare_ms, through_ms, added_ms = overhead(Path(tmp), 50 if quick else 200)
        wall, ideal = throughput(Path(tmp), 16 if quick else 64, 0.5, 2)
        on_ray = None if "--no-ray" in sys.argv else ray_overhead(Path(tmp), 50 if quick else 200)
    ratio = wall / ideal
    rows = [
        ("bare subprocess.run, median", f"{bare_ms:.1f} ms", "", ""),
        ("through the runner, median", f"{through_ms:.1f} ms", "", ""),
        ("added per variant (no-op)", f"{added_ms:.1f} ms", "<= 20 ms", "ok" if added_ms <= 20 else "MISSED"),
        (f"wall, {'16' if quick else '64'} x 0.5 s on 2 workers", f"{wall:.2f} s (ideal {ideal:.1f} s)",
         "ratio <= 1.10", f"ratio {ratio:.3f} {'ok' if ratio <= 1.10 else 'MISSED'}"),
    ]  # fmt: skip
    if on_ray is None:
        rows.append(("Ray backend", "not measured", "", "--no-ray, or Ray not installed (nforensics[ray])"))
    else:
        ray_added, ray_start = on_ray[2], on_ray[3]
        rows += [
            ("through Ray (1 neuron_cores task), median", f"{on_ray[1]:.1f} ms", "", ""),
            ("added per variant on Ray (no-op)", f"{ray_added:.1f} ms", "stated", f"{ray_added / max(added_ms, 0.1):.1f}x local"),
            ("starting the local Ray instance", f"{ray_start:.1f} s", "", "once per invocation without --address"),
        ]  # fmt: skip
    load = f"{load_before:.2f} / {os.getloadavg()[0]:.2f}"
    rows.append(("load average (1 min) before / after", load, "", f"{os.cpu_count()} cores: other load inflates both"))
    width = max(len(r[0]) for r in rows)
    for name, value, target, verdict in rows:
        print(f"{name:<{width}}  {value:<24} {target:<14} {verdict}")


if __name__ == "__main__":
    main()
