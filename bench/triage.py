"""Triage over many small logs (issue 18): every core against one, peak memory, and an incremental second run.

N logs are generated from sample_logs/ with varied timestamps and versions (SYNTHETIC copies, in a temporary
folder), then `nforensics triage` runs on them with one job and with all cores (a fresh store each), and
again after M new files are added (only those are analysed). With --backend ray the same input also goes
through `triage --backend ray` (its own store: a first run, then the second run with the new files), and
its tables are compared with the local pool's. Each run is a fresh interpreter; peak RSS is the largest
resident process of the run's tree that RUSAGE_CHILDREN sees (the parent or a worker; for Ray the driver or
a Ray daemon it started, not the workers of a cluster).

Run: .venv/bin/python bench/triage.py [--logs 10000] [--new 1000] [--backend ray [--address HOST:PORT]]
The issue's figure is --logs 100000 (about 400 MB of generated logs, 15 minutes on 2 cores), measured below.
Memory does not grow with the logs' text: workers analyse 16 files at a time,
Ray keeps at most twice its CPUs of tasks out, the store and the results are streamed, and the parent keeps
one frame row per finding (100,000 stored results, about 1.1 findings each, through scan, the frame and
the table: 295 MB peak in one process, measured with a scratch script).
Targets: all cores at least 1.8x one core on 2 cores; peak RSS under 500 MB; the second run analyses only
the new files; Ray's tables identical to the local pool's.

Measured on this 2-core machine (Python 3.11, Ray 2.60), --logs 3000 --new 300 --backend ray:
  1 job 19.7 s, 2 jobs 10.0 s: 1.97x; peak RSS 175 MB with 1 job, 152 MB with 2;
  second run analysed 300 of 3300 in 3.3 s (151 MB);
  Ray, a local instance started by each run (about 3 s of it): 16.3 s (207 MB), second run 300 of 3300 in 6.4 s;
  Ray joining a running local cluster (--address): 13.4 s, second run 3.4 s;
  both Ray tables identical to the local pool's.
--logs 100000 --new 1000 (local pool): 1 job 570.5 s, 2 jobs 314.2 s: 1.82x; peak RSS 292 MB with 1 job,
  273 MB with 2; the second run analysed 1000 of 101000 in 9.6 s (268 MB)."""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLES = sorted((REPO / "sample_logs").glob("*.log"))
VERSIONS = ["2.14.213.0+013d129b", "2.15.128.0+56dc5a86", "2.16.372.0+4a9b2326", "2.19.8089.0+8ab9f450"]
RAY_QUIET = {"RAY_USAGE_STATS_ENABLED": "0"}  # Ray's usage report would only try to reach the network
PROBE = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
         "sys.stdout.write(r.stdout); sys.stderr.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))")


def generate(folder: Path, count: int, start: int, rng: random.Random) -> None:
    """`count` logs from the samples, each under a day folder, with its own compiler version and file time."""
    for number in range(start, start + count):
        sample = rng.choice(SAMPLES)
        day = f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        path = folder / day / f"run{number:06d}_{sample.name}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"neuronx-cc {rng.choice(VERSIONS)}\n" + sample.read_text(encoding="utf-8", errors="replace"))
        stamp = time.mktime(time.strptime(day, "%Y-%m-%d")) + rng.randint(0, 86_000)
        os.utime(path, (stamp, stamp))


def triage(folder: Path, store: Path, *options: str) -> tuple[float, int, dict]:
    """(wall seconds, peak RSS bytes, the JSON report) of one `triage` run in a fresh interpreter."""
    command = [sys.executable, "-m", "nforensics", "triage", str(folder), "--store", str(store), "--format", "json",
               *options]
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", PROBE, *command], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO), **RAY_QUIET})
    wall = time.perf_counter() - started
    if not result.stdout:
        sys.exit(f"triage {' '.join(options)} failed: {result.stderr.strip()[-1000:]}")
    return wall, int(result.stderr.strip().splitlines()[-1]) * 1024, json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=10_000)
    parser.add_argument("--new", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help="ray: also run the same input through --backend ray (first and second run)")
    parser.add_argument("--address", help="with --backend ray: the cluster (default: a local instance per run)")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    on_ray = ["--backend", "ray", *(["--address", args.address] if args.address else [])]
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as scratch:
        logs, stores = Path(scratch) / "logs", Path(scratch) / "stores"
        generate(logs, args.logs, 0, rng)
        one, one_rss, _ = triage(logs, stores / "one", "--jobs", "1")
        every, every_rss, first = triage(logs, stores / "every", "--jobs", str(cores))
        if args.backend == "ray":
            ray, ray_rss, ray_first = triage(logs, stores / "ray", *on_ray)
        generate(logs, args.new, args.logs, rng)
        again, again_rss, second = triage(logs, stores / "every", "--jobs", str(cores))
        if args.backend == "ray":
            ray_again, _, ray_second = triage(logs, stores / "ray", *on_ray)
    print(f"{args.logs} logs: 1 job {one:.1f} s, {cores} jobs {every:.1f} s: {one / every:.2f}x (target 1.8x)")
    print(f"peak RSS: {one_rss / 2**20:.0f} MB with 1 job, {every_rss / 2**20:.0f} MB with {cores} (target under 500 MB)")
    print(f"second run with {args.new} new files: {again:.1f} s, analysed {second['analysed']} of {second['files']} "
          f"(first run analysed {first['analysed']}), peak RSS {again_rss / 2**20:.0f} MB")
    if args.backend == "ray":
        where = args.address or "a local instance started by each run"
        print(f"Ray ({where}): {ray:.1f} s for {args.logs} logs ({one / ray:.2f}x 1 job), peak RSS {ray_rss / 2**20:.0f} MB; "
              f"table {'identical to' if ray_first['groups'] == first['groups'] else 'DIFFERENT from'} the local pool's")
        print(f"Ray second run: {ray_again:.1f} s, analysed {ray_second['analysed']} of {ray_second['files']}; table "
              f"{'identical to' if ray_second['groups'] == second['groups'] else 'DIFFERENT from'} the local pool's")


if __name__ == "__main__":
    main()
