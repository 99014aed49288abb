"""A huge log is streamed: peak memory does not grow with the input's size, and the failure at its very
end is still found. (bench/large_log.py runs the 1 GB case and reports throughput.)"""

from __future__ import annotations

import json
import os
import subprocess
import threading

from conftest import NFORENSICS, REPO, SEED000

CHATTER = (
    "2026-03-02T18:20:31Z INFO 48240 [sg0000/Tensorizer/BirCodeGenLoop]: Running BirCodeGenLoop\n"
    "2026-Mar-02 18:20:40.123456 48240:48241 INFO  NRT:nrt_load    Loaded model in 12 ms\n"
    "2026-03-02T18:20:35Z WARNING 48240 [StaticProfiler]: matmul-based transposes take up 9.1 percent\n"
    "step 1200 loss 2.3456 lr 0.0003 throughput 812.4 samples/s\n"
).encode()


def _explain_stream(megabytes: int) -> tuple[int, dict]:
    """Pipe N MiB of chatter plus the seed failure into `explain -`; (peak RSS in KiB, JSON output)."""
    child = subprocess.Popen([*NFORENSICS, "explain", "-", "--format", "json"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=REPO)
    output: list[bytes] = []
    reader = threading.Thread(target=lambda: output.append(child.stdout.read()))
    reader.start()
    block = CHATTER * (65536 // len(CHATTER))
    for _ in range((megabytes << 20) // len(block)):
        child.stdin.write(block)
    child.stdin.write(SEED000.read_bytes())
    child.stdin.close()
    reader.join()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    assert child.returncode == 1
    return usage.ru_maxrss, json.loads(output[0])


def test_memory_stays_flat_and_the_last_failure_is_found():
    small_rss, _ = _explain_stream(1)
    large_rss, document = _explain_stream(12)
    assert document["findings"][0]["code"] == "NCC_IXLV002"
    assert document["inputs"][0]["total_lines"] > 150_000
    # Twelve times the input may not cost more than a few MiB: nothing grows with the line count.
    assert large_rss - small_rss < 12 * 1024, (small_rss, large_rss)
