"""Cold-start latency of `nforensics explain` on a seed log, against the bare imports of its stack.

Target (issue: walking skeleton): median of 10 cold runs of `nforensics explain SEED` is at most 1.5x the
median of `python -c "import typer, rich, pydantic, lark"`, both measured in this run.

It also measures the floor of the stack itself: the same imports plus validating one pydantic model and
printing one rich panel. `import pydantic` and `import rich` are lazy, so the baseline pays neither for
pydantic's validator machinery nor for rich.console; any program that uses them pays both.

    .venv/bin/python bench/explain_latency.py [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "sample_logs" / "seed000_ncc_ixlv002_sendrecv_twice.log"
TARGET = 1.5
_STACK_FLOOR = (
    "import typer, rich, pydantic, lark\n"
    "from pydantic import BaseModel\n"
    "class Probe(BaseModel):\n    x: int\n"
    "Probe(x=1)\n"
    "from rich.console import Console\nfrom rich.panel import Panel\n"
    "Console().print(Panel('x'))\n"
)


def _median_seconds(argv: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    python = sys.executable
    # One warm-up each so both sides start with the same OS file cache and nforensics' disk cache.
    _median_seconds([python, "-m", "forensics.cli", "explain", str(SEED)], 1)
    baseline = _median_seconds([python, "-c", "import typer, rich, pydantic, lark"], args.runs)
    floor = _median_seconds([python, "-c", _STACK_FLOOR], args.runs)
    explain = _median_seconds([python, "-m", "forensics.cli", "explain", str(SEED)], args.runs)
    ratio = explain / baseline
    print(f"baseline  import typer, rich, pydantic, lark : {baseline * 1000:7.1f} ms (median of {args.runs})")
    print(f"stack floor (+1 pydantic model, 1 rich panel): {floor * 1000:7.1f} ms = {floor / baseline:.2f}x baseline")
    print(f"nforensics explain {SEED.name}: {explain * 1000:7.1f} ms (median of {args.runs})")
    print(f"ratio {ratio:.2f}x (target <= {TARGET}x): {'OK' if ratio <= TARGET else 'OVER'}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
