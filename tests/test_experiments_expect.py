"""`--expect` is resolved against the catalogue (prefix and case optional, aliases, "did you mean"), the
oracle's two exit-code modes (`interesting` for reducers, `bisect` for `git bisect run`), and the exports
checked before the first run (Parquet needs pyarrow; CSV needs neither it nor pandas).

Runs are played by tests/fakes/neuron_double.py, a TEST DOUBLE for neuronx-cc and the seed reproducers.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, assert_clean_error, cli
from fakes import DOUBLE, DOUBLE_CMD

IXLV002 = ["sendrecv", "--n-layers", "2", "--out-dim", "128"]
PASSING = ["sendrecv", "--n-layers", "1", "--out-dim", "128"]


@pytest.mark.parametrize("typed", ["NCC_IXLV002", "IXLV002", "ixlv002", "ncc_ixlv002", " NCC_IXLV002 "])
def test_expect_without_the_prefix_or_in_any_case_reproduces(typed):
    result = cli("oracle", "--expect", typed, "--", *DOUBLE_CMD, *IXLV002)
    assert (result.returncode, result.stdout.split()[0]) == (0, "REPRODUCES"), result.stderr


@pytest.mark.parametrize("typed", ["TEN404", "ITEN404", "NCC_ITEN404"])
def test_expect_by_a_legacy_alias_or_bare_code(typed):
    result = cli("oracle", "--expect", typed, "--", *DOUBLE_CMD, "conv", "--kernel", "7", "--target", "trn1")
    assert (result.returncode, result.stdout.split()[0]) == (0, "REPRODUCES"), result.stderr


@pytest.mark.parametrize("typed, suggestion", [
    ("NCC_IXLV02", "did you mean NCC_IXLV002?"),  # a dropped digit
    ("IXLV02", "did you mean NCC_IXLV002?"),
    ("NCC_IXLV020", "did you mean NCC_IXLV002?"),  # well-formed, but no such code
    ("neuronx-cc-killed-host-om", "did you mean neuronx-cc-killed-host-oom?"),  # a signature id
])
def test_a_typo_in_expect_is_refused_with_a_suggestion_before_anything_runs(tmp_path, typed, suggestion):
    log = tmp_path / "runs.log"
    for args in (["oracle", "--expect", typed, "--", *DOUBLE_CMD, *IXLV002, "--log", str(log)],
                 ["sweep", "--expect", typed, "--knob", "n=2,3", "--journal", str(tmp_path / "j.sqlite"),
                  "--", *DOUBLE_CMD, "sendrecv", "--n-layers", "{n}", "--out-dim", "128", "--log", str(log)]):
        result = cli(*args)
        assert_clean_error(result.returncode, result.stderr, f"--expect {typed}: no signature in the catalogue")
        assert suggestion in result.stderr
    assert not log.exists(), "nothing may run with an expectation that can never match"
    assert not (tmp_path / "j.sqlite").exists()


def test_an_unknown_code_with_nothing_close_says_where_to_look():
    result = cli("oracle", "--expect", "FOO", "--", "true")
    assert_clean_error(result.returncode, result.stderr, "--expect FOO: no signature in the catalogue")
    assert "did you mean" not in result.stderr and "nforensics codes" in result.stderr
    assert_clean_error(*cli("oracle", "--expect", "", "--", "true")[::2], "--expect is empty")


def test_a_session_started_with_the_full_code_resumes_with_the_bare_one(tmp_path):
    journal, log = tmp_path / "j.sqlite", tmp_path / "runs.log"
    common = ["--knob", "n=1,2", "--journal", str(journal), "--format", "json",
              "--", *DOUBLE_CMD, "sendrecv", "--n-layers", "{n}", "--out-dim", "128", "--log", str(log)]
    first = cli("sweep", "--expect", "NCC_IXLV002", *common)
    again = cli("sweep", "--resume", "--expect", "ixlv002", *common)
    assert first.returncode == again.returncode == 0, first.stderr + again.stderr
    assert json.loads(first.stdout) == json.loads(again.stdout)
    assert [r["verdict"] for r in json.loads(again.stdout)["runs"]] == ["PASSES", "REPRODUCES"]
    assert len(log.read_text().splitlines()) == 2  # the resumed session reused both runs


# ------------------------------------------------------------------------------------------------ modes

@pytest.mark.parametrize("args, interesting, bisect", [
    (IXLV002, 0, 1),  # reproduces: interesting to a reducer, "bad" to git bisect
    (PASSING, 1, 0),  # passes: "good"
    (["other"], 1, 125),  # a different failure may hide ours: bisect skips it
    (["oom"], 125, 125),  # killed by the host: untestable either way
    (["nodevice"], 125, 125),
])
def test_oracle_exit_codes_per_mode(args, interesting, bisect):
    default = cli("oracle", "--expect", "IXLV002", "--", *DOUBLE_CMD, *args)
    chosen = cli("oracle", "--mode", "interesting", "--expect", "IXLV002", "--", *DOUBLE_CMD, *args)
    inverted = cli("oracle", "--mode", "bisect", "--expect", "IXLV002", "--", *DOUBLE_CMD, *args)
    assert (default.returncode, chosen.returncode, inverted.returncode) == (interesting, interesting, bisect)
    assert default.stdout.split()[0] == inverted.stdout.split()[0]  # the verdict printed is the same


def test_an_unknown_mode_is_one_line():
    result = cli("oracle", "--mode", "regression", "--expect", "IXLV002", "--", "true")
    assert_clean_error(result.returncode, result.stderr, "unknown --mode 'regression'")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_bisect_run_with_mode_bisect_names_the_commit_that_introduced_the_failure(tmp_path):
    """A history of 8 commits of a `layers` file; the double fails from 2 layers on (commit 5 sets it)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], check=True)
    layers = [1, 1, 1, 1, 2, 2, 3, 3]
    for n, value in enumerate(layers, 1):
        (repo / "layers").write_text(f"{value}\n")
        subprocess.run([*git, "add", "layers"], check=True)
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", f"commit {n}"], check=True)
    script = repo.parent / "repro.sh"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {DOUBLE} sendrecv --n-layers $(cat {repo}/layers) --out-dim 128\n")
    script.chmod(0o755)
    oracle = [sys.executable, "-m", "nforensics", "oracle", "--mode", "bisect", "--expect", "IXLV002", "--", str(script)]
    subprocess.run([*git, "bisect", "start", "HEAD", "HEAD~7"], check=True, capture_output=True)
    result = subprocess.run([*git, "bisect", "run", *oracle], capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)})
    assert "is the first bad commit" in result.stdout, result.stdout + result.stderr
    first_bad = result.stdout.split(" is the first bad commit")[0].split()[-1]
    message = subprocess.run([*git, "log", "-1", "--format=%s", first_bad], capture_output=True, text=True).stdout
    assert message.strip() == "commit 5"


