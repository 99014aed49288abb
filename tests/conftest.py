"""Shared test helpers: where the repository, its sample logs and ../shared live; how to run the CLI as a
user does (run_cli, a fresh interpreter) or fast in this process (cli); the check for a clean input error;
a real local Ray cluster for the tests of `--backend ray` (cluster)."""

from __future__ import annotations

import io
import os
import random
import re
import select
import subprocess
import sys
import uuid
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import NamedTuple

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SAMPLE_LOGS = REPO / "sample_logs"
SEED000 = SAMPLE_LOGS / "seed000_ncc_ixlv002_sendrecv_twice.log"
# Both sample_logs folders: the project's (seeds and others) and the knowledge base's own.
ALL_SAMPLE_LOGS = sorted(SAMPLE_LOGS.glob("*.log")) + sorted((REPO / "nforensics/knowledge/sample_logs").glob("*.log"))

NFORENSICS = [sys.executable, "-m", "nforensics"]  # python -m nforensics: what the tests run is what users can
ENV = {**os.environ, "PYTHONPATH": str(REPO)}  # a child interpreter imports this checkout from any folder
# A loopback test cluster needs no token; Ray's usage report would only try to reach the network.
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
RAY_CORES = 4  # the test cluster's `neuron_cores` (and 2 CPUs)


def run_cli(*args: str | Path, input: bytes | None = None, env: dict | None = None,
            cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    """Run `nforensics ARGS` in a fresh interpreter, exactly as a user's shell would; `env` adds variables."""
    return subprocess.run([*NFORENSICS, *map(str, args)], input=input, capture_output=True, cwd=cwd or REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, timeout=120)  # fmt: skip


def run_cli_text(*args: str | Path, input: str | bytes | None = None, env: dict | None = None,
                 cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    """run_cli with stdin encoded and stdout and stderr decoded, for tests that compare what the user reads."""
    result = run_cli(*args, input=input.encode() if isinstance(input, str) else input, env=env, cwd=cwd)
    return subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode(), result.stderr.decode())


class CliResult(NamedTuple):
    """One in-process CLI call: reads like a CompletedProcess and unpacks as (code, out, err)."""

    returncode: int
    stdout: str
    stderr: str


def cli(*args: str | Path, cwd: str | Path | None = None, input: str | None = None) -> CliResult:
    """Run the CLI's entry point (nforensics.cli.main) in this process: the same output and exit code as
    run_cli, without a new interpreter loading the knowledge base and grammars again."""
    from nforensics.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv, sys.stdin, os.getcwd()
    sys.argv = ["nforensics", *map(str, args)]
    if input is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(input.encode()))
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
        sys.argv, sys.stdin = saved[:2]
        os.chdir(saved[2])
    return CliResult(code, out.getvalue(), err.getvalue())


def counting_reader(path: Path) -> tuple[object, list[int]]:
    """A LogLines over `path` that notes the number of every line it decodes (the bulk skip counts the others
    without decoding them), and that list."""
    from nforensics.ingest import LogLines

    decoded: list[int] = []

    class Counting(LogLines):
        def __next__(self) -> tuple[int, str]:
            number, line = super().__next__()
            decoded.append(number)
            return number, line

    return Counting(str(path), path.open("rb"), owned=True), decoded


def assert_clean_error(returncode: int, stderr: str, fragment: str) -> None:
    """Bad input as the user sees it: exit 2 and one `nforensics: ...` line naming the problem, no traceback."""
    assert returncode == 2, stderr
    assert "Traceback" not in stderr
    assert stderr.count("\n") == 1 and stderr.endswith("\n"), stderr
    assert stderr.startswith("nforensics: ") and fragment in stderr, stderr


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is not present beside the project")
    return SHARED


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A real local Ray cluster (2 CPUs, RAY_CORES `neuron_cores`) for the module, in its own process
    (tests/ray_cluster.py; starting one costs ~2 s): its GCS address."""
    from nforensics.procs import kill_tree

    log = tmp_path_factory.mktemp("ray") / "cluster.err"
    with open(log, "w") as err:
        host = subprocess.Popen([sys.executable, str(REPO / "tests" / "ray_cluster.py"), "2", str(RAY_CORES)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env={**ENV, **RAY_ENV},
                                start_new_session=True, text=True)
    try:
        ready, _, _ = select.select([host.stdout], [], [], 90)
        address = host.stdout.readline().strip() if ready else ""
        assert address, f"no local Ray cluster within 90 s: {log.read_text()[-2000:]}"
        yield address
    finally:
        host.stdin.close()  # the host stops Ray and exits
        try:
            host.wait(timeout=60)
        except subprocess.TimeoutExpired:
            kill_tree(host.pid)
            host.wait(timeout=10)


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
    # Other work directories, the same for the same log: a random one made the test flaky, not stronger (the
    # words a UUID can spell, like `efa`, have a test of their own).
    other = random.Random(log)
    log = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                 lambda _: str(uuid.UUID(int=other.getrandbits(128), version=4)), log)
    log = re.sub(r"MODULE_[0-9a-f]+\+[0-9a-f]+", "MODULE_0123456789abcdef0123+89abcdef", log)
    log = re.sub(r"neuronxcc-[0-9a-z]{8}\b", "neuronxcc-zq81ka0d", log)
    log = re.sub(r"\bI-(\d+)", lambda m: f"I-{int(m.group(1)) + 4242}", log)
    log = re.sub(r"(LocalSendRecv|CoreBarrier)-(\d+)_(\d+)", lambda m: f"{m[1]}-{m[2]}_{int(m[3]) + 37}", log)
    log = re.sub(r"\bnc(\d)\b", lambda m: f"nc{(int(m[1]) + 1) % 8}", log)
    log = re.sub(r"0x[0-9a-fA-F]{6,}", "0x00007F00DEADBEEF", log)
    log = re.sub(r"(\d+\.\d+)GB", lambda m: f"{float(m[1]) + 1.5:.2f}GB", log)
    return log


@pytest.fixture(autouse=True)
def _colour_as_a_pipe(monkeypatch):
    """Tests compare plain text: a CI runner's FORCE_COLOR (or a developer's NO_COLOR) must not change it.
    The tests of those variables set them themselves."""
    for name in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def no_package_index(monkeypatch, tmp_path_factory):
    """A confirm plan may run a compiler release (a `neuronx_cc` matrix), which pip would install: in the tests
    of experiments pip reaches no index (the release is untestable at once). The version-matrix tests point pip
    at the stand-in wheels they build."""
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path_factory.getbasetemp()))
