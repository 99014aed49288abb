"""Cold-start latency of `nforensics explain` on a seed log, against the bare imports of its stack.

Targets (issue 14, "a lean start"), each the median of N cold runs against the median of
`python -c "import typer, rich, pydantic, lark"`, all measured interleaved in this run:
- `explain SEED --format json`: at most 2.0x;
- `explain SEED` writing to a terminal (a pseudo-terminal here, so rich renders in colour): at most 2.3x;
- the first run after install (an empty cache folder) at most 1.2x a warm `--format json` run.

It also prints the floor of the stack itself: the same imports plus validating one pydantic model and
printing one rich panel. `import pydantic` and `import rich` are lazy, so the baseline pays neither for
pydantic's validator machinery nor for rich.console; any program that uses them pays both.

    .venv/bin/python bench/explain_latency.py [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "sample_logs" / "seed000_ncc_ixlv002_sendrecv_twice.log"
TARGETS = {"json": 2.0, "terminal": 2.3}
FIRST_RUN_TARGET = 1.2
_STACK_FLOOR = (
    "import typer, rich, pydantic, lark\n"
    "from pydantic import BaseModel\n"
    "class Probe(BaseModel):\n    x: int\n"
    "Probe(x=1)\n"
    "from rich.console import Console\nfrom rich.panel import Panel\n"
    "Console().print(Panel('x'))\n"
)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# As installed: pip writes every module's bytecode, so the runs may too (the warm-up writes it). With
# PYTHONDONTWRITEBYTECODE set, each recently edited module would be compiled from source on every run.
_INSTALLED = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def _seconds(argv: list[str], terminal: bool = False, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one run; with `terminal` its stdout is a pseudo-terminal, drained as a terminal
    would. CPU time is printed too: on a busy machine it moves less than wall time."""
    reader, writer = os.openpty() if terminal else (-1, subprocess.DEVNULL)
    drain = threading.Thread(target=_drain, args=(reader,), daemon=True)
    if terminal:
        drain.start()
    cpu, start = _cpu(), time.perf_counter()
    subprocess.run(argv, stdout=writer, stderr=subprocess.DEVNULL, cwd=REPO, env=env or _INSTALLED)
    elapsed, cpu = time.perf_counter() - start, _cpu() - cpu
    if terminal:
        os.close(writer)
        drain.join()
    return elapsed, cpu


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except OSError:  # EIO once the writer side is closed
        pass
    finally:
        os.close(fd)


def _first_run(argv: list[str]) -> tuple[float, float]:
    """A run with an empty cache folder, as the first one after installing."""
    with tempfile.TemporaryDirectory() as cache:
        return _seconds(argv, env={**_INSTALLED, "NFORENSICS_CACHE_DIR": cache})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    python = sys.executable
    explain = [python, "-m", "nforensics", "explain", str(SEED)]
    measures = {
        "baseline": lambda: _seconds([python, "-c", "import typer, rich, pydantic, lark"]),
        "floor": lambda: _seconds([python, "-c", _STACK_FLOOR]),
        "json": lambda: _seconds([*explain, "--format", "json"]),
        "terminal": lambda: _seconds(explain, terminal=True),
        "first": lambda: _first_run([*explain, "--format", "json"]),
    }
    for measure in measures.values():  # one warm-up each: the same OS file cache and nforensics disk cache
        measure()
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in measures}
    for _ in range(args.runs):  # interleaved, so a busy moment of the machine weighs on every side alike
        for name, measure in measures.items():
            samples[name].append(measure())
    wall = {name: statistics.median(w for w, _ in values) for name, values in samples.items()}
    cpu = {name: statistics.median(c for _, c in values) for name, values in samples.items()}

    def line(name: str, against: str) -> str:
        return (f"{wall[name] * 1000:7.1f} ms = {wall[name] / wall[against]:.2f}x (CPU {cpu[name] * 1000:6.1f} ms = "
                f"{cpu[name] / cpu[against]:.2f}x)")

    print(f"baseline  import typer, rich, pydantic, lark : {wall['baseline'] * 1000:7.1f} ms "
          f"(CPU {cpu['baseline'] * 1000:6.1f} ms), medians of {args.runs}")
    print(f"stack floor (+1 pydantic model, 1 rich panel): {line('floor', 'baseline')} baseline")
    ok = True
    for name, target in TARGETS.items():
        ratio = wall[name] / wall["baseline"]
        ok &= ratio <= target
        print(f"explain {SEED.name} ({name}): {line(name, 'baseline')} baseline "
              f"(target <= {target}x): {'OK' if ratio <= target else 'OVER'}")
    first = wall["first"] / wall["json"]
    ok &= first <= FIRST_RUN_TARGET
    print(f"first run after install (empty cache): {line('first', 'json')} a warm json run "
          f"(target <= {FIRST_RUN_TARGET}x): {'OK' if first <= FIRST_RUN_TARGET else 'OVER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
