"""Usage errors a user meets (issue 15): two formats on one stream, a folder with nothing readable, a terminal
on standard input. Each is one line on stderr; the first two exit 2, like the other usage errors."""

from __future__ import annotations

import os
import pty
import subprocess
import termios

from conftest import ENV, NFORENSICS, REPO, SEED000, cli, run_cli


def test_two_formats_on_stdout_are_a_usage_error(tmp_path):
    code, out, err = cli("explain", SEED000, "--format", "json", "--format", "text")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--format json and --format text would both write to stdout" in err
    sarif = tmp_path / "n.sarif"
    code, out, err = cli("explain", SEED000, "--format", "json", "--format", f"sarif={sarif}")
    assert code == 1 and out.startswith("{") and sarif.exists() and err == ""


def test_two_formats_on_runs_stderr_are_refused_before_the_command_runs(tmp_path):
    ran = tmp_path / "ran"
    result = run_cli("run", "--format", "github", "--format", "markdown", "--", "touch", ran)
    assert result.returncode == 2 and b"would both write to stderr" in result.stderr
    assert not ran.exists()


def test_a_folder_with_nothing_readable_exits_2_like_an_empty_one(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("explain", empty).returncode == 2
    binaries = tmp_path / "binaries"
    binaries.mkdir()
    for name in ("a.neff", "b.bin"):
        (binaries / name).write_bytes(bytes(range(256)) * 64)
    code, out, err = cli("explain", binaries)
    assert code == 2 and out == ""
    assert "no file could be read: 2 skipped" in err and err.count("\n") == 1
    (binaries / "c.log").write_text(SEED000.read_text())  # one readable file: the skipped ones are notes
    code, _, err = cli("explain", binaries)
    assert code == 1 and err.count("skipped") == 2


def _explain_from_a_terminal(text: str) -> subprocess.CompletedProcess:
    """`nforensics explain -` with a pseudo-terminal on stdin (echo off), `text` typed and then Ctrl-D."""
    controller, terminal = pty.openpty()
    attrs = termios.tcgetattr(terminal)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(terminal, termios.TCSANOW, attrs)
    child = subprocess.Popen([*NFORENSICS, "explain", "-"], stdin=terminal, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=REPO, env=ENV)
    os.close(terminal)
    try:
        for line in text.splitlines():
            os.write(controller, line.encode() + b"\n")
        os.write(controller, b"\x04")  # Ctrl-D at the start of a line: end of input
        out, err = child.communicate(timeout=120)
    finally:
        os.close(controller)
    return subprocess.CompletedProcess(child.args, child.returncode, out.decode(), err.decode())


def test_a_terminal_on_stdin_gets_a_one_line_hint_and_is_still_read():
    result = _explain_from_a_terminal(SEED000.read_text())
    assert result.returncode == 1 and "NCC_IXLV002" in result.stdout
    assert result.stderr.count("\n") == 1
    assert "reading a log from the terminal" in result.stderr and "Ctrl-D" in result.stderr


def test_a_pipe_on_stdin_gets_no_hint():
    result = run_cli("explain", "-", input=SEED000.read_bytes())
    assert result.returncode == 1 and result.stderr == b""


def test_a_misspelt_option_of_run_is_no_such_option_not_a_missing_command(tmp_path):
    ran = tmp_path / "ran"
    result = run_cli("run", "--logg", "x", "--", "touch", ran)
    assert result.returncode == 2 and result.stderr.startswith(b"nforensics: No such option: --logg")
    assert not ran.exists()
    assert run_cli("run", "--", "sh", "-c", "exit 3").returncode == 3  # after `--`, everything is the command's


def test_a_reader_that_stops_early_gets_no_error_message():
    """`nforensics explain logs/ | head -1`: the pipe closing is no error of the output (before, it printed
    "cannot write <stdout>: Broken pipe" and exited 2)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write
    done = subprocess.run([*NFORENSICS, "explain", str(REPO / "sample_logs"), "--verbose"], stdout=write_end,
                          stderr=subprocess.PIPE, text=True, env=ENV, timeout=300)
    os.close(write_end)
    assert done.stderr == "" and done.returncode != 2
