"""Streaming a huge log: `nforensics explain -` on N MB of generated compiler/runtime chatter ending in
the seed 000 failure. Prints peak RSS (flat means streamed) and throughput.

    .venv/bin/python bench/large_log.py --mb 1024      # the issue's 1 GB case
    .venv/bin/python bench/large_log.py --mb 32 --mb 256   # RSS should not grow with size
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "sample_logs" / "seed000_ncc_ixlv002_sendrecv_twice.log"
CHATTER = (
    "2026-03-02T18:20:31Z INFO 48240 [sg0000/Tensorizer/BirCodeGenLoop]: Running BirCodeGenLoop\n"
    "2026-03-02T18:20:33Z INFO 48240 [sg0000/Tensorizer/BirCodeGenLoop]: BirCodeGenLoop finished after 1.902 seconds\n"
    "2026-Mar-02 18:20:40.123456 48240:48241 INFO  NRT:nrt_load    Loaded model in 12 ms\n"
    "2026-03-02T18:20:35Z WARNING 48240 [StaticProfiler]: matmul-based transposes inserted by penguin takes up 9.1 percent\n"
    "Selecting 23116 allocations ..........................................\n"
).encode()


def generate(megabytes: int, sink) -> None:
    block = CHATTER * ((1 << 20) // len(CHATTER) + 1)  # about 1 MiB per write
    written, target = 0, megabytes << 20
    while written < target:
        sink.write(block)
        written += len(block)
    sink.write(SEED.read_bytes())
    sink.close()


def run(megabytes: int) -> tuple[float, int, int]:
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "nforensics.cli", "explain", "-", "--format", "json"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=REPO)
    generate(megabytes, child.stdin)
    out = child.stdout.read()
    code = child.wait()
    seconds = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # max over children so far
    assert b"NCC_IXLV002" in out, "the failure at the end of the log was not found"
    return seconds, peak_kib, code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, action="append", help="size in MiB (repeatable); default 1024")
    sizes = parser.parse_args().mb or [1024]
    for megabytes in sorted(sizes):
        seconds, peak_kib, code = run(megabytes)
        print(f"{megabytes:6d} MiB: exit {code}, {seconds:7.1f} s, {megabytes / seconds:6.1f} MiB/s, "
              f"peak RSS so far {peak_kib / 1024:6.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
