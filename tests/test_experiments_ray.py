"""The Ray backend on a REAL local Ray cluster (2 CPUs, 4 `neuron_cores`), no mock: device runs never exceed
the cluster's NeuronCores and each gets its own, verdicts equal the local pool's, and a driver killed with
SIGKILL loses and repeats nothing on `--resume`. Skipped when Ray is not installed (the `ray` extra).

The cluster lives in its own process (tests/ray_cluster.py) and every driver is a fresh `nforensics`
process, as on a user's machine: Ray never runs inside pytest, so nothing of it can hang or outlive a test.

Runs are played by tests/fakes/neuron_double.py (`device`: locks the cores of NEURON_RT_VISIBLE_CORES, fails
like the runtime when one is taken, records each run's cores and times in a shared file). A TEST DOUBLE.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import ENV, NFORENSICS, RAY_CORES, RAY_ENV, assert_clean_error, cli, run_cli_text
from fakes import DOUBLE_CMD
from test_experiments_slots import NEURON_LS_DIR, device_runs, most_at_once

if importlib.util.find_spec("ray") is None:
    pytest.skip("Ray is not installed (the ray extra)", allow_module_level=True)

DRIVER_ENV = {**ENV, **RAY_ENV}


def driver(*args: str) -> subprocess.CompletedProcess:
    """`nforensics ARGS` as its own process, with the test cluster's environment."""
    return run_cli_text(*args, env=RAY_ENV)


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
    result = driver(*matrix(on_ray, "--backend", "ray", "--address", cluster))
    assert result.returncode == 0, result.stderr
    runs = device_runs(on_ray)
    assert len(runs) == 64
    assert most_at_once(runs) <= RAY_CORES  # the double saw at most 4 device runs at once...
    assert all(len(r["cores"]) == 1 and 0 <= r["cores"][0] < RAY_CORES for r in runs)  # ...each on one core of its own
    argv = (on_ray / "argv.log").read_text().splitlines()
    assert {line.split("--nc=")[1].split()[0] for line in argv} <= {"0", "1", "2", "3"}  # {cores} is Ray's slice
    ray_runs = without_seconds(result.stdout)
    assert Counter(r["verdict"] for r in ray_runs) == {"REPRODUCES": 24, "PASSES": 40}  # no UNTESTABLE: no collision
    assert "Ray: 4 tasks at a time of 1 neuron_cores" in result.stderr

    local = tmp_path / "local"
    local.mkdir()
    monkeypatch.setenv("PATH", NEURON_LS_DIR + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("NEURON_DOUBLE_NC_COUNT", str(RAY_CORES))
    monkeypatch.delenv("NEURON_RT_VISIBLE_CORES", raising=False)
    local_result = cli(*matrix(local))
    assert local_result.returncode == 0, local_result.stderr
    assert without_seconds(local_result.stdout) == ray_runs  # same variants, same order, same verdicts and codes


def test_repeat_and_compile_only_runs_ask_for_cpus_and_memory(cluster, tmp_path):
    args = ["sweep", "--backend", "ray", "--compile-only", "--mem-per-run", "64M", "--repeat", "2",
            "--address", cluster, "--expect", "IXLV002", "--knob", "n=1..3", "--journal", str(tmp_path / "j.sqlite"),
            "--format", "json", "--", *DOUBLE_CMD, "sendrecv", "--n-layers", "{n}", "--out-dim", "128"]
    result = driver(*args)
    assert result.returncode == 0, result.stderr
    assert [(r["verdict"], r["flaky"]) for r in json.loads(result.stdout)["runs"]] == [
        ("PASSES", None), ("REPRODUCES", None), ("REPRODUCES", None)]
    assert "Ray: 2 tasks at a time of 1 CPU + 64 MiB" in result.stderr  # the cluster's 2 CPUs bound compiles
    with sqlite3.connect(tmp_path / "j.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 6  # 3 variants x 2 attempts, on the driver
    too_big = driver("sweep", "--backend", "ray", "--address", cluster, "--cores-per-run", "8", "--expect", "IXLV002", "--knob", "n=1",
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
    with open(tmp_path / "driver.err", "w") as err:
        killed = subprocess.Popen([*NFORENSICS, *args], env=DRIVER_ENV, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 30
    while len(finished_runs(journal)) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    before = finished_runs(journal)
    assert 4 <= len(before) < variants, (tmp_path / "driver.err").read_text()
    time.sleep(0.6)  # tasks of the dead driver are stopped by Ray or end unjournaled
    assert finished_runs(journal) == before

    resumed = driver(args[0], "--resume", *args[1:])
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
    stopped = subprocess.Popen([*NFORENSICS, *args], env=DRIVER_ENV, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while (not log.exists() or len(log.read_text().splitlines()) < RAY_CORES) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(log.read_text().splitlines()) == RAY_CORES  # four runs holding their cores
    stopped.send_signal(signal.SIGTERM)
    _, stderr = stopped.communicate(timeout=30)
    assert stopped.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr and "SIGTERM received" not in stderr

    def ours() -> list[str]:
        found = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
        return [line for line in found if str(tmp_path) in line and "device" in line]

    deadline = time.monotonic() + 10
    while ours() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ours() == []


def test_without_an_address_a_local_instance_is_started_for_the_sweep_and_stopped(tmp_path):
    """No RAY_ADDRESS and no `ray start` cluster on this host: Ray's rule starts one for this sweep only."""
    args = ["sweep", "--backend", "ray", "--compile-only", "--mem-per-run", "64M", "--expect", "IXLV002",
            "--knob", "n=1..2", "--journal", str(tmp_path / "j.sqlite"), "--format", "json",
            "--", *DOUBLE_CMD, "sendrecv", "--n-layers", "{n}", "--out-dim", "128"]
    result = driver(*args)
    assert result.returncode == 0, result.stderr
    assert [r["verdict"] for r in json.loads(result.stdout)["runs"]] == ["PASSES", "REPRODUCES"]
    assert "(1 node(s)" in result.stderr and "Traceback" not in result.stderr


def test_an_empty_address_is_a_usage_error_not_a_search_for_a_cluster(tmp_path):
    result = cli("sweep", "--backend", "ray", "--address", " ", "--expect", "IXLV002", "--knob", "n=1",
                 "--journal", str(tmp_path / "j.sqlite"), "--", *DOUBLE_CMD, "ok", "{n}")
    assert_clean_error(result.returncode, result.stderr, "--address is empty")
