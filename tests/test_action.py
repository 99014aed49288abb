"""The composite GitHub Action (action.yml) and the workflow that uses it (issue 15). GitHub is not here, so
its shell steps run as a runner would run them: inputs as environment variables, $GITHUB_OUTPUT and
$GITHUB_STEP_SUMMARY as files, `nforensics` on PATH."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO

yaml = pytest.importorskip("yaml")

ACTION = yaml.safe_load((REPO / "action.yml").read_text())
WORKFLOW = yaml.safe_load((REPO / ".github/workflows/nforensics-sample-logs.yml").read_text())
STEPS = {step["name"]: step for step in ACTION["runs"]["steps"]}


def test_the_action_is_composite_and_its_scripts_take_inputs_only_from_the_environment():
    assert ACTION["runs"]["using"] == "composite"
    text = (REPO / "action.yml").read_text()
    for name in re.findall(r"inputs\.([\w-]+)", text):
        assert name in ACTION["inputs"], name
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], step["name"]  # an expression pasted into a script is an injection
            assert subprocess.run(["bash", "-n"], input=step["run"].encode()).returncode == 0, step["name"]
    upload = STEPS["Upload SARIF to code scanning"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@") and "always()" in upload["if"]


def test_the_workflow_uses_the_action_on_the_sample_logs():
    steps = WORKFLOW["jobs"]["sample-logs"]["steps"]
    uses = [step for step in steps if step.get("uses") == "./"]
    assert {bool(step["with"].get("command")) for step in uses} == {True, False}
    assert all(step["with"]["sarif-file"] != uses[0]["with"]["sarif-file"] for step in uses[1:])
    assert WORKFLOW["permissions"]["security-events"] == "write"


def _step(name: str, tmp_path, **inputs: str) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    """Run one shell step of the action in `tmp_path` (the workspace); its outputs as a dict."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "nforensics"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m nforensics "$@"\n')
    shim.chmod(0o755)
    output, summary = tmp_path / "github_output", tmp_path / "summary.md"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(REPO),
           "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary), **inputs}
    for variable in ("NO_COLOR", "FORCE_COLOR"):
        env.pop(variable, None)
    result = subprocess.run(["bash", "-e", "-c", STEPS[name]["run"]], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=300)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines()) if output.exists() else {}
    return result, outputs


def _inputs(**given: str) -> dict[str, str]:
    defaults = {"NF_COMMAND": "", "NF_LOG": "", "NF_GLOB": "*", "NF_SARIF": "nforensics.sarif",
                "NF_FAIL_ON_FINDINGS": "false"}
    return {**defaults, **given}


def test_explaining_a_log_folder_annotates_summarises_and_writes_sarif(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for seed in sorted((REPO / "sample_logs").glob("seed00[03]*.log")):
        (logs / seed.name).write_text(seed.read_text())
    result, outputs = _step("Run or explain", tmp_path, **_inputs(NF_LOG="logs", NF_SARIF="out/explain.sarif"))
    assert result.returncode == 0 and outputs["exit-code"] == "1"
    assert "::error" in result.stdout and "NCC_INLA001" in result.stdout
    assert "NCC_IXLV002" in (tmp_path / "out/explain.sarif").read_text()
    assert "NCC_INLA001" in (tmp_path / "summary.md").read_text()


def test_wrapping_a_failing_command_keeps_its_status_and_its_log(tmp_path):
    seed = REPO / "sample_logs/seed003_ncc_inla001_xla_use_bf16.log"
    result, outputs = _step("Run or explain", tmp_path, **_inputs(
        NF_COMMAND=f"cat '{seed}' >&2; exit 70", NF_LOG="saved logs/run.log", NF_SARIF="run.sarif"))
    assert result.returncode == 0 and outputs["exit-code"] == "70"
    assert (tmp_path / "saved logs/run.log").read_text() == seed.read_text()
    assert "NCC_INLA001" in (tmp_path / "run.sarif").read_text() and "::error" in result.stderr


def test_neither_a_command_nor_a_log_is_an_error(tmp_path):
    result, outputs = _step("Run or explain", tmp_path, **_inputs())
    assert outputs["exit-code"] == "2" and "give the action a command or a log" in result.stdout


@pytest.mark.parametrize(("explaining", "status", "fail_on_findings", "expected"), [
    ("true", "1", "false", 0),   # logs explained: the step that made them already failed the job
    ("true", "1", "true", 1),
    ("true", "2", "false", 2),   # an input error is never hidden
    ("false", "70", "false", 70),  # a wrapped command's own status
    ("false", "0", "false", 0),
])
def test_the_last_step_exits_with_the_status(tmp_path, explaining, status, fail_on_findings, expected):
    result, _ = _step("Exit with the status", tmp_path, NF_STATUS=status, NF_EXPLAINING=explaining,
                      NF_FAIL_ON_FINDINGS=fail_on_findings)
    assert result.returncode == expected


def test_the_ci_recipes_in_docs_parse_as_yaml():
    blocks = re.findall(r"```yaml\n(.*?)```", (REPO / "docs/ci.md").read_text(), re.S)
    assert len(blocks) >= 5
    for block in blocks:
        yaml.safe_load(block)
    gitlab = next(yaml.safe_load(b) for b in blocks if ".nforensics" in b)
    assert gitlab["neuron-compile"]["extends"] == ".nforensics" and "before_script" in gitlab[".nforensics"]
