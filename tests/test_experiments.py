"""Experiments: the oracle, the runner's isolation, sweeps, bisection, ddmin, confirm, the journal and plans.

Runs are driven by tests/fakes/neuron_double.py, a TEST DOUBLE for neuronx-cc and the seed reproducers.
"""

from __future__ import annotations

import json
import math
import os
import random
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO, assert_clean_error, cli, run_cli_text
from fakes import DOUBLE_CMD
from nforensics.experiments import strategies
from nforensics.experiments.journal import Journal, sessions_of
from nforensics.render.experiments import journal_markdown
from nforensics.experiments.oracle import PASSES, REPRODUCES, Expectation
from nforensics.experiments.plan import Template, confirm_variants
from nforensics.experiments.runner import Experiment, Outcome, RunSpec, execute

DOUBLE = " ".join(DOUBLE_CMD)
pytestmark = pytest.mark.usefixtures("no_package_index")  # confirm plans may ask pip for a release

IXLV002 = Expectation(frozenset({"ncc_ixlv002"}))


def journal_rows(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return list(db.execute("SELECT session, key, attempt, verdict, stdout, stderr FROM runs ORDER BY id"))


# ---------------------------------------------------------------- the oracle


@pytest.mark.parametrize(
    "args, expect, exit_code, verdict",
    [
        (["sendrecv", "--n-layers", "2", "--out-dim", "128"], "NCC_IXLV002", 0, "REPRODUCES"),
        (["sendrecv", "--n-layers", "1", "--out-dim", "128"], "NCC_IXLV002", 1, "PASSES"),
        (["other"], "NCC_IXLV002", 1, "DIFFERENT_FAILURE"),  # it failed, but not the way we expect
        (["conv", "--kernel", "7", "--target", "trn1"], "TEN404", 0, "REPRODUCES"),  # legacy alias of NCC_ITEN404
        (["oom"], "NCC_IXLV002", 125, "UNTESTABLE"),  # killed by SIGKILL: the host, not the bug
        (["nodevice"], "NCC_IXLV002", 125, "UNTESTABLE"),  # infrastructure, as the knowledge base files it
        (["hostoom"], "NCC_IXLV002", 125, "UNTESTABLE"),  # the compiler child was OOM-killed
        (["hostoom"], "neuronx-cc-killed-host-oom", 0, "REPRODUCES"),  # unless that is what we are after
    ],
)
def test_oracle_verdicts_and_exit_codes(args, expect, exit_code, verdict):
    result = cli("oracle", "--expect", expect, "--", *DOUBLE_CMD, *args)
    assert result.returncode == exit_code, result.stderr
    assert result.stdout.startswith(verdict)


def test_oracle_as_the_script_of_git_bisect_run(tmp_path):
    """The installed entry point, in its own process: exit 0 means "bad" (reproduces) to git bisect."""
    result = run_cli_text("oracle", "--expect", "NCC_IXLV002", "--", *DOUBLE_CMD, "sendrecv", "--n-layers", "3", "--out-dim", "64")
    assert (result.returncode, result.stdout.split()[:2]) == (0, ["REPRODUCES", "(NCC_IXLV002,"])


def test_oracle_timeout_and_missing_command_are_untestable():
    slow = cli("oracle", "--expect", "NCC_IXLV002", "--timeout", "0.3", "--", *DOUBLE_CMD, "sleep", "5")
    assert (slow.returncode, slow.stdout.split()[0]) == (125, "UNTESTABLE")
    assert "timeout after 0.3 s" in slow.stdout
    missing = cli("oracle", "--expect", "NCC_IXLV002", "--", "no-such-command-nforensics")
    assert missing.returncode == 125 and "command not found" in missing.stdout


def test_oracle_needs_expect_and_a_command():
    result = cli("oracle", "--", "true")
    assert_clean_error(result.returncode, result.stderr, "--expect")
    result = cli("oracle", "--expect", "X")
    assert result.returncode == 2 and result.stderr.startswith("nforensics: no command")


def _live_members(pgid: int) -> list[int]:
    """Processes (zombies excepted) whose process group is pgid, from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except (OSError, ValueError):
            continue
        state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == pgid and state != "Z":
            members.append(int(entry))
    return members


def test_timeout_kills_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "pids"
    # The shell leaves a background grandchild and hangs; it writes its pid (= its process group, as the
    # leader of the run's own session) and the grandchild's.
    script = 'sleep 60 & echo "$$ $!" > "$0"; sleep 60'
    outcome = execute(RunSpec(Template(argv=("sh", "-c", script, str(pidfile))).variant({}), IXLV002, timeout=0.5))
    assert outcome.verdict == "UNTESTABLE" and "timeout" in outcome.note
    pgid, grandchild = (int(x) for x in pidfile.read_text().split())
    assert os.getpgid(0) != pgid  # not ours: the run had its own process group
    deadline = time.monotonic() + 2
    while _live_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _live_members(pgid) == [], "a process of the timed-out run is still alive"
    assert grandchild not in _live_members(pgid)


# ---------------------------------------------------------------- the runner through `sweep`


def test_each_run_has_its_own_directory_and_keeps_its_output(tmp_path):
    journal = tmp_path / "j.sqlite"
    script = "pwd; ls; touch left-behind; echo out-{i}; echo err-{i} >&2"
    result = cli("sweep", "--expect", "NCC_IXLV002", "--knob", "i=1,2,3", "--journal", str(journal),
                        "--", "sh", "-c", script)  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = journal_rows(journal)
    assert [r[3] for r in rows] == [PASSES] * 3
    directories = {r[4].splitlines()[0] for r in rows}
    assert len(directories) == 3  # three different working directories
    for _, _, _, _, stdout, stderr in rows:
        assert "left-behind" not in stdout  # nothing leaks from one run into another
        assert stdout.splitlines()[-1].startswith("out-") and stderr.strip().startswith("err-")
    assert not any(Path(d).exists() for d in directories)  # temporary directories are removed


def test_identical_variants_run_once(tmp_path):
    log = tmp_path / "executions.log"
    result = cli("sweep", "--expect", "NCC_IXLV002", "--knob", "n=2,2,1,2", "--format", "json",
                        "--journal", str(tmp_path / "j.sqlite"),
                        "--", *DOUBLE_CMD, "sendrecv", "--n-layers", "{n}", "--out-dim", "128", "--log", str(log))  # fmt: skip
    assert result.returncode == 0, result.stderr
    runs = json.loads(result.stdout)["runs"]
    assert [r["verdict"] for r in runs] == [REPRODUCES, REPRODUCES, PASSES, REPRODUCES]
    assert len(log.read_text().splitlines()) == 2  # n=2 once, n=1 once


def test_sweep_json_shape_matrix_and_env_knobs(tmp_path):
    result = cli("sweep", "--expect", "NCC_INLA001", "--knob", "bf16=0,1", "--knob", "layers=2,20",
                        "--env", "XLA_USE_BF16={bf16}", "--env", "NEURON_CC_FLAGS=--auto-cast=none",
                        "--format", "json", "--journal", str(tmp_path / "j.sqlite"),
                        "--", *DOUBLE_CMD, "bf16", "--layers", "{layers}")  # fmt: skip
    assert result.returncode == 0, result.stderr
    runs = json.loads(result.stdout)["runs"]
    assert all(set(r) == {"knobs", "verdict", "code", "seconds"} for r in runs)
    table = {(r["knobs"]["bf16"], r["knobs"]["layers"]): (r["verdict"], r["code"]) for r in runs}
    assert table == {
        ("0", "2"): (PASSES, None),
        ("0", "20"): (PASSES, None),
        ("1", "2"): (PASSES, None),
        ("1", "20"): (REPRODUCES, "NCC_INLA001"),
    }


def test_sweep_text_shows_a_table_and_a_progress_summary(tmp_path):
    result = cli("sweep", "--expect", "NCC_IXLV002", "--knob", "n=1,2", "--journal", str(tmp_path / "j"),
                        "--", *DOUBLE_CMD, "sendrecv", "--n-layers", "{n}", "--out-dim", "64")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "REPRODUCES" in result.stdout and "NCC_IXLV002" in result.stdout
    assert "2 variants: 1 REPRODUCES, 1 PASSES" in result.stdout
    assert "2/2" in result.stderr and "REPRODUCES 1" in result.stderr and "ETA" in result.stderr  # progress bar


def test_text_output_shows_values_with_brackets_literally(tmp_path):
    result = cli("sweep", "--expect", "NCC_IXLV002", "--knob", "buckets=[512/[/]", "--journal", str(tmp_path / "j"),
                 "--", "echo", "{buckets}")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "[512/[/]" in result.stdout


def test_repeat_marks_flaky_verdicts_and_a_tie_is_not_reproducing(tmp_path):
    result = cli("sweep", "--expect", "NCC_IXLV002", "--knob", "x=a", "--repeat", "4", "--workers", "1",
                        "--format", "json", "--journal", str(tmp_path / "j"),
                        "--", *DOUBLE_CMD, "flaky", str(tmp_path / "counter-{x}"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    (run,) = json.loads(result.stdout)["runs"]
    assert run["flaky"] == "2/4 reproduce"
    assert run["verdict"] == PASSES
    assert len(journal_rows(tmp_path / "j")) == 4


def test_usage_errors_are_one_line(tmp_path):
    cases = [
        (["sweep", "--knob", "n=1", "--", "echo", "{n}"], "--expect CODE is required"),
        (["sweep", "--expect", "X", "--knob", "n=1", "--", "echo", "hi"], "knob n is not used by the command"),
        (["sweep", "--expect", "X", "--knob", "n", "--", "echo", "{n}"], "--knob must look like NAME=VALUE"),
        (["bisect", "--expect", "X", "--knob", "n=5..1", "--", "echo", "{n}"], "runs backwards"),
        (["sweep", "--expect", "X", "--knob", "n=1", "--repeat", "0", "--", "echo", "{n}"], "--repeat must be at least 1"),
        (["sweep", "--expect", "X", "--knob", "n=1", "--timeout", "0", "--", "echo", "{n}"], "--timeout must be a positive"),
        (["reduce", "--expect", "X", "--items", "a b", "--", "echo"], "needs {items} in the command"),
        (["sweep", "--plan", str(tmp_path / "missing.toml")], "cannot read plan"),
    ]
    for args, message in cases:
        result = cli(*args, "--journal", str(tmp_path / "j"), cwd=tmp_path)
        assert_clean_error(result.returncode, result.stderr, message)


# ---------------------------------------------------------------- bisect


def test_bisect_finds_the_boundary_within_budget(tmp_path):
    log = tmp_path / "executions.log"
    result = cli("bisect", "--expect", "NCC_INLA001", "--knob", "layers=1..40", "--format", "json",
                        "--env", "XLA_USE_BF16=1", "--env", "NEURON_CC_FLAGS=--auto-cast=none",
                        "--journal", str(tmp_path / "j"),
                        "--", *DOUBLE_CMD, "bf16", "--layers", "{layers}", "--log", str(log))  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"boundary", "runs", "monotone", "fixes"}
    assert data["boundary"] == "20" and data["monotone"] is True
    assert data["runs"] <= math.ceil(math.log2(40)) + 2
    assert len(log.read_text().splitlines()) == data["runs"]  # every run counted, none repeated


def test_bisect_warns_when_not_monotone(tmp_path):
    # Two kernel calls fail with a small projection and pass with a large one: decreasing, not increasing.
    result = cli("bisect", "--expect", "NCC_IXLV002", "--knob", "d=64,128,256,2048", "--format", "json",
                        "--journal", str(tmp_path / "j"),
                        "--", *DOUBLE_CMD, "sendrecv", "--n-layers", "2", "--out-dim", "{d}")  # fmt: skip
    data = json.loads(result.stdout)
    assert data["monotone"] is False and data["runs"] == 2
    assert "not monotone in d" in result.stderr


def test_bisect_never_counts_a_different_failure_as_reproducing(tmp_path):
    # Every value fails, but with NCC_EOOM001: there is no boundary for NCC_IXLV002.
    result = cli("bisect", "--expect", "NCC_IXLV002", "--knob", "n=1..8", "--format", "json",
                        "--journal", str(tmp_path / "j"), "--", *DOUBLE_CMD, "other", "--n={n}")  # fmt: skip
    assert json.loads(result.stdout) == {"boundary": None, "runs": 2, "monotone": True, "fixes": False}
    assert result.returncode == 1


class PredicateBackend:
    """An in-memory Backend (the interface a cluster backend implements): judges a variant by a predicate."""

    workers = 3

    def __init__(self, predicate) -> None:
        self.predicate = predicate
        self.calls = 0

    def run(self, specs):
        for spec in specs:
            self.calls += 1
            verdict = REPRODUCES if self.predicate(spec.variant.argv[1:]) else PASSES
            yield spec, Outcome(verdict, None, 0, 0.0, "", "", "")

    def close(self) -> None:
        pass


def _experiment(tmp_path: Path, predicate) -> Experiment:
    journal = Journal(tmp_path / f"j{random.random()}.sqlite")
    session = journal.open_session("test", "X", {}, resume=False)
    return Experiment(journal, session, PredicateBackend(predicate), IXLV002)


def test_bisect_run_budget_over_many_boundaries(tmp_path):
    rng = random.Random(7)
    for n in [1, 2, 3, 5, 8, 13, 64, 100]:
        for boundary in sorted({0, n - 1, n, *(rng.randrange(n) for _ in range(3))}):
            exp = _experiment(tmp_path, lambda argv, b=boundary: int(argv[0]) >= b)
            result = strategies.bisect(exp, Template(argv=("cmd", "{k}")), "k", [str(i) for i in range(n)])
            assert result.runs <= math.ceil(math.log2(n)) + 2, (n, boundary)
            assert result.boundary == (str(boundary) if boundary < n else None)
            assert exp.backend.calls == result.runs  # no value run twice
            exp.journal.close()


# ---------------------------------------------------------------- reduce (ddmin)


def test_ddmin_is_one_minimal_and_exact_for_monotone_failures(tmp_path):
    rng = random.Random(11)
    for _ in range(25):
        items = [f"item-{i}" for i in range(rng.randint(1, 16))]
        target = set(rng.sample(items, rng.randint(0, min(3, len(items)))))
        exp = _experiment(tmp_path, lambda argv, t=target: t <= set(argv))
        result = strategies.reduce(exp, Template(argv=("cmd", "{items}")), items, batch=rng.choice([1, 3]))
        assert set(result.minimal) == target, (items, target)
        assert exp.backend.calls == result.runs  # a subset is never tested twice
        exp.journal.close()


def test_ddmin_result_is_one_minimal_for_an_arbitrary_predicate(tmp_path):
    rng = random.Random(5)
    for _ in range(25):
        items = [f"item-{i}" for i in range(rng.randint(2, 10))]
        verdicts: dict[frozenset, bool] = {}

        def fails(argv, verdicts=verdicts, items=items):  # a random but deterministic, non-monotone predicate
            return verdicts.setdefault(frozenset(argv), len(argv) == len(items) or rng.random() < 0.3)

        exp = _experiment(tmp_path, fails)
        result = strategies.reduce(exp, Template(argv=("cmd", "{items}")), items, batch=2)
        assert fails(result.minimal)
        for dropped in result.minimal:  # 1-minimal: removing any single item stops the failure
            assert not fails([i for i in result.minimal if i != dropped])
        exp.journal.close()


def test_reduce_cli_finds_the_two_settings_that_trigger_inla001(tmp_path):
    items = "FOO=1 XLA_USE_BF16=1 BAR=2 NEURON_CC_FLAGS=--auto-cast=none BAZ=3 QUX=4"
    result = cli("reduce", "--expect", "NCC_INLA001", "--items", items, "--format", "json",
                        "--journal", str(tmp_path / "j"), "--", "env", "{items}", *DOUBLE_CMD, "bf16", "--layers", "20")  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"minimal", "runs"}
    assert data["minimal"] == ["XLA_USE_BF16=1", "NEURON_CC_FLAGS=--auto-cast=none"]
    assert data["runs"] == len(journal_rows(tmp_path / "j"))
    for dropped in data["minimal"]:  # 1-minimal, checked with the oracle itself
        rest = [i for i in data["minimal"] if i != dropped]
        check = cli("oracle", "--expect", "NCC_INLA001", "--", "env", *rest, *DOUBLE_CMD, "bf16", "--layers", "20")
        assert check.returncode == 1


def test_reduce_flags_and_a_different_failure_is_not_reproducing(tmp_path):
    flags = "--enable-saturate-infinity -O1 --auto-cast=none --model-type=transformer"
    ok = cli("reduce", "--expect", "NCC_INLA001", "--items", flags, "--env", "XLA_USE_BF16=1",
                    "--journal", str(tmp_path / "j"), "--", *DOUBLE_CMD, "bf16", "--layers", "40", "{items}")  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("minimal: --auto-cast=none\n")
    other = cli("reduce", "--expect", "NCC_INLA001", "--items", flags, "--format", "json",
                       "--journal", str(tmp_path / "j2"), "--", *DOUBLE_CMD, "other", "{items}")  # fmt: skip
    assert json.loads(other.stdout) == {"minimal": None, "runs": 2}
    assert other.returncode == 1 and "does not reproduce" in other.stderr


# ---------------------------------------------------------------- journal: Markdown, CSV, Parquet


def test_journal_markdown_csv_and_parquet(tmp_path):
    journal, csv, parquet = tmp_path / "j.sqlite", tmp_path / "runs.csv", tmp_path / "runs.parquet"
    result = cli("sweep", "--expect", "NCC_IXLV002", "--knob", "n=1,2", "--knob", "d=128,2048",
                        "--journal", str(journal), "--csv", str(csv), "--parquet", str(parquet),
                        "--", *DOUBLE_CMD, "sendrecv", "--n-layers", "{n}", "--out-dim", "{d}")  # fmt: skip
    assert result.returncode == 0, result.stderr
    markdown = journal_markdown(sessions_of(journal))
    lines = markdown.splitlines()
    assert lines[0] == "`nforensics sweep` expecting `NCC_IXLV002` (4 runs):"
    assert lines[2] == "| # | n | d | command | env | verdict | code | seconds |"
    assert sum("| REPRODUCES | NCC_IXLV002 |" in line for line in lines) == 1
    import csv as csv_module

    pq = pytest.importorskip("pyarrow.parquet")
    with open(csv, newline="") as f:
        from_csv = list(csv_module.DictReader(f))
    for rows in (from_csv, pq.read_table(parquet).to_pylist()):
        assert len(rows) == 4
        assert set(rows[0]) >= {"knob.n", "knob.d", "verdict", "code", "seconds", "command"}
        failing = [r for r in rows if r["verdict"] == REPRODUCES]
        assert [(str(r["knob.n"]), str(r["knob.d"])) for r in failing] == [("2", "128")]


def test_markdown_table_of_a_missing_journal_is_an_input_error(tmp_path):
    from nforensics.errors import InputError

    with pytest.raises(InputError, match="no experiment journal"):
        sessions_of(tmp_path / "nothing.sqlite")


# ---------------------------------------------------------------- plans


def test_plan_file_with_cases_and_a_command_relative_to_the_plan(tmp_path):
    team = tmp_path / "repro"
    team.mkdir()
    (team / "repro.py").write_text(
        "import runpy, sys\n"
        f"sys.argv = [{DOUBLE_CMD[1]!r}] + sys.argv[1:]\n"
        f"runpy.run_path({DOUBLE_CMD[1]!r}, run_name='__main__')\n"
    )
    (team / "plan.toml").write_text(
        'expect = "NCC_ITEN404"\n'
        f'command = ["{DOUBLE_CMD[0]}", "repro.py", "conv", "--kernel", "{{k}}", "--target", "{{target}}"]\n'
        "cases = [{k = 7, target = 'trn1'}, {k = 3, target = 'trn1'}, {k = 7, target = 'trn2'}]\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = cli("sweep", "--plan", str(team / "plan.toml"), "--format", "json", cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    verdicts = [(r["knobs"]["k"], r["knobs"]["target"], r["verdict"]) for r in json.loads(result.stdout)["runs"]]
    assert verdicts == [("7", "trn1", REPRODUCES), ("3", "trn1", PASSES), ("7", "trn2", PASSES)]
    assert (elsewhere / ".nforensics" / "journal.sqlite").is_file()  # the default journal


def test_a_bad_plan_names_the_field(tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text('expect = "X"\ncommand = ["echo"]\nknobz = {a = [1]}\n')
    result = cli("sweep", "--plan", str(plan), cwd=tmp_path)
    assert_clean_error(result.returncode, result.stderr, "knobz")


def test_changing_an_input_file_makes_a_new_variant(tmp_path):
    script = tmp_path / "repro.sh"
    script.write_text("echo first\n")
    journal = tmp_path / "j"
    args = ["sweep", "--expect", "NCC_IXLV002", "--knob", "n=1", "--journal", str(journal), "--resume", "--", "sh", "repro.sh", "{n}"]
    assert cli(*args, cwd=tmp_path).returncode == 0
    assert cli(*args, cwd=tmp_path).returncode == 0  # resumed: nothing new to run
    assert len(journal_rows(journal)) == 1
    script.write_text("echo second\n")
    assert cli(*args, cwd=tmp_path).returncode == 0
    rows = journal_rows(journal)
    assert len(rows) == 2 and rows[1][4].strip() == "second"


# ---------------------------------------------------------------- confirm


def test_confirm_runs_the_knowledge_base_checks(tmp_path):
    log = tmp_path / "failure.log"
    failing = subprocess.run([*DOUBLE_CMD, "sendrecv", "--n-layers", "2", "--out-dim", "128"], capture_output=True, text=True)
    log.write_text(failing.stderr)
    repro = f"{DOUBLE} sendrecv --n-layers {{n_layers}} --out-dim {{out_dim}}"
    result = cli("confirm", str(log), "--repro", repro, "--knob", "n_layers=2", "--knob", "out_dim=128",
                        "--format", "json", "--journal", str(tmp_path / "j"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["code"] == "NCC_IXLV002" and data["baseline"]["verdict"] == REPRODUCES
    status = {h["id"]: (h["status"], h["run"] and h["run"]["knobs"]) for h in data["hypotheses"]}
    assert status["sendrecv-kernel-called-twice"] == ("confirmed", {"n_layers": "1", "out_dim": "128"})
    assert status["small-output-matmul-after-kernel"] == ("confirmed", {"n_layers": "2", "out_dim": "256"})
    matrix = next(h for h in data["hypotheses"] if h["id"] == "small-output-matmul-after-kernel")
    assert [run["knobs"]["out_dim"] for run in matrix["runs"]] == ["256", "2048"]  # the seed's own passing rows
    assert status["lnc2-default-on-trn2"][0] == "not checked"

    # A reproducer that ignores out_dim: raising it changes nothing, so that hypothesis is refuted.
    deaf = f"{DOUBLE} sendrecv --n-layers {{n_layers}} --out-dim 128 --tag={{out_dim}}"
    text = cli("confirm", str(log), "--repro", deaf, "--knob", "n_layers=2", "--knob", "out_dim=128",
                      "--journal", str(tmp_path / "j2"))  # fmt: skip
    assert text.returncode == 0, text.stderr
    line = next(line for line in text.stdout.splitlines() if "small-output-matmul" in line)
    assert "refuted" in line
    assert "confirmed" in next(line for line in text.stdout.splitlines() if "sendrecv-kernel-called" in line)
    assert "baseline: REPRODUCES" in text.stdout


def test_confirm_when_the_baseline_does_not_reproduce(tmp_path):
    log = tmp_path / "failure.log"
    log.write_text("[INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers to have name\n"
                   "A, but core barrier 1 in subgraph 0\non core 1 has name B\n")  # fmt: skip
    repro = f"{DOUBLE} sendrecv --n-layers {{n_layers}} --out-dim {{out_dim}}"
    result = cli("confirm", str(log), "--repro", repro, "--knob", "n_layers=2", "--knob", "out_dim=4096",
                        "--format", "json", "--journal", str(tmp_path / "j"))  # fmt: skip
    data = json.loads(result.stdout)
    assert result.returncode == 1 and data["baseline"]["verdict"] == PASSES
    assert {h["status"] for h in data["hypotheses"] if h["run"]} == {"inconclusive"}


COMPILE_THEN_NOTHING = """\
2024-04-12 07:13:06.000297:  271334  INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: neuronx-cc compile --target=trn1 --framework=XLA model.hlo_module.pb --output model.neff --verbose=35
"""


@pytest.mark.parametrize(("exit_code", "verdict"), [(0, "PASSES"), (1, "DIFFERENT_FAILURE")])
def test_a_run_whose_output_stops_at_a_compile_passes_if_it_exited_0(exit_code, verdict):
    """The output ends inside the compile it announced, which in a pasted log reads as a hang: a run that
    exited 0 did not hang there (its compiler printed nothing more), one that failed did fail."""
    from nforensics.experiments.oracle import expectation, judge

    assert judge(exit_code, COMPILE_THEN_NOTHING, expectation("NCC_IXLV002")).verdict == verdict


def test_judging_counts_against_the_runs_timeout(monkeypatch):
    """A run that finished in time but whose output takes the judge past the deadline is a timeout too:
    `--timeout` bounds the whole attempt, not only the command."""
    import nforensics.experiments.runner as runner

    real = runner.judge

    def slow_judge(*args):
        time.sleep(1.5)
        return real(*args)

    monkeypatch.setattr(runner, "judge", slow_judge)
    started = time.monotonic()
    outcome = execute(RunSpec(Template(argv=("echo", "done")).variant({}), IXLV002, timeout=0.5))
    assert outcome.verdict == "UNTESTABLE" and "judging" in outcome.note
    assert time.monotonic() - started < 1.4  # not held up by the judge it gave up on
    assert outcome.seconds >= 0.5
    plain = execute(RunSpec(Template(argv=("echo", "done")).variant({}), IXLV002, timeout=5))
    assert plain.verdict != "UNTESTABLE"  # a judge within the time is waited for


def test_confirm_plan_prints_the_runs_and_their_cost_and_runs_nothing(tmp_path):
    log = tmp_path / "failure.log"
    failing = subprocess.run([*DOUBLE_CMD, "sendrecv", "--n-layers", "2", "--out-dim", "128"], capture_output=True, text=True)
    log.write_text(failing.stderr)
    repro = f"{DOUBLE} sendrecv --n-layers {{n_layers}} --out-dim {{out_dim}}"
    common = ("confirm", str(log), "--repro", repro, "--knob", "n_layers=2", "--knob", "out_dim=128",
              "--journal", str(tmp_path / "j"), "--plan")
    result = cli(*common, "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    planned = {h["id"]: h for h in data["hypotheses"]}
    assert planned["sendrecv-kernel-called-twice"]["runs"][0]["command"][-3:] == ["1", "--out-dim", "128"]
    assert planned["lnc2-default-on-trn2"]["why_not"] and planned["lnc2-default-on-trn2"]["runs"] == []
    runs = 1 + sum(len(h["runs"]) for h in data["hypotheses"])
    # NCC_IXLV002 is a compile's failure: the baseline and every check compile, none needs a NeuronCore.
    assert data["baseline_tier"] == "compile" and {h["tier"] for h in data["hypotheses"]} == {"compile"}
    assert data["cost"] == {"runs": runs, "compiles": runs, "device_runs": 0, "neuron_cores_per_run": 0}
    assert not (tmp_path / "j").exists()  # nothing ran, nothing was journaled
    text = cli(*common).stdout
    assert f"cost: {runs} runs: {runs} compiles, no device run" in text and "Nothing was run." in text
    assert "sendrecv-kernel-called-twice: [compile]" in text


def test_confirm_plan_of_a_matrix_runs_every_cell_but_the_baseline(tmp_path):
    """Seed 003: XLA_USE_BF16 x --auto-cast, the cell that is the failing baseline left out."""
    log = tmp_path / "failure.log"
    env = {**os.environ, "XLA_USE_BF16": "1", "NEURON_CC_FLAGS": "--auto-cast=none"}
    log.write_text(subprocess.run([*DOUBLE_CMD, "bf16", "--layers", "20"], capture_output=True, text=True, env=env).stderr)
    common = ("confirm", str(log), "--repro", f"{DOUBLE} bf16 --layers {{n_layers}}", "--knob", "n_layers=20",
              "--env", "XLA_USE_BF16=1", "--env", "NEURON_CC_FLAGS=--auto-cast=none", "--journal", str(tmp_path / "j"))
    plan = json.loads(cli(*common, "--plan", "--format", "json").stdout)
    cells = {(r["env"]["XLA_USE_BF16"], r["env"]["NEURON_CC_FLAGS"])
             for h in plan["hypotheses"] if h["id"] == "global-bf16-with-autocast-none" for r in h["runs"]}
    assert cells == {("0", "--auto-cast=none"), ("1", "--auto-cast=matmult"), ("0", "--auto-cast=matmult")}
    result = json.loads(cli(*common, "--format", "json").stdout)
    check = next(h for h in result["hypotheses"] if h["id"] == "global-bf16-with-autocast-none")
    assert check["status"] == "confirmed" and len(check["runs"]) == 3 and "(3/3 runs)" in check["reason"]
    # The report's own fix (cast the model, drop XLA_USE_BF16) runs where the reproducer takes the dtype.
    cast = next(h for h in result["hypotheses"] if h["id"] == "global-cast-not-bf16")
    assert cast["status"] == "not checked" and "{model_dtype}" in cast["reason"]
    with_dtype = [*common[:3], f"{DOUBLE} bf16 --layers {{n_layers}} --dtype {{model_dtype}}", "--knob", "n_layers=20",
                  "--knob", "model_dtype=f32", *common[6:-2], "--journal", str(tmp_path / "j2")]
    result = json.loads(cli(*with_dtype, "--format", "json").stdout)
    cast = next(h for h in result["hypotheses"] if h["id"] == "global-cast-not-bf16")
    assert cast["status"] == "confirmed" and cast["runs"][0]["knobs"]["model_dtype"] == "bf16"


def _tiered_signature():
    from nforensics.knowledge.schema import Confirm, HypothesisSpec

    class Signature:  # the two fields confirm reads, with one check per tier
        id, component = "tiered", "compiler"
        hypotheses = [
            HypothesisSpec(id="by-compile", title="c", confirm=Confirm(description="x=1", expect=PASSES, knobs={"x": "1"})),
            HypothesisSpec(id="on-device", title="d",
                           confirm=Confirm(description="y=1", expect=PASSES, knobs={"y": "1"}, tier="device")),
        ]
    return Signature


@pytest.mark.parametrize(("fixed_by_x", "device_status"), [(True, "not checked"), (False, "refuted")])
def test_device_checks_run_only_when_the_compile_tier_did_not_decide(tmp_path, fixed_by_x, device_status):
    exp = _experiment(tmp_path, lambda argv: not (fixed_by_x and argv[0] == "1"))
    result = strategies.confirm(exp, Template(argv=("cmd", "{x}", "{y}")), {"x": "0", "y": "0"}, _tiered_signature(), None)
    status = {c.id: (c.status, c.tier) for c in result.checks}
    assert status["by-compile"] == ("confirmed" if fixed_by_x else "refuted", "compile")
    assert status["on-device"] == (device_status, "device")
    assert exp.backend.calls == (2 if fixed_by_x else 3)  # the device run is made only when it can decide
    exp.journal.close()


def test_confirm_plans_the_release_that_fixed_it_when_the_knowledge_base_knows_one():
    from nforensics.knowledge.schema import FixedInSpec

    class Fixed:  # what confirm reads of a signature whose failure a compiler release fixed
        id, component, hypotheses = "fixed", "compiler", []
        fixed_in = FixedInSpec(version="2.24.5133.0", sdk="2.29.0")

    plan = strategies.confirm_plan(Template(argv=("cmd",)), {}, Fixed)
    ((hypothesis, (variant,), _),) = plan
    assert hypothesis.id == "fixed-in-neuronx-cc-2.24.5133.0" and variant.compiler == "2.24.5133.0"
    # The near miss: a fix in the runtime is no compiler release to run with.
    Fixed.fixed_in = FixedInSpec(component="aws-neuronx-runtime-lib", version="2.21.0")
    assert strategies.confirm_plan(Template(argv=("cmd",)), {}, Fixed) == []


@pytest.mark.parametrize(("log", "check", "release"), [
    ("ncc_evrf004_complex_rope.log", "fixed-in-neuronx-cc-2.27.5334.0", "2.27.5334.0"),  # proposed from [fixed_in]
    ("ncc_cfg015_flash_attention_bwd_many_blocks.log", "compiler-before-fix", "2.24.5133.0"),  # a hypothesis runs it
])
def test_confirm_plan_of_a_fixed_failure_runs_the_release_that_fixed_it(tmp_path, log, check, release):
    result = cli("confirm", str(REPO / "sample_logs" / log), "--repro", "neuronx-cc compile model.hlo_module.pb", "--plan",
                 "--format", "json", "--journal", str(tmp_path / "j"))
    planned = {h["id"]: h for h in json.loads(result.stdout)["hypotheses"]}
    (run,) = planned[check]["runs"]
    assert run["knobs"] == {"neuronx_cc": release} and planned[check]["tier"] == "compile"
    assert sum(release in str(h["runs"]) for h in planned.values()) == 1, "one run of the release, not two"


def test_a_matrix_of_flags_env_dtype_and_releases_is_every_combination():
    from nforensics.knowledge.schema import Confirm

    confirm = Confirm(description="x", expect=PASSES, matrix={
        "args": ["", "--auto-cast=matmult"], "env:XLA_USE_BF16": ["0", "1"], "dtype": ["bf16"], "neuronx_cc": ["2.24"]})
    template = Template(argv=("python", "repro.py", "--dtype", "{dtype}"), env=(("XLA_USE_BF16", "1"),))
    variants, why = confirm_variants(template, {"dtype": "f32"}, confirm)
    cells = {(v.argv[4:], dict(v.env)["XLA_USE_BF16"], v.argv[3], v.compiler) for v in variants}
    assert not why and cells == {((), "0", "bf16", "2.24"), ((), "1", "bf16", "2.24"),
                                 (("--auto-cast=matmult",), "0", "bf16", "2.24"), (("--auto-cast=matmult",), "1", "bf16", "2.24")}
