"""kill -9 of a real orchestrator mid-sweep, then `--resume`: no finished run lost, none repeated.

The runs are played by tests/fakes/neuron_double.py (a TEST DOUBLE), which logs each execution.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from collections import Counter

from conftest import ENV, NFORENSICS, cli, run_cli_text
from fakes import DOUBLE_CMD

VARIANTS = 16


def finished_runs(journal) -> list[tuple]:
    try:
        with sqlite3.connect(journal) as db:
            return list(db.execute("SELECT id, session, key, knobs FROM runs ORDER BY id"))
    except sqlite3.OperationalError:  # not created yet
        return []


def test_kill_9_then_resume_loses_nothing_and_repeats_nothing(tmp_path):
    journal, log = tmp_path / "journal.sqlite", tmp_path / "executions.log"
    args = ["sweep", "--expect", "NCC_IXLV002", "--knob", f"i=1..{VARIANTS}", "--workers", "2",
            "--journal", str(journal), "--format", "json",
            "--", *DOUBLE_CMD, "sleep", "0.25", "--variant={i}", "--log", str(log)]  # fmt: skip
    orchestrator = subprocess.Popen([*NFORENSICS, *args], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while len(finished_runs(journal)) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    orchestrator.send_signal(signal.SIGKILL)
    orchestrator.wait()
    before = finished_runs(journal)
    assert 4 <= len(before) < VARIANTS, "the sweep should have been killed in the middle"
    time.sleep(0.5)  # runs orphaned by the kill finish on their own; their results were never journaled
    assert finished_runs(journal) == before

    resumed = run_cli_text(args[0], "--resume", *args[1:])  # before `--`: after it, it is the command's
    assert resumed.returncode == 0, resumed.stderr
    after = finished_runs(journal)
    assert after[: len(before)] == before  # nothing lost or rewritten
    keys = Counter(key for _, _, key, _ in after)
    assert len(keys) == VARIANTS and set(keys.values()) == {1}  # every variant exactly once
    assert {session for _, session, _, _ in after} == {before[0][1]}  # the same session, continued

    # The double logged every execution: variants finished before the kill ran once, not again.
    executions = Counter(line.split("--variant=")[1].split()[0] for line in log.read_text().splitlines())
    for _, _, _, knobs in before:
        assert executions[json.loads(knobs)["i"]] == 1
    assert len(json.loads(resumed.stdout)["runs"]) == VARIANTS


def test_without_resume_a_new_session_runs_everything_again(tmp_path):
    journal = tmp_path / "journal.sqlite"
    args = ["sweep", "--expect", "NCC_IXLV002", "--knob", "i=1,2", "--journal", str(journal), "--", *DOUBLE_CMD, "ok", "--v={i}"]
    assert cli(*args).returncode == 0
    assert cli(*args).returncode == 0
    assert cli(args[0], "--resume", *args[1:]).returncode == 0
    sessions = Counter(session for _, session, _, _ in finished_runs(journal))
    assert sessions == {1: 2, 2: 2}
