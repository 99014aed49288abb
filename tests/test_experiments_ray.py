"""The Ray backend on a REAL local Ray cluster (2 CPUs, 4 `neuron_cores`), no mock: device runs never exceed
the cluster's NeuronCores and each gets its own, verdicts equal the local pool's, and a driver killed with
SIGKILL loses and repeats nothing on `--resume`. Skipped when Ray is not installed (`nforensics[ray]`).

Runs are played by tests/fakes/neuron_double.py (`device`: locks the cores of NEURON_RT_VISIBLE_CORES, fails
like the runtime when one is taken, records each run's cores and times in a shared file). A TEST DOUBLE.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import ENV, NFORENSICS, assert_clean_error, cli
from fakes import DOUBLE_CMD
from test_experiments_slots import NEURON_LS_DIR, device_runs, most_at_once

ray = pytest.importorskip("ray")

CORES = 4


@pytest.fixture(scope="module")
def cluster():
    """One local Ray cluster for the module (starting one costs ~2 s): its GCS address."""
    ray.init(num_cpus=2, resources={"neuron_cores": CORES}, include_dashboard=False, log_to_driver=False,
             logging_level=logging.ERROR)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def matrix(tmp_path: Path, *options: str, hold: float = 0.05) -> list[str]:
    """64 variants: 4 x 4 knobs that decide IXLV002 (n_layers >= 2 and out_dim <= 128), 4 copies each."""
    return ["sweep", "--expect", "IXLV002", "--knob", "layers=1..4", "--knob", "dim=64,128,256,2048",
            "--knob", "copy=1..4", "--journal", str(tmp_path / "journal.sqlite"), "--format", "json", *options,
            "--", *DOUBLE_CMD, "device", str(tmp_path), "--hold", str(hold), "--n-layers", "{layers}",
            "--out-dim", "{dim}", "--copy={copy}", "--nc={cores}", "--log", str(tmp_path / "argv.log")]


def without_seconds(stdout: str) -> list[dict]:
    return [{k: v for k, v in run.items() if k != "seconds"} for run in json.loads(stdout)["runs"]]


def test_64_device_variants_never_exceed_the_clusters_cores_and_match_the_local_pool(cluster, tmp_path, monkeypatch):
    on_ray = tmp_path / "ray"
    on_ray.mkdir()
    result = cli(*matrix(on_ray, "--backend", "ray"))
    assert result.returncode == 0, result.stderr
    runs = device_runs(on_ray)
    assert len(runs) == 64
    assert most_at_once(runs) <= CORES  # the double saw at most 4 device runs at once...
    assert all(len(r["cores"]) == 1 and 0 <= r["cores"][0] < CORES for r in runs)  # ...each on one core of its own
    argv = (on_ray / "argv.log").read_text().splitlines()
    assert {line.split("--nc=")[1].split()[0] for line in argv} <= {"0", "1", "2", "3"}  # {cores} is Ray's slice
    ray_runs = without_seconds(result.stdout)
    assert Counter(r["verdict"] for r in ray_runs) == {"REPRODUCES": 24, "PASSES": 40}  # no UNTESTABLE: no collision
    assert "Ray: 4 tasks at a time of 1 neuron_cores" in result.stderr

    local = tmp_path / "local"
    local.mkdir()
    monkeypatch.setenv("PATH", NEURON_LS_DIR + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("NEURON_DOUBLE_NC_COUNT", str(CORES))
    monkeypatch.delenv("NEURON_RT_VISIBLE_CORES", raising=False)
    local_result = cli(*matrix(local))
    assert local_result.returncode == 0, local_result.stderr
    assert without_seconds(local_result.stdout) == ray_runs  # same variants, same order, same verdicts and codes


def test_repeat_and_compile_only_runs_ask_for_cpus_and_memory(cluster, tmp_path):
    args = ["sweep", "--backend", "ray", "--compile-only", "--mem-per-run", "64M", "--repeat", "2",
            "--expect", "IXLV002", "--knob", "n=1..3", "--journal", str(tmp_path / "j.sqlite"), "--format", "json",
            "--", *DOUBLE_CMD, "sendrecv", "--n-layers", "{n}", "--out-dim", "128"]
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    assert [(r["verdict"], r["flaky"]) for r in json.loads(result.stdout)["runs"]] == [
        ("PASSES", None), ("REPRODUCES", None), ("REPRODUCES", None)]
    assert "Ray: 2 tasks at a time of 1 CPU + 64 MiB" in result.stderr  # the cluster's 2 CPUs bound compiles
    with sqlite3.connect(tmp_path / "j.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 6  # 3 variants x 2 attempts, on the driver
    too_big = cli("sweep", "--backend", "ray", "--cores-per-run", "8", "--expect", "IXLV002", "--knob", "n=1",
                  "--journal", str(tmp_path / "j2.sqlite"), "--", *DOUBLE_CMD, "ok", "{n}")
    assert_clean_error(too_big.returncode, too_big.stderr, "each run needs 8 neuron_cores but no node of the Ray cluster")


def finished_runs(journal: Path) -> list[tuple]:
    try:
        with sqlite3.connect(journal) as db:
            return list(db.execute("SELECT id, session, key, knobs FROM runs ORDER BY id"))
    except sqlite3.OperationalError:  # not created yet
        return []


def test_resume_after_the_driver_is_killed_loses_and_repeats_nothing(cluster, tmp_path):
    journal, log = tmp_path / "journal.sqlite", tmp_path / "executions.log"
    variants = 16
    args = ["sweep", "--backend", "ray", "--address", cluster, "--expect", "IXLV002", "--knob", f"i=1..{variants}",
            "--journal", str(journal), "--format", "json",
            "--", *DOUBLE_CMD, "device", str(tmp_path), "--hold", "0.4", "--variant={i}", "--log", str(log)]
    # The driver joins the module's cluster as a second driver; ray.init set RAY_AUTH_MODE in this process's
    # environment after conftest's ENV was made, and the driver needs it to present the cluster's token.
    env = {**ENV, **{k: v for k, v in os.environ.items() if k.startswith("RAY_")}}
    with open(tmp_path / "driver.err", "w") as err:
        driver = subprocess.Popen([*NFORENSICS, *args], env=env, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 30
    while len(finished_runs(journal)) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    before = finished_runs(journal)
    assert 4 <= len(before) < variants, (tmp_path / "driver.err").read_text()
    time.sleep(0.6)  # tasks of the dead driver are stopped by Ray or end unjournaled
    assert finished_runs(journal) == before

    resumed = cli(args[0], "--resume", *args[1:])
    assert resumed.returncode == 0, resumed.stderr
    after = finished_runs(journal)
    assert after[: len(before)] == before  # nothing lost or rewritten
    keys = Counter(key for _, _, key, _ in after)
    assert len(keys) == variants and set(keys.values()) == {1}  # every variant exactly once, one session
    assert {session for _, session, _, _ in after} == {before[0][1]}
    executions = Counter(line.split("--variant=")[1].split()[0] for line in log.read_text().splitlines())
    for _, _, _, knobs in before:
        assert executions[json.loads(knobs)["i"]] == 1  # finished before the kill: never run again
    assert len(json.loads(resumed.stdout)["runs"]) == variants


def test_sigterm_to_a_ray_driver_stops_its_runs_and_exits_143(cluster, tmp_path):
    """A cancelled CI job: the runs on the cluster are stopped with their trees, not left holding cores."""
    log = tmp_path / "executions.log"
    args = ["sweep", "--backend", "ray", "--address", cluster, "--expect", "IXLV002", "--knob", "i=1..4",
            "--journal", str(tmp_path / "j.sqlite"), "--", *DOUBLE_CMD, "device", str(tmp_path), "--hold", "60",
            "--variant={i}", "--log", str(log)]
    env = {**ENV, **{k: v for k, v in os.environ.items() if k.startswith("RAY_")}}
    driver = subprocess.Popen([*NFORENSICS, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while (not log.exists() or len(log.read_text().splitlines()) < CORES) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(log.read_text().splitlines()) == CORES  # four runs holding their cores
    driver.send_signal(signal.SIGTERM)
    _, stderr = driver.communicate(timeout=30)
    assert driver.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr and "SIGTERM received" not in stderr

    def ours() -> list[str]:
        found = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
        return [line for line in found if str(tmp_path) in line and "device" in line]

    deadline = time.monotonic() + 10
    while ours() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ours() == []
