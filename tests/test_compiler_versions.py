"""The compiler-version matrix: `sweep`/`bisect --compiler-versions` against stand-in neuronx-cc wheels built in the
test (tests/fakes/compiler_wheels.py), installed by pip from a local folder: no network, no real compiler."""

from __future__ import annotations

import json
import math

import pytest

from conftest import assert_clean_error, cli
from fakes import compiler_wheels
from nforensics.experiments.compilers import INSTALLED, requirement, versions_for_sdk
from nforensics.errors import InputError

VERSIONS = ["2.20.1.0", "2.21.1.0", "2.22.1.0", "2.23.1.0", "2.24.1.0"]


@pytest.fixture
def wheels(tmp_path, monkeypatch):
    """Stand-in releases where the failure is fixed in 2.23, pip pointed at them, a cache of our own."""
    compiler_wheels.build(tmp_path / "wheels", VERSIONS, fixed_in="2.23.1.0")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "wheels"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("NFORENSICS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def _installed(root) -> dict[str, float]:
    """Each environment made, and when it was finished."""
    return {marker.parent.name: marker.stat().st_mtime_ns for marker in (root / "cache").rglob(INSTALLED)}


def test_bisect_finds_the_release_that_fixed_it_in_few_installs_and_a_sweep_reuses_them(wheels):
    short = ",".join(v.rsplit(".", 2)[0] for v in VERSIONS)  # 2.20,2.21,...: any build of each release
    result = cli("bisect", "--expect", "NCC_IXLV002", "--compiler-versions", short, "--format", "json",
                 "--journal", str(wheels / "j"), "--", "neuronx-cc", "compile")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["boundary"], data["fixes"]) == ("2.23", True)
    installs = _installed(wheels)
    assert len(installs) == data["runs"] <= math.ceil(math.log2(len(VERSIONS))) + 1
    sweep = cli("sweep", "--expect", "NCC_IXLV002", "--compiler-versions", short, "--format", "json",
                "--journal", str(wheels / "j2"), "--", "neuronx-cc", "compile")
    verdicts = [(run["knobs"]["neuronx_cc"], run["verdict"]) for run in json.loads(sweep.stdout)["runs"]]
    assert verdicts == [("2.20", "REPRODUCES"), ("2.21", "REPRODUCES"), ("2.22", "REPRODUCES"), ("2.23", "PASSES"),
                        ("2.24", "PASSES")]
    again = _installed(wheels)
    assert len(again) == len(VERSIONS) and all(again[name] == when for name, when in installs.items()), \
        "each release's environment is made once and reused"
    # What goes on a run's PATH is the release's own commands, not its environment's python.
    commands = {p.name for p in (wheels / "cache").rglob("commands/*")}
    assert commands == {"neuronx-cc"}


def test_a_release_pip_cannot_find_is_untestable_not_a_pass(wheels):
    result = cli("sweep", "--expect", "NCC_IXLV002", "--compiler-versions", "2.20,2.99", "--format", "json",
                 "--journal", str(wheels / "j"), "--", "neuronx-cc", "compile")
    runs = {run["knobs"]["neuronx_cc"]: run["verdict"] for run in json.loads(result.stdout)["runs"]}
    assert runs == {"2.20": "REPRODUCES", "2.99": "UNTESTABLE"}
    assert not (wheels / "cache" / "compilers" / "neuronx-cc-2.99").exists(), "nothing half-made is left"
    # Bisecting to a release that cannot be installed says so, it does not fail.
    bisect = cli("bisect", "--expect", "NCC_IXLV002", "--compiler-versions", "2.99,2.20", "--format", "json",
                 "--journal", str(wheels / "j2"), "--", "neuronx-cc", "compile")
    assert (bisect.returncode, json.loads(bisect.stdout)["boundary"]) == (1, None)
    assert "neuronx_cc=2.99 is untestable" in bisect.stderr


def test_versions_are_checked_before_anything_runs(tmp_path):
    result = cli("sweep", "--expect", "NCC_IXLV002", "--compiler-versions", "2.21,latest", "--journal",
                 str(tmp_path / "j"), "--", "neuronx-cc")
    assert_clean_error(result.returncode, result.stderr, "'latest' is not a neuronx-cc version")
    for given in (("--compiler-versions", ","), ("--knob", "neuronx_cc=2.21,x")):
        refused = cli("sweep", "--expect", "NCC_IXLV002", *given, "--journal", str(tmp_path / "j"), "--", "neuronx-cc")
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert requirement("2.21") == "neuronx-cc==2.21.*" and requirement("2.21.18209.0") == "neuronx-cc==2.21.18209.0"


def test_sdk_releases_name_the_compiler_each_shipped():
    assert versions_for_sdk(["2.32.0"]) == ["2.27.5334.0"]
    assert versions_for_sdk(["2.32"]) == ["2.27.5334.0"]  # the release without its patch number
    with pytest.raises(InputError, match="not in the release table"):
        versions_for_sdk(["9.99"])


def test_releases_given_as_a_knob_are_put_in_order_too(wheels):
    """bisect reads releases oldest first: given newest first, in a knob or a plan, they are sorted all the same."""
    result = cli("bisect", "--expect", "NCC_IXLV002", "--knob", "neuronx_cc=2.24,2.23,2.22,2.20,2.22", "--format",
                 "json", "--journal", str(wheels / "j"), "--", "neuronx-cc", "compile")
    assert (json.loads(result.stdout)["boundary"], json.loads(result.stdout)["fixes"]) == ("2.23", True)


def test_a_relative_cache_folder_still_gives_runs_a_working_compiler(wheels, monkeypatch):
    monkeypatch.chdir(wheels)
    monkeypatch.setenv("NFORENSICS_CACHE_DIR", "relative-cache")
    result = cli("sweep", "--expect", "NCC_IXLV002", "--compiler-versions", "2.20,2.24", "--format", "json",
                 "--journal", str(wheels / "j"), "--", "neuronx-cc", "compile")
    assert [run["verdict"] for run in json.loads(result.stdout)["runs"]] == ["REPRODUCES", "PASSES"]
