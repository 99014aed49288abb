"""`nforensics hlo` on the large generated module (tests/fixtures/hlo/large.*: 5155 instructions), against a floor.

Target (issue 16): `nforensics hlo` on the large module in under 1 s on this machine, cold (a fresh interpreter,
as a user runs it). Each figure is the median of N runs, measured interleaved in this run:
- the floor, cold: `python -c` that gunzips large.pb.gz and parses it with protobuf's ParseFromString (the
  least any reader of the proto pays: an interpreter, protobuf, the parse), with nforensics' message class;
- `nforensics hlo large.pb.gz --format json` and the terminal form, cold; and the same for large.hlo.gz;
- in this process, without start-up: reading + facts (`read_hlo`) against gunzip + ParseFromString alone.
Ratios are against the floor measured in the same run.

    .venv/bin/python bench/hlo_read.py [--runs 7]
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
FIXTURES = REPO / "tests" / "fixtures" / "hlo"
PROTO, TEXT = FIXTURES / "large.pb.gz", FIXTURES / "large.hlo.gz"
TARGET_SECONDS = 1.0
FLOOR = (
    "import gzip, sys\n"
    "sys.path.insert(0, {repo!r})\n"
    "from nforensics.artifacts.hlo_proto import message_classes\n"
    "message_classes()['HloModuleProto'].FromString(gzip.decompress(open({path!r}, 'rb').read()))\n"
)


def _cold(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO, check=True)
    return time.perf_counter() - start


def _warm(function, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    cli = [sys.executable, "-m", "nforensics", "hlo"]
    commands = {
        "floor: python + gunzip + ParseFromString": [sys.executable, "-c", FLOOR.format(repo=str(REPO), path=str(PROTO))],
        "hlo large.pb.gz --format json": [*cli, str(PROTO), "--format", "json"],
        "hlo large.pb.gz (terminal text)": [*cli, str(PROTO)],
        "hlo large.hlo.gz --format json": [*cli, str(TEXT), "--format", "json"],
    }
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):  # interleaved, so a busy moment touches every command alike
        for name, argv in commands.items():
            samples[name].append(_cold(argv))
    floor = statistics.median(samples["floor: python + gunzip + ParseFromString"])
    print(f"cold runs, median of {runs} (target: every `hlo` run under {TARGET_SECONDS:.1f} s)")
    worst = 0.0
    for name, times in samples.items():
        median = statistics.median(times)
        worst = max(worst, median) if name.startswith("hlo") else worst
        print(f"  {name:45s} {median * 1000:7.0f} ms  {median / floor:5.2f}x floor")

    from nforensics.artifacts.hlo import read_hlo
    from nforensics.artifacts.hlo_proto import message_classes

    module_class = message_classes()["HloModuleProto"]
    parse_only = _warm(lambda: module_class.FromString(gzip.decompress(PROTO.read_bytes())), runs)
    proto = _warm(lambda: read_hlo(PROTO), runs)
    text = _warm(lambda: read_hlo(TEXT), runs)
    print(f"in process, median of {runs}")
    print(f"  {'gunzip + ParseFromString (baseline)':45s} {parse_only * 1000:7.1f} ms")
    print(f"  {'read_hlo(large.pb.gz): records + facts':45s} {proto * 1000:7.1f} ms  {proto / parse_only:5.1f}x baseline")
    print(f"  {'read_hlo(large.hlo.gz): grammar + facts':45s} {text * 1000:7.1f} ms  {text / parse_only:5.1f}x baseline")
    ok = worst < TARGET_SECONDS
    print(f"{'PASS' if ok else 'FAIL'}: slowest cold `hlo` run {worst * 1000:.0f} ms (target < {TARGET_SECONDS * 1000:.0f} ms)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
