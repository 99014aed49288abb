"""Slots, not CPU counts: each device run gets its own NeuronCore slice, the pool is the cores `neuron-ls`
reports divided by the cores a run needs, compile-only runs are capped by free host memory, and a sweep
whose runs mostly could not get their resources says so and exits non-zero.

Runs are played by tests/fakes/neuron_double.py (`device`: takes the cores of NEURON_RT_VISIBLE_CORES with a
lock file each and fails like the runtime when one is taken; records every run's cores and times) and
`neuron-ls` by tests/fakes/bin/neuron-ls. Both are TEST DOUBLES.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import assert_clean_error, cli
from fakes import DOUBLE_CMD
from nforensics.experiments.slots import core_range, parse_core_list, parse_size

NEURON_LS_DIR = str(Path(__file__).resolve().parent / "fakes" / "bin")


@pytest.fixture
def neuron_host(monkeypatch):
    """A host whose neuron-ls reports `devices` x `nc_count` NeuronCores."""
    def make(devices: int = 1, nc_count: int = 2) -> None:
        monkeypatch.setenv("PATH", NEURON_LS_DIR + os.pathsep + os.environ["PATH"])
        monkeypatch.setenv("NEURON_DOUBLE_DEVICES", str(devices))
        monkeypatch.setenv("NEURON_DOUBLE_NC_COUNT", str(nc_count))
        monkeypatch.delenv("NEURON_RT_VISIBLE_CORES", raising=False)
    return make


@pytest.fixture(autouse=True)
def _no_neuron_host(monkeypatch):
    monkeypatch.delenv("NEURON_RT_VISIBLE_CORES", raising=False)
    monkeypatch.setenv("PATH", os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != NEURON_LS_DIR))


def device_runs(folder: Path) -> list[dict]:
    path = folder / "device.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def most_at_once(runs: list[dict]) -> int:
    events = sorted([(r["start"], 1) for r in runs] + [(r["end"], -1) for r in runs], key=lambda e: (e[0], e[1]))
    now = peak = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


def sweep(tmp_path: Path, n: int, *options: str, hold: float = 0.3, fmt: str = "json", layers: str = "2"):
    return cli("sweep", "--expect", "IXLV002", "--knob", f"i=1..{n}", "--journal", str(tmp_path / "j.sqlite"),
               "--format", fmt, *options,
               "--", *DOUBLE_CMD, "device", str(tmp_path), "--hold", str(hold), "--n-layers", layers, "--v={i}")


def verdicts(result) -> list[str]:
    return [r["verdict"] for r in json.loads(result.stdout)["runs"]]


def test_the_default_pool_is_the_cores_neuron_ls_reports_each_run_on_its_own(tmp_path, neuron_host):
    neuron_host(devices=1, nc_count=2)
    result = sweep(tmp_path, 6)
    assert result.returncode == 0, result.stderr
    assert verdicts(result) == ["REPRODUCES"] * 6  # no run lost its cores to another
    runs = device_runs(tmp_path)
    assert len(runs) == 6 and most_at_once(runs) == 2  # two cores: two runs at a time, not one per CPU
    assert {tuple(r["cores"]) for r in runs} == {(0,), (1,)}
    assert "2 slots of 1 NeuronCore(s) (2 from neuron-ls)" in result.stderr


def test_cores_per_run_gives_each_worker_a_slice_and_fills_the_cores_placeholder(tmp_path, neuron_host):
    neuron_host(devices=2, nc_count=2)  # 4 cores: two slices of two
    log = tmp_path / "argv.log"
    plan = tmp_path / "plan.toml"
    plan.write_text("cores_per_run = 2\n")
    result = cli("sweep", "--expect", "IXLV002", "--plan", str(plan), "--knob", "i=1..4", "--journal",
                 str(tmp_path / "j.sqlite"), "--format", "json",
                 "--", *DOUBLE_CMD, "device", str(tmp_path), "--hold", "0.3", "--n-layers", "2",
                 "--v={i}", "--nc={cores}", "--log", str(log))
    assert result.returncode == 0, result.stderr
    runs = device_runs(tmp_path)
    assert {tuple(r["cores"]) for r in runs} == {(0, 1), (2, 3)} and most_at_once(runs) == 2
    assert {line.split("--nc=")[1].split()[0] for line in log.read_text().splitlines()} == {"0-1", "2-3"}
    assert "{cores}" not in json.dumps(json.loads(result.stdout))  # knobs are the plan's, not the slice


def test_the_orchestrators_own_visible_cores_bound_the_slots(tmp_path, neuron_host, monkeypatch):
    neuron_host(devices=1, nc_count=8)
    monkeypatch.setenv("NEURON_RT_VISIBLE_CORES", "4-5")  # this job was given two of the eight cores
    result = sweep(tmp_path, 4)
    assert result.returncode == 0, result.stderr
    assert {tuple(r["cores"]) for r in device_runs(tmp_path)} == {(4,), (5,)}


def test_more_workers_than_cores_is_refused_before_anything_runs(tmp_path, neuron_host):
    neuron_host(devices=1, nc_count=2)
    result = sweep(tmp_path, 4, "--workers", "3")
    assert_clean_error(result.returncode, result.stderr, "--workers 3 runs of 1 NeuronCore(s) need 3 cores, neuron-ls gives 2")
    result = sweep(tmp_path, 4, "--cores-per-run", "4")
    assert_clean_error(result.returncode, result.stderr, "each run needs 4 NeuronCores but neuron-ls gives 2")
    assert device_runs(tmp_path) == []


def test_most_runs_untestable_for_lack_of_cores_says_so_and_exits_non_zero(tmp_path):
    """The issue's report: 6 runs sharing one device, 5 came back UNTESTABLE with exit 0 and no hint why."""
    shared = sweep(tmp_path, 6, "--workers", "6", "--env", "NEURON_RT_VISIBLE_CORES=0", hold=1.0, fmt="text")
    assert shared.returncode == 3, shared.stderr
    warning = [line for line in shared.stderr.splitlines() if line.startswith("nforensics: warning:")]
    assert len(warning) == 1 and "5 of 6 runs were UNTESTABLE for lack of resources (NeuronCores in use: 5)" in warning[0]
    assert "5 UNTESTABLE" in shared.stdout  # the table is still printed
    # The same sweep with slots: every run tested, exit 0, no warning.
    (tmp_path / "j.sqlite").unlink()
    slotted = sweep(tmp_path, 6, "--workers", "6", hold=0.2)
    assert slotted.returncode == 0 and "warning" not in slotted.stderr
    assert verdicts(slotted) == ["REPRODUCES"] * 6


