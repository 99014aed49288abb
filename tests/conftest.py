"""Shared test helpers: where the repository and ../shared live, and how to run the CLI as a user does."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
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


def another_machine_and_day(log: str) -> str:
    """The same log as another user would paste it: other day, pids, user, temp dirs, cache hashes,
    instruction and barrier ids, cores, addresses and measured sizes. Status and exit numbers stay."""
    def later(match: re.Match) -> str:  # every digit of a timestamp moves (the shape stays valid enough)
        return re.sub(r"\d", lambda d: str((int(d.group()) + 1) % 10), match.group())

    log = re.sub(r"\d{4}-(?:\d\d|[A-Z][a-z]{2})-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?", later, log)
    log = re.sub(r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d", later, log)
    log = re.sub(r"\b(\d{3,6}):\1\b", "40213:40213", log)  # NRT pid:tid
    log = re.sub(r"(\b(?:INFO|ERROR|WARNING|USER|FATAL)\s+)\d{2,6}(?=\s+\[)", r"\g<1>51234", log)  # driver pid
    log = re.sub(r"/tmp/\w+/", "/tmp/jenkins/", log).replace("/home/ubuntu/", "/home/ec2-user/")
    log = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", lambda _: str(uuid.uuid4()), log)
    log = re.sub(r"MODULE_[0-9a-f]+\+[0-9a-f]+", "MODULE_0123456789abcdef0123+89abcdef", log)
    log = re.sub(r"neuronxcc-[0-9a-z]{8}\b", "neuronxcc-zq81ka0d", log)
    log = re.sub(r"\bI-(\d+)", lambda m: f"I-{int(m.group(1)) + 4242}", log)
    log = re.sub(r"(LocalSendRecv|CoreBarrier)-(\d+)_(\d+)", lambda m: f"{m[1]}-{m[2]}_{int(m[3]) + 37}", log)
    log = re.sub(r"\bnc(\d)\b", lambda m: f"nc{(int(m[1]) + 1) % 8}", log)
    log = re.sub(r"0x[0-9a-fA-F]{6,}", "0x00007F00DEADBEEF", log)
    log = re.sub(r"(\d+\.\d+)GB", lambda m: f"{float(m[1]) + 1.5:.2f}GB", log)
    return log
