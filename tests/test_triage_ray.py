"""`triage --backend ray` on a REAL local Ray cluster (2 CPUs), no mock: the same folder gives the same table
(the whole JSON report) through Ray as through the local process pool, on a first run and on an incremental
second run, which sends the cluster only the new files. Skipped when Ray is not installed (the `ray` extra).

The cluster lives in its own process (the `cluster` fixture of conftest.py) and every Ray driver is a fresh
`nforensics` process, as on a user's machine. The folder holds the dated tree of test_triage.py (explain's
JSON, a .gz, a NEFF that is skipped) and SYNTHETIC logs: sample logs with their own compiler version line
and file time.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import RAY_ENV, SAMPLE_LOGS, run_cli_text
from test_triage import SAMPLE_ROLES, build_tree

if importlib.util.find_spec("ray") is None:
    pytest.skip("Ray is not installed (the ray extra)", allow_module_level=True)

SAMPLES = sorted(SAMPLE_LOGS.glob("*.log"))
COMPILERS = ["2.14.213.0+013d129b", "2.15.128.0+56dc5a86", "2.17.194.0+d312836f", "2.19.8089.0+8ab9f450"]
ON_CLUSTER = "nforensics: Ray: 4 tasks of 16 files at a time (1 node(s), 2 CPUs)\n"  # twice the cluster's CPUs


def synthetic_logs(folder: Path, count: int, start: int = 0) -> None:
    """`count` sample logs under day folders of 2024, each with a neuronx-cc version line and a file time."""
    rng = random.Random(start)
    for number in range(start, start + count):
        sample = rng.choice(SAMPLES)
        moment = datetime(2024, 1, 1, tzinfo=timezone.utc) + timedelta(days=rng.randrange(150), seconds=rng.randrange(86_400))
        path = folder / f"{moment:%Y-%m-%d}" / f"run{number:04d}_{sample.name}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"neuronx-cc {rng.choice(COMPILERS)}\n" + sample.read_text(encoding="utf-8", errors="replace"))
        os.utime(path, (moment.timestamp(), moment.timestamp()))


def triage(folder: Path, *options: str | Path, ray: str | None = None) -> str:
    """The JSON report of `nforensics triage FOLDER` in a fresh process: through Ray (`ray`: the cluster's
    address, or "" to let the driver start a local instance), else through the local pool of 2 processes."""
    args = ["triage", str(folder), "--format", "json", *map(str, options)]
    if ray is None:
        result = run_cli_text(*args, "--jobs", "2")
        assert result.returncode == 0, result.stderr
        return result.stdout
    result = run_cli_text(*args, "--backend", "ray", *(["--address", ray] if ray else []), env=RAY_ENV)
    assert result.returncode == 0, result.stderr
    said = [line for line in result.stderr.splitlines(keepends=True) if "model.neff" not in line]  # the skipped NEFF
    if ray:
        assert said == [ON_CLUSTER], result.stderr
    else:  # a local instance has this machine's CPUs
        assert len(said) == 1 and said[0].startswith("nforensics: Ray: ") and "(1 node(s), " in said[0], result.stderr
    return result.stdout


def test_ray_and_the_local_pool_give_identical_tables(cluster, tmp_path):
    folder = tmp_path / "logs"
    build_tree(folder, SAMPLE_ROLES)
    synthetic_logs(folder, 80)
    on_ray = triage(folder, "--since", "2024-02-01", "--store", tmp_path / "ray-store", ray=cluster)
    local = triage(folder, "--since", "2024-02-01", "--store", tmp_path / "local-store")
    assert on_ray == local
    report = json.loads(on_ray)
    assert report["files"] == report["analysed"] == 80 + 8 and len(report["skipped"]) == 1  # the NEFF
    assert len(report["groups"]) >= 10 and {"new", "gone", "ongoing"} <= {g["status"] for g in report["groups"]}
    assert len({v for g in report["groups"] for v in g["compiler_versions"]}) >= 4


def test_a_second_ray_run_sends_only_the_new_files_and_matches_the_local_pool(cluster, tmp_path):
    folder, ray_store, local_store = tmp_path / "logs", tmp_path / "ray-store", tmp_path / "local-store"
    synthetic_logs(folder, 40)
    first = json.loads(triage(folder, "--store", ray_store, ray=cluster))
    assert first["analysed"] == 40
    triage(folder, "--store", local_store)
    synthetic_logs(folder, 5, start=40)
    again = triage(folder, "--store", ray_store, ray=cluster)
    report = json.loads(again)
    assert (report["files"], report["analysed"], report["runs"]) == (45, 5, 45)
    assert again == triage(folder, "--store", local_store)  # the same store history, the same table


def test_without_an_address_the_driver_starts_a_local_ray_instance(tmp_path):
    folder = tmp_path / "logs"
    synthetic_logs(folder, 20)
    assert triage(folder, "--no-store", ray="") == triage(folder, "--no-store")