def test_a_minority_of_untestable_runs_is_not_starvation(tmp_path):
    result = cli("sweep", "--expect", "IXLV002", "--knob", "s=nodevice,ok,ok", "--journal", str(tmp_path / "j"),
                 "--", *DOUBLE_CMD, "{s}", "--v={s}")
    assert result.returncode == 0 and "warning" not in result.stderr


def test_compile_only_runs_are_capped_by_free_memory_and_get_no_cores(tmp_path, neuron_host, monkeypatch):
    neuron_host(devices=1, nc_count=2)
    monkeypatch.setenv("NEURON_DOUBLE_CORES", "0")
    result = sweep(tmp_path, 3, "--compile-only", "--mem-per-run", "1T", hold=0.2)  # more than this host has
    assert result.returncode == 0, result.stderr
    runs = device_runs(tmp_path)
    assert most_at_once(runs) == 1 and all(r["cores"] == [] for r in runs)
    assert "1 compiles at once (1 TiB each" in result.stderr


def test_a_command_named_neuronx_cc_is_compile_only(tmp_path, neuron_host):
    neuron_host(devices=1, nc_count=2)
    compiler = tmp_path / "neuronx-cc"
    compiler.write_text('#!/bin/sh\necho "visible=${NEURON_RT_VISIBLE_CORES:-none}" >> "$1"\necho Compiler status PASS\n')
    compiler.chmod(0o755)
    seen = tmp_path / "seen.log"
    result = cli("sweep", "--expect", "IXLV002", "--knob", "i=1,2", "--journal", str(tmp_path / "j"),
                 "--", str(compiler), str(seen), "--v={i}")
    assert result.returncode == 0, result.stderr
    assert seen.read_text().splitlines() == ["visible=none"] * 2
    result = cli("sweep", "--expect", "IXLV002", "--knob", "i=1", "--", str(compiler), "{cores}", "{i}")
    assert_clean_error(result.returncode, result.stderr, "compile-only runs get no NeuronCores: remove {cores}")


@pytest.mark.parametrize("args, fragment", [
    (["--compile-only", "--cores-per-run", "2"], "--compile-only runs need no NeuronCores"),
    (["--cores-per-run", "0"], "--cores-per-run must be at least 1"),
    (["--mem-per-run", "lots"], "--mem-per-run must be a size such as 8G"),
    (["--workers", "0"], "--workers must be at least 1"),
    (["--backend", "slurm"], "unknown --backend 'slurm': use local or ray"),
    (["--address", "auto"], "--address is for --backend ray"),
])
def test_bad_pool_options_are_one_line(tmp_path, args, fragment):
    result = sweep(tmp_path, 2, *args)
    assert_clean_error(result.returncode, result.stderr, fragment)
    assert device_runs(tmp_path) == [] and not (tmp_path / "j.sqlite").exists()  # refused before anything ran


def test_a_knob_named_cores_is_refused(tmp_path):
    result = cli("sweep", "--expect", "IXLV002", "--knob", "cores=1,2", "--", "echo", "{cores}")
    assert_clean_error(result.returncode, result.stderr, "{cores} is filled per run with its NeuronCore slice")


def test_sizes_and_core_lists():
    assert [parse_size(s) for s in ("8G", "512M", "16GiB", "1.5g", "4096")] == [8 << 30, 512 << 20, 16 << 30, 3 << 29, 4096]
    assert parse_core_list("0,2,4-5") == [0, 2, 4, 5] and parse_core_list("3") == [3]
    assert parse_core_list("5-4") is None and parse_core_list("all") is None
    assert (core_range([2, 3]), core_range([0, 2]), core_range([7])) == ("2-3", "0,2", "7")


def test_the_ray_backend_without_ray_installed_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "ray", None)  # `import ray` raises ImportError, as on a plain install
    result = sweep(tmp_path, 2, "--backend", "ray")
    assert_clean_error(result.returncode, result.stderr, "--backend ray needs Ray, which is not installed: install the ray extra (in a checkout of nforensics: pip install '.[ray]')")
    assert device_runs(tmp_path) == []
