"""Test doubles for the experiment tests (they stand in for Neuron tools that cannot be installed here),
and two ways to call the CLI: in this process (fast: the knowledge base and grammars load once) or as a
real subprocess (for what only a separate process shows, like being killed)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

DOUBLE = str(Path(__file__).resolve().with_name("neuron_double.py"))
DOUBLE_CMD = [sys.executable, DOUBLE]  # the double as a command; tests append a scenario and arguments
NFORENSICS = [sys.executable, "-m", "forensics.cli"]
REPO = Path(__file__).resolve().parents[2]


def nforensics(*args: str, cwd: str | Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess, as a user would."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([*NFORENSICS, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)


def cli(*args: str, cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    """Run the CLI's entry point (forensics.cli.main) in this process: same output and exit code."""
    from forensics.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_argv, saved_cwd = sys.argv, os.getcwd()
    sys.argv = ["nforensics", *args]
    try:
        if cwd:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())
