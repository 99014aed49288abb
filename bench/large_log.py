"""Big logs: `nforensics explain FILE --format json` against a plain Python mmap + compiled-regex scan of the
same file, side by side in one run (issue 14).

Two generated inputs, each ending in the seed 000 failure (which explain must find):
- realistic: a training run's output as it comes (step and loss lines, a progress bar, the compiler's and the
  runtime's INFO chatter, a warning now and then, blank lines), numbers varying from line to line;
- warning-heavy: every other line a WARNING, each worded differently (nothing repeats, so no line is
  known from an earlier one), the rest chatter.

Targets: realistic within 2x of the baseline, warning-heavy within 3x, peak RSS under 100 MB for both.
The baseline is what a user's own script would do: mmap the file and collect the lines an error regex finds.

    .venv/bin/python bench/large_log.py                       # 1024 MiB realistic, 200 MiB warning-heavy
    .venv/bin/python bench/large_log.py --realistic 128 --warnings 32   # quicker
"""

from __future__ import annotations

import argparse
import mmap
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "sample_logs" / "seed000_ncc_ixlv002_sendrecv_twice.log"
TARGETS = {"realistic": 2.0, "warning-heavy": 3.0}
RSS_TARGET_MB = 100
BASELINE = re.compile(rb"ERROR|Error|Traceback|NCC_[A-Z]{4}\d{3}")
_PASSES = ("BirCodeGenLoop", "Tensorizer", "DMAOptimization", "LegalizeSundaAccess", "PartitionIR", "Simplifier",
           "VectorizeDMA", "ExpandBatchNorm", "MemcpyElimination", "DataLocalityOpt", "LowerTensorOp", "SFKVectorizer")
_WORDS = ("layer", "attention", "mlp", "proj", "query", "key", "value", "norm", "embed", "rotary", "gate", "up",
          "down", "residual", "dropout", "softmax", "bias", "weight", "scale", "shard", "bucket", "cache", "head")


def _realistic_block(rng: random.Random, lines: int) -> bytes:
    out = []
    for step in range(lines):
        kind = rng.random()
        stamp = f"2026-03-02T18:{rng.randrange(60):02d}:{rng.randrange(60):02d}Z"
        if kind < 0.55:
            out.append(f"2026-03-02 18:20:{rng.randrange(60):02d},{rng.randrange(1000):03d} - train - step {step} "
                       f"loss {rng.uniform(1, 4):.4f} lr {rng.uniform(1e-5, 3e-4):.6f} grad_norm "
                       f"{rng.uniform(0, 3):.3f} throughput {rng.uniform(10, 400):.1f} seq/s")
        elif kind < 0.80:
            name = rng.choice(_PASSES)
            out.append(f"{stamp} INFO {rng.randrange(40000, 50000)} [sg0000/Tensorizer/{name}]: {name} finished "
                       f"after {rng.uniform(0, 9):.3f} seconds")
        elif kind < 0.86:
            out.append(f"2026-Mar-02 18:20:40.{rng.randrange(10**6):06d} 48240:48241 INFO  NRT:nrt_load    "
                       f"Loaded model in {rng.randrange(1, 90)} ms")
        elif kind < 0.94:
            done = rng.randrange(1001)
            out.append(f"{done // 10:3d}%|{'█' * (done // 100)}{' ' * (10 - done // 100)}| {done}/1000 "
                       f"[00:{rng.randrange(60):02d}<00:{rng.randrange(60):02d}, {rng.uniform(1, 50):.2f}it/s]")
        elif kind < 0.99:
            out.append("")
        else:
            out.append(f"{stamp} WARNING {rng.randrange(40000, 50000)} [StaticProfiler]: matmul-based transposes "
                       f"inserted by penguin takes up {rng.uniform(0, 100):.1f} percent of all matmul computation")
    return ("\n".join(out) + "\n").encode()


def _warning_block(rng: random.Random, lines: int) -> bytes:
    out = []
    for _ in range(lines // 2):
        words = " ".join(rng.choice(_WORDS) for _ in range(3))
        op = "_".join(rng.choice(_WORDS) for _ in range(2))
        out.append(f"2026-03-02T18:20:35Z WARNING 48240 [{rng.choice(_PASSES)}]: {op} of {words} falls back to a "
                   f"{rng.choice(_WORDS)} {rng.choice(_WORDS)} layout for {rng.choice(_WORDS)} tensors")
        out.append(f"2026-03-02T18:20:35Z INFO 48240 [sg0000/Tensorizer/{rng.choice(_PASSES)}]: finished after "
                   f"{rng.uniform(0, 9):.3f} seconds")
    return ("\n".join(out) + "\n").encode()


def generate(kind: str, megabytes: int, path: Path) -> None:
    """Distinct blocks of about 1 MiB (a new seed each), so nothing repeats at a short period."""
    block = _realistic_block if kind == "realistic" else _warning_block
    target, written, seed = megabytes << 20, 0, 0
    with path.open("wb") as sink:
        while written < target:
            data = block(random.Random(seed), 9000)
            sink.write(data)
            written, seed = written + len(data), seed + 1
        sink.write(SEED.read_bytes())


def baseline(path: Path) -> float:
    start = time.perf_counter()
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        found = []
        for match in BASELINE.finditer(mapped):  # each hit's whole line
            first = mapped.rfind(b"\n", 0, match.start()) + 1
            end = mapped.find(b"\n", match.end())
            found.append(mapped[first:end if end >= 0 else len(mapped)])
    assert any(b"NCC_IXLV002" in line for line in found)
    return time.perf_counter() - start


# The child reports its own peak (VmHWM, reset by exec): a forked child's ru_maxrss counts this process's pages.
_EXPLAIN = """
import runpy, sys
sys.argv = ["nforensics", "explain", sys.argv[1], "--format", "json"]
try:
    runpy.run_module("nforensics", run_name="__main__")
finally:
    peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    print(int(peak.split()[1]) / 1024, file=sys.stderr)
"""


def explain(path: Path) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of one `explain --format json` on the file."""
    start = time.perf_counter()
    child = subprocess.run([sys.executable, "-c", _EXPLAIN, str(path)], capture_output=True, cwd=REPO, check=False)
    seconds = time.perf_counter() - start
    assert b"NCC_IXLV002" in child.stdout, "the failure at the end of the log was not found"
    return seconds, float(child.stderr.split()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--realistic", type=int, default=1024, help="MiB of the realistic log (default 1024)")
    parser.add_argument("--warnings", type=int, default=200, help="MiB of the warning-heavy log (default 200)")
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        for kind, megabytes in (("realistic", args.realistic), ("warning-heavy", args.warnings)):
            path = Path(folder) / f"{kind}.log"
            generate(kind, megabytes, path)
            size = path.stat().st_size / (1 << 20)
            plain = min(baseline(path) for _ in range(2))  # the second run reads from the page cache, as explain does
            seconds, peak = explain(path)
            ratio = seconds / plain
            met = ratio <= TARGETS[kind] and peak <= RSS_TARGET_MB
            failed |= not met
            print(f"{kind:13s} {size:7.1f} MiB: baseline {plain:6.2f} s ({size / plain:6.1f} MiB/s), explain "
                  f"{seconds:6.2f} s ({size / seconds:6.1f} MiB/s) = {ratio:5.2f}x (target {TARGETS[kind]}x), "
                  f"peak RSS {peak:5.1f} MiB (target {RSS_TARGET_MB}) {'met' if met else 'NOT met'}")
            path.unlink()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
