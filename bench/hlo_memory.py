"""`nforensics hlo` on a 100 MB module proto: peak memory and time, against a floor measured in the same run.

Target (issue 16): memory under 300 MB for a 100 MB module. The module is made here, in a temporary folder,
from the large fixture (tests/fixtures/hlo/large.pb.gz, 5,155 instructions): its entry computation is copied
into itself with fresh ids and names until the proto is about 100 MB (about a million instructions in one
computation, the shape of a language model's graph). Measured, each in a fresh interpreter:
- the floor: an interpreter that imports nforensics' HLO reader and reads the file's bytes (the least any reader
  of the proto holds);
- `nforensics hlo big.pb --format json`, and the same on the gzipped file.
Peak RSS is each process's own high-water mark (VmHWM).

    .venv/bin/python bench/hlo_memory.py [--megabytes 100]
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
LARGE = REPO / "tests" / "fixtures" / "hlo" / "large.pb.gz"
TARGET_MB = 300

_PEAK = """
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(int(peak.split()[1]) / 1024, file=sys.stderr)
"""
_FLOOR = "import sys\nfrom nforensics.artifacts.hlo_proto import message_classes\nmessage_classes()\n" \
         "data = open(sys.argv[1], 'rb').read()\n" + _PEAK
_HLO = """
import runpy, sys
sys.argv = ["nforensics", "hlo", sys.argv[1], "--format", "json"]
try:
    runpy.run_module("nforensics", run_name="__main__")
finally:
""" + "".join(f"    {line}\n" for line in _PEAK.strip().splitlines())


def generate(megabytes: int, path: Path) -> int:
    """A module of about `megabytes` MB: the large fixture's entry computation, copied into itself. Returns its
    instruction count."""
    from nforensics.artifacts.hlo_proto import message_classes

    module = message_classes()["HloModuleProto"].FromString(gzip.decompress(LARGE.read_bytes()))
    entry = module.computations[-1]
    copies = -(-megabytes * 1_000_000 // entry.ByteSize())  # rounded up: at least `megabytes` MB
    originals = list(entry.instructions)
    next_id = 1 + max(i.id for c in module.computations for i in c.instructions)
    for copy in range(copies):
        fresh = {instruction.id: next_id + n for n, instruction in enumerate(originals)}
        next_id += len(originals)
        for instruction in originals:
            added = entry.instructions.add()
            added.CopyFrom(instruction)
            added.id, added.name = fresh[instruction.id], f"{instruction.name}.copy{copy}"
            added.operand_ids[:] = [fresh[o] for o in instruction.operand_ids]
            del added.control_predecessor_ids[:]
    path.write_bytes(module.SerializeToString())
    return sum(len(c.instructions) for c in module.computations)


def measure(code: str, path: Path) -> tuple[float, float, bytes]:
    """Seconds, peak RSS (MiB) and standard output of `code` run on `path` in a fresh interpreter."""
    start = time.perf_counter()
    child = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, cwd=REPO, check=True)
    return time.perf_counter() - start, float(child.stderr.split()[-1]), child.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=100)
    megabytes = parser.parse_args().megabytes
    with tempfile.TemporaryDirectory() as folder:
        proto, zipped = Path(folder) / "big.pb", Path(folder) / "big.pb.gz"
        instructions = generate(megabytes, proto)
        zipped.write_bytes(gzip.compress(proto.read_bytes(), compresslevel=1))
        print(f"module: {proto.stat().st_size / 1e6:.0f} MB, {instructions} instructions "
              f"({zipped.stat().st_size / 1e6:.0f} MB gzipped)")
        _, floor, _ = measure(_FLOOR, proto)
        print(f"  floor: interpreter + reader imported + the bytes read   peak {floor:6.0f} MiB")
        worst = 0.0
        for path in (proto, zipped):
            seconds, peak, out = measure(_HLO, path)
            assert f'"instructions": {instructions}'.encode() in out.replace(b'":', b'": ').replace(b'":  ', b'": ')
            worst = max(worst, peak)
            print(f"  hlo {path.name:9} --format json   {seconds:5.1f} s   peak {peak:6.0f} MiB "
                  f"({peak / floor:.2f}x floor)")
    met = worst < TARGET_MB
    print(f"peak {worst:.0f} MiB against a target of {TARGET_MB} MB: {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
