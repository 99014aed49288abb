"""Triage over many small logs (issue 18): every core against one, peak memory, and an incremental second run.

N logs are generated from sample_logs/ with varied timestamps and versions (SYNTHETIC copies, in a temporary
folder), then `nforensics triage` runs on them with one job and with all cores (a fresh store each), and
again after M new files are added (only those are analysed). Each run is a fresh interpreter; peak RSS is
the whole process tree's largest resident process (the parent or a worker, from RUSAGE_CHILDREN).

Run: .venv/bin/python bench/triage.py [--logs 10000] [--new 1000]   (the issue's figure is --logs 100000)
Targets: all cores at least 1.8x one core on 2 cores; peak RSS under 500 MB; the second run analyses only
the new files."""

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


def triage(folder: Path, store: Path, jobs: int) -> tuple[float, int, dict]:
    """(wall seconds, peak RSS bytes, the JSON report) of one `triage` run in a fresh interpreter."""
    command = [sys.executable, "-m", "nforensics.cli", "triage", str(folder), "--store", str(store),
               "--jobs", str(jobs), "--format", "json"]
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", PROBE, *command], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    wall = time.perf_counter() - started
    return wall, int(result.stderr.strip().splitlines()[-1]) * 1024, json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=10_000)
    parser.add_argument("--new", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=18)
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as scratch:
        logs, stores = Path(scratch) / "logs", Path(scratch) / "stores"
        generate(logs, args.logs, 0, rng)
        one, one_rss, _ = triage(logs, stores / "one", 1)
        every, every_rss, first = triage(logs, stores / "every", cores)
        generate(logs, args.new, args.logs, rng)
        again, again_rss, second = triage(logs, stores / "every", cores)
    print(f"{args.logs} logs: 1 job {one:.1f} s, {cores} jobs {every:.1f} s: {one / every:.2f}x (target 1.8x)")
    print(f"peak RSS: {one_rss / 2**20:.0f} MB with 1 job, {every_rss / 2**20:.0f} MB with {cores} (target under 500 MB)")
    print(f"second run with {args.new} new files: {again:.1f} s, analysed {second['analysed']} of {second['files']} "
          f"(first run analysed {first['analysed']}), peak RSS {again_rss / 2**20:.0f} MB")


if __name__ == "__main__":
    main()
