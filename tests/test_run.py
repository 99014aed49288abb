"""`nforensics run -- CMD`: passthrough, exit status, signals, bounded memory, explanation on failure.

The wrapped commands are small Python/shell scripts written by the tests themselves (test doubles for a
compile or training job); they print what a real job prints and exit the way it would.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ENV, NFORENSICS, REPO, SEED000, run_cli
from nforensics import runcmd
from nforensics.runcmd import BoundedCapture

def python_child(script: str) -> list[str]:
    return ["--", sys.executable, "-c", textwrap.dedent(script)]


# ---------------------------------------------------------------- passthrough and exit status

# Not valid UTF-8, a lone \r, a NUL and no final newline: exactly what must not be "cleaned up".
ODD_STDOUT = b"progress 10%\rprogress 100%\r\nbinary \xff\xfe\x00 bytes\n\xe2\x82"
ODD_STDERR = b"warning: \xc3\x28 invalid\nno newline at end"


def test_output_passes_through_byte_for_byte_and_success_is_silent():
    child = python_child(f"""
        import sys
        sys.stdout.buffer.write({ODD_STDOUT!r}); sys.stdout.flush()
        sys.stderr.buffer.write({ODD_STDERR!r}); sys.stderr.flush()
    """)
    result = run_cli("run", *child)
    assert result.returncode == 0
    assert result.stdout == ODD_STDOUT
    assert result.stderr == ODD_STDERR  # nothing added when the command succeeds


def test_exit_status_is_the_childs():
    result = run_cli("run", "sh", "-c", "echo out; exit 125")  # 125: `git bisect run` reads it as "skip"
    assert result.returncode == 125
    assert result.stdout == b"out\n"


def test_a_reader_that_goes_away_does_not_block_the_child_or_hide_its_status():
    """`nforensics run -- job | head -1`: the child keeps running to its own end and status."""
    child = python_child("""
        import sys
        for n in range(200_000):
            print("line", n)
        sys.exit(3)
    """)
    process = subprocess.Popen([*NFORENSICS, "run", *child], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
    assert process.stdout.readline() == b"line 0\n"
    process.stdout.close()
    assert process.wait(timeout=60) == 3


def test_child_killed_by_a_signal_exits_like_a_shell_reports_it():
    result = run_cli("run", "sh", "-c", "kill -9 $$")
    assert result.returncode == 128 + signal.SIGKILL


def test_options_after_the_command_belong_to_the_command():
    result = run_cli("run", "sh", "-c", 'echo "$@"', "sh", "--format", "-x")
    assert result.returncode == 0 and result.stdout == b"--format -x\n"


def test_missing_command_is_one_line_and_exit_127_as_in_a_shell(tmp_path):
    result = run_cli("run", "--", "no-such-command-for-nforensics")
    assert result.returncode == 127
    assert result.stderr == b"nforensics: command not found: no-such-command-for-nforensics\n"
    script = tmp_path / "not-executable.sh"
    script.write_text("echo hi\n")
    script.chmod(0o644)
    refused = run_cli("run", "--", script)
    assert refused.returncode == 126 and b"not executable" in refused.stderr
    assert run_cli("run").returncode == 2  # no command at all is a usage error


def test_success_still_writes_the_requested_files(tmp_path):
    sarif, junit = tmp_path / "out" / "run.sarif", tmp_path / "run.xml"
    result = run_cli("run", "--format", f"sarif={sarif}", "--format", f"junit={junit}", "--", "true")
    assert result.returncode == 0 and result.stderr == b""
    assert json.loads(sarif.read_text())["runs"][0]["results"] == []
    assert 'failures="0"' in junit.read_text()


# ---------------------------------------------------------------- signals


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signals_are_forwarded_to_the_child(signum):
    child = python_child(f"""
        import signal, sys, time
        def stop(signum, frame):
            print("child got", signal.Signals(signum).name, flush=True)
            sys.exit(42)
        signal.signal({int(signum)}, stop)
        print("ready", flush=True)
        time.sleep(30)
    """)
    # stdin is not a terminal here, as in CI: a terminal's Ctrl-C would reach the child directly instead.
    process = subprocess.Popen(
        [*NFORENSICS, "run", *child], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    )
    assert process.stdout.readline() == b"ready\n"
    process.send_signal(signum)
    out, _ = process.communicate(timeout=30)
    assert out == f"child got {signum.name}\n".encode()
    assert process.returncode == 42


# ---------------------------------------------------------------- bounded memory on huge output


def _run_peak_mib(tmp_path: Path, blocks: int, name: str) -> tuple[int, Path, str]:
    """Our own peak RSS (not the child's) running a child that prints `blocks` MiB of 1 KiB lines and then
    seed000's compiler failure; with the JSON report path and stderr."""
    rss_file, report = tmp_path / f"{name}.maxrss", tmp_path / f"{name}.json"
    measure = (
        "import atexit, resource, sys; from nforensics.cli import main; "
        f"atexit.register(lambda: open({str(rss_file)!r}, 'w').write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))); "
        "sys.argv[0] = 'nforensics'; main()"
    )
    child = python_child(f"""
        import sys
        block = (b"x" * 1023 + b"\\n") * 1024
        write = sys.stdout.buffer.write
        for _ in range({blocks}):
            write(block)
        write(open({str(SEED000)!r}, "rb").read())
        sys.exit(70)
    """)
    process = subprocess.run(
        [sys.executable, "-c", measure, "run", "--format", f"json={report}", *child],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV, timeout=300,
    )
    assert process.returncode == 70, process.stderr
    return int(rss_file.read_text()) // 1024, report, process.stderr.decode(errors="replace")  # KiB on Linux


def test_a_child_printing_1_gib_keeps_our_memory_bounded_and_explains_its_end(tmp_path):
    """1 GiB of 1 KiB lines, then a compiler failure: our peak RSS stays within a fixed margin of the same
    run with 1 MiB of output (measured first, in this test: it also warms the caches), so memory does not
    grow with the output; and the explanation points at the failure's line numbers in the full output."""
    baseline, _, _ = _run_peak_mib(tmp_path, 1, "small")
    peak, report, _ = _run_peak_mib(tmp_path, 1024, "large")
    assert peak - baseline < 64, f"nforensics run peaked at {peak} MiB for 1 GiB of output, {baseline} MiB for 1 MiB"
    finding = json.loads(report.read_text())["findings"][0]
    assert finding["code"] == "NCC_IXLV002"
    assert finding["evidence"][0]["line"] == 1024 * 1024 + seed_failure_line()


# ---------------------------------------------------------------- explaining a failure



def seed_failure_line() -> int:
    return next(n for n, line in enumerate(SEED000.read_text().splitlines(), 1) if "[NCC_IXLV002]" in line)


def print_seed_and_fail() -> list[str]:
    return python_child(f"""
        import sys
        sys.stdout.buffer.write(open({str(SEED000)!r}, "rb").read())
        sys.exit(70)
    """)


def test_failure_is_explained_on_stderr_and_stdout_stays_the_childs():
    result = run_cli("run", *print_seed_and_fail())
    assert result.returncode == 70
    assert result.stdout == SEED000.read_bytes()
    explanation = result.stderr.decode()
    assert explanation.startswith(f"<run: {sys.executable} -c import sys ")
    assert re.search(r">: \d+ failures? diagnosed", explanation) and "[NCC_IXLV002]" in explanation


def test_failure_writes_the_requested_formats_and_the_log(tmp_path):
    summary = tmp_path / "summary.md"
    result = run_cli(
        "run", "--log", "build.log", "--format", "sarif=out/run.sarif", "--format", "github", *print_seed_and_fail(),
        cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.returncode == 70
    assert (tmp_path / "build.log").read_bytes() == SEED000.read_bytes()
    line = seed_failure_line()
    assert result.stderr.decode().startswith(f"::error file=build.log,line={line},title=NCC_IXLV002%3A ")
    sarif = json.loads((tmp_path / "out" / "run.sarif").read_text())
    location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": "build.log"}, "region": {"startLine": line}}
    assert "NCC_IXLV002" in summary.read_text()


# ---------------------------------------------------------------- the bounded capture


@pytest.fixture
def small_capture(monkeypatch) -> BoundedCapture:
    monkeypatch.setattr(runcmd, "HEAD_LINES", 3)
    monkeypatch.setattr(runcmd, "TAIL_BYTES", 60)
    monkeypatch.setattr(runcmd, "READ_SIZE", 16)
    return BoundedCapture()


def feed_in_pieces(capture: BoundedCapture, data: bytes, size: int) -> None:
    for start in range(0, len(data), size):
        capture.feed(data[start : start + size])


@pytest.mark.parametrize("piece", [1, 5, 16])  # os.read never returns more than READ_SIZE
def test_capture_keeps_head_and_tail_with_their_original_line_numbers(small_capture, piece):
    data = b"".join(b"line %d\n" % n for n in range(1, 201))
    feed_in_pieces(small_capture, data, piece)
    kept = small_capture.excerpt()
    assert kept[:4] == [(1, "line 1"), (2, "line 2"), (3, "line 3"), (kept[4][0] - 1, "")]  # the gap: one empty line
    assert kept[-1] == (200, "line 200")
    assert all(text == f"line {number}" for number, text in kept if text)
    assert sum(len(text) for _, text in kept) < 3 * 10 + 60 + 16


def test_capture_of_short_output_is_all_of_it(small_capture):
    small_capture.feed(b"a\n\nb\rc\nlast without newline")
    assert small_capture.excerpt() == [(1, "a"), (2, ""), (3, "b"), (3, "c"), (4, "last without newline")]


def test_capture_cuts_enormous_lines(monkeypatch):
    monkeypatch.setattr(runcmd, "MAX_LINE", 10)
    capture = BoundedCapture()
    capture.feed(b"y" * 1000 + b"\nshort\n")
    assert capture.excerpt() == [(1, "y" * 10), (2, "short")]


# ---------------------------------------------------------------- docs/ci.md examples


def doc_commands() -> list[str]:
    """The `nforensics run` commands of the bash examples in docs/ci.md, continuation lines joined."""
    text = (REPO / "docs" / "ci.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    joined = "\n".join(blocks).replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip().startswith("nforensics run")]


def test_docs_ci_wrapping_examples_work_as_written(tmp_path):
    """Test doubles for neuron_parallel_compile and torchrun print a seed compiler failure and exit 70."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("neuron_parallel_compile", "torchrun", "nforensics"):
        script = bin_dir / tool
        body = f'exec {sys.executable} -m nforensics "$@"' if tool == "nforensics" else f"cat {SEED000}; exit 70"
        script.write_text(f"#!/bin/sh\n# test double for {tool}\n{body}\n")
        script.chmod(0o755)
    commands = doc_commands()
    assert len(commands) == 2
    env = {**ENV, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    for command in commands:
        result = subprocess.run(["bash", "-c", command], capture_output=True, cwd=tmp_path, env=env, timeout=120)
        assert result.returncode == 70 and result.stdout == SEED000.read_bytes(), command
        assert b"[NCC_IXLV002]" in result.stderr
    assert (tmp_path / "compile.log").read_bytes() == SEED000.read_bytes()
    assert json.loads((tmp_path / "train.sarif").read_text())["runs"][0]["results"][0]["ruleId"]