# ------------------------------------------------------------------------------------------------ exports

def test_parquet_without_pyarrow_or_a_missing_folder_fails_before_the_first_run(tmp_path, monkeypatch):
    import importlib.util

    log = tmp_path / "runs.log"
    sweep = ["sweep", "--expect", "IXLV002", "--knob", "n=1,2", "--journal", str(tmp_path / "j.sqlite")]
    command = ["--", *DOUBLE_CMD, "sendrecv", "--n-layers", "{n}", "--out-dim", "128", "--log", str(log)]
    result = cli(*sweep, "--csv", str(tmp_path / "no-such-folder" / "runs.csv"), *command)
    assert_clean_error(result.returncode, result.stderr, "--csv")
    assert "does not exist" in result.stderr
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a))
    result = cli(*sweep, "--parquet", str(tmp_path / "runs.parquet"), *command)
    assert_clean_error(result.returncode, result.stderr, "--parquet needs pyarrow, which is not installed")
    assert not log.exists() and not (tmp_path / "j.sqlite").exists()  # nothing ran


def test_csv_export_needs_no_pandas(tmp_path):
    """A plain install (no pandas) exports CSV: the sweep and the export never import it."""
    out = tmp_path / "runs.csv"
    probe = (
        "import sys\n"
        "sys.modules['pandas'] = None  # importing it would fail, as on an install without the extra\n"
        "from nforensics.cli import main\n"
        f"sys.argv = ['nforensics', 'sweep', '--expect', 'IXLV002', '--knob', 'n=1,2', '--journal', {str(tmp_path / 'j')!r},"
        f" '--csv', {str(out)!r}, '--', {sys.executable!r}, {DOUBLE!r}, 'sendrecv', '--n-layers', '{{n}}', '--out-dim', '64']\n"
        "main()\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr
    lines = out.read_text().splitlines()
    assert lines[0].startswith("session,run,attempt,knob.n,verdict,code,exit_code,seconds")
    assert sorted(line.split(",")[3:5] for line in lines[1:]) == [["1", "PASSES"], ["2", "REPRODUCES"]]
