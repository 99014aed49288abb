"""Shared test helpers: where the repository and ../shared live, and how to run the CLI as a user does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SAMPLE_LOGS = REPO / "sample_logs"


def run_cli(*args: str, input: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `nforensics ARGS` in a fresh interpreter, exactly as a user's shell would."""
    return subprocess.run([sys.executable, "-m", "forensics.cli", *args], input=input, capture_output=True,
                          cwd=REPO, env=env, timeout=120)


def run_cli_text(*args: str, input: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """run_cli with stdout and stderr decoded, for tests that compare what the user reads."""
    result = run_cli(*args, input=input, env=env)
    return subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode(), result.stderr.decode())


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is not present beside the project")
    return SHARED
