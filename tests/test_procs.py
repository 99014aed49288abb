"""Runs cannot outlive, outwait or outgrow the orchestrator (issue 12): SIGTERM reaches every run in flight
and whatever it started, even past setsid; two `--resume` of one session never collide; input files copied
into run folders never make a fork fail with "Text file busy"; a run's output is not spooled to disk; and
neither `run` nor a run waits for a daemon that inherited its pipes.

The runs are played by tests/fakes/neuron_double.py (a TEST DOUBLE); its `leave` scenario leaves a
`sleep 120` behind, in its own session with --setsid, and records the pids.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ENV, NFORENSICS, cli, run_cli
from fakes import DOUBLE_CMD
from nforensics.experiments.journal import Journal
from nforensics.experiments.oracle import Expectation
from nforensics.experiments.plan import Template
from nforensics.experiments.runner import OUTPUT_CAP, RunSpec, execute

linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process trees are read from /proc")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie is dead, only not yet reaped by its (new) parent


def wait_dead(pids: list[int], seconds: float = 5) -> list[int]:
    deadline = time.monotonic() + seconds
    while (living := [p for p in pids if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return living


def pids_in(pidfile: Path) -> list[int]:
    return [int(p) for line in pidfile.read_text().splitlines() for p in line.split()] if pidfile.exists() else []


def run_spec(*argv: str, timeout: float | None = 60) -> RunSpec:
    return RunSpec(Template(argv=tuple(argv)).variant({}), Expectation(frozenset({"x"})), timeout)


# ------------------------------------------------------------------ nobody waits for a daemon's pipes

def test_run_returns_when_the_command_exits_not_when_its_daemon_does(tmp_path):
    started = time.monotonic()
    result = run_cli("run", "--", "sh", "-c", "echo before; sleep 15 & exit 3", cwd=tmp_path)
    elapsed = time.monotonic() - started
    assert result.returncode == 3 and result.stdout == b"before\n"
    assert elapsed < 8, f"run waited {elapsed:.1f} s for a daemon holding its pipes (was 15 s)"


@linux_only
@pytest.mark.parametrize("setsid", [False, True])
def test_a_run_returns_at_once_and_what_it_left_behind_is_killed(tmp_path, setsid):
    pidfile = tmp_path / "pids"
    started = time.monotonic()
    outcome = execute(run_spec(*DOUBLE_CMD, "leave", str(pidfile), *(["--setsid"] if setsid else [])))
    assert time.monotonic() - started < 10
    assert outcome.exit_code == 0 and "Compiler status PASS" in outcome.stdout
    left, _double = pids_in(pidfile)
    assert not wait_dead([left]), "the background sleep survived its run"


# ------------------------------------------------------------------ SIGTERM reaches every run in flight

@linux_only
def test_sigterm_to_a_sweep_kills_every_run_and_what_they_started(tmp_path):
    pidfile, journal = tmp_path / "pids", tmp_path / "j.sqlite"
    orchestrator = subprocess.Popen(
        [*NFORENSICS, "sweep", "--expect", "NCC_IXLV002", "--knob", "i=1,2,3", "--workers", "3", "--journal", str(journal),
         "--timeout", "600", "--", *DOUBLE_CMD, "leave", str(pidfile), "--setsid", "--then", "120", "--v={i}"],
        env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while len(pids_in(pidfile)) < 6 and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = pids_in(pidfile)
    assert len(pids) == 6, orchestrator.stderr.read() if orchestrator.poll() is not None else "runs did not start"
    orchestrator.send_signal(signal.SIGTERM)
    assert orchestrator.wait(timeout=30) == 128 + signal.SIGTERM
    assert not wait_dead(pids), "runs (or the daemons they started with setsid) outlived the orchestrator"


@linux_only
def test_sigterm_to_the_oracle_kills_its_run(tmp_path):
    pidfile = tmp_path / "pids"
    oracle = subprocess.Popen(
        [*NFORENSICS, "oracle", "--expect", "NCC_IXLV002", "--", *DOUBLE_CMD, "leave", str(pidfile), "--setsid", "--then", "120"],
        env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while len(pids_in(pidfile)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    oracle.send_signal(signal.SIGTERM)
    assert oracle.wait(timeout=30) == 128 + signal.SIGTERM
    assert not wait_dead(pids_in(pidfile))


# ------------------------------------------------------------------ two --resume at once

def test_a_second_resume_of_a_session_in_progress_stops_cleanly(tmp_path):
    journal = tmp_path / "j.sqlite"
    args = ["sweep", "--expect", "NCC_IXLV002", "--knob", "i=1..6", "--workers", "1", "--journal", str(journal),
            "--format", "json", "--", *DOUBLE_CMD, "sleep", "0.3", "--v={i}"]  # fmt: skip
    first = subprocess.Popen([*NFORENSICS, args[0], "--resume", *args[1:]], env=ENV,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(tmp_path.glob("j.sqlite.session-*.lock")):
        time.sleep(0.05)
    second = run_cli(args[0], "--resume", *args[1:])
    assert second.returncode == 2, second.stderr
    stderr = second.stderr.decode()
    assert "is being run by another nforensics" in stderr and "Traceback" not in stderr
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err.decode()
    assert len(json.loads(out)["runs"]) == 6
    # once the first is done, resuming works and reuses every run
    again = run_cli(args[0], "--resume", *args[1:])
    assert again.returncode == 0 and len(json.loads(again.stdout)["runs"]) == 6


def test_recording_a_run_twice_keeps_the_first_and_does_not_crash(tmp_path):
    journal = Journal(tmp_path / "j.sqlite")
    session = journal.open_session("sweep", "X", {}, resume=False)
    spec = run_spec("true")
    outcome = execute(spec)
    first = journal.record(session, "k", spec, outcome)
    second = journal.record(session, "k", spec, outcome)
    assert second.id == first.id and len(journal.session_runs(session)) == 1
    journal.close()


# ------------------------------------------------------------------ Text file busy

def test_scripts_copied_into_run_folders_never_fail_with_text_file_busy(tmp_path):
    (tmp_path / "repro.sh").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "repro.sh").chmod(0o755)
    result = cli("sweep", "--expect", "NCC_IXLV002", "--knob", "i=1..96", "--workers", "12", "--journal",
                 str(tmp_path / "j.sqlite"), "--format", "json", "--", "./repro.sh", "{i}", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    verdicts = [run["verdict"] for run in json.loads(result.stdout)["runs"]]
    assert len(verdicts) == 96 and set(verdicts) == {"PASSES"}, [v for v in verdicts if v != "PASSES"]


# ------------------------------------------------------------------ output kept in memory, bounded

def test_run_output_is_bounded_and_never_spooled_to_disk(tmp_path, monkeypatch):
    def no_spool(*_args, **_kwargs):
        raise AssertionError("a run's output went to a temporary file")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_spool)
    writer = ("import sys\nchunk = b'x' * 65535 + b'\\n'\nfor _ in range(800): sys.stdout.buffer.write(chunk)\n"
              "print('LAST LINE'); print('err tail', file=sys.stderr)")  # fmt: skip
    outcome = execute(run_spec(sys.executable, "-c", writer))  # 50 MiB
    assert outcome.exit_code == 0
    assert len(outcome.stdout.encode()) <= OUTPUT_CAP and outcome.stdout.endswith("LAST LINE\n")
    assert outcome.stderr == "err tail\n"


def test_a_timeout_still_kills_and_reports_untestable(tmp_path):
    started = time.monotonic()
    outcome = execute(run_spec(*DOUBLE_CMD, "sleep", "30", timeout=1))
    assert outcome.verdict == "UNTESTABLE" and "timeout" in outcome.note
    assert time.monotonic() - started < 10
    assert os.environ.get("NFORENSICS_RUN_ID") is None  # the mark is the run's, not ours
