"""`nforensics explain FOLDER --format json` on many small logs: every core against one process.

Target (issue 14, "folders on every core, in bounded memory"): 10,000 small logs at least 1.8x faster with
`--jobs 2` than with `--jobs 1` on a 2-core machine, peak RSS under 200 MB, both measured in this run. The
logs are copies of sample_logs/ (each name made unique, so no two inputs are the same file). Peak RSS is
given per process (the largest one: the parent or a worker) and for the whole run (the parent plus its
workers at their peaks, an upper bound of what was resident at once).

    .venv/bin/python bench/folder.py                 # 10,000 logs, --jobs 1 against --jobs N (N = cores)
    .venv/bin/python bench/folder.py --logs 2000     # quicker
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEEDUP_TARGET = 1.8
RSS_TARGET_MB = 200
_MONITOR = """
import resource, subprocess, sys, threading, time
peaks = {}
def hwm(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0
def watch(pid):
    while True:  # each process's own peak (VmHWM), sampled until the run ends
        try:
            pids = [pid, *open(f"/proc/{pid}/task/{pid}/children").read().split()]
        except OSError:
            return
        for each in pids:
            try:
                peaks[each] = max(peaks.get(each, 0), hwm(each))
            except (OSError, ValueError):
                pass
        time.sleep(0.05)
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
threading.Thread(target=watch, args=(child.pid,), daemon=True).start()
code = child.wait()
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, sum(peaks.values()))
"""


def make_logs(folder: Path, count: int) -> None:
    samples = sorted((REPO / "sample_logs").glob("*.log"))
    for n in range(count):
        sample = samples[n % len(samples)]
        shutil.copyfile(sample, folder / f"{n:05d}-{sample.name}")


def run(folder: Path, jobs: int) -> tuple[float, int, int, int]:
    """(seconds, exit code, largest process's peak RSS, parent + workers' peaks) in bytes."""
    argv = [sys.executable, "-c", _MONITOR, sys.executable, "-m", "nforensics", "explain", str(folder),
            "--format", "json", "--jobs", str(jobs)]
    start = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, check=True).stdout.split()
    seconds = time.perf_counter() - start
    code, largest, total = map(int, out)
    return seconds, code, largest, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                        else os.cpu_count() or 1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        make_logs(folder, args.logs)
        single = run(folder, 1)
        pooled = run(folder, args.jobs)
    mb = 1 << 20
    for name, (seconds, code, largest, total) in (("--jobs 1", single), (f"--jobs {args.jobs}", pooled)):
        print(f"{args.logs} logs, {name:9s}: exit {code}, {seconds:7.1f} s, {args.logs / seconds:6.0f} logs/s, "
              f"peak RSS largest process {largest / mb:6.1f} MB, parent + workers {total / mb:6.1f} MB")
    speedup = single[0] / pooled[0]
    ok = speedup >= SPEEDUP_TARGET and pooled[2] < RSS_TARGET_MB * mb
    print(f"speedup {speedup:.2f}x (target >= {SPEEDUP_TARGET}x), peak RSS {pooled[2] / mb:.0f} MB "
          f"(target < {RSS_TARGET_MB} MB): {'OK' if ok else 'OVER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
