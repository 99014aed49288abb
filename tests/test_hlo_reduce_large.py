"""`nforensics reduce --hlo` end to end (issue 16): the 5163-instruction planted module (tests/fixtures/hlo/
large_planted.pb.gz: the large fixture's 48 transformer blocks with a 7x7 convolution feeding a transpose in
block 24) against tests/fakes/hlo_compiler.py, a TEST DOUBLE for neuronx-cc that fails with NCC_ITEN404 on that
structure only. The reduction must reach at most 5% of the instructions within a small compile budget, the
result must still fail with the same code, and a resumed session must compile nothing again."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import assert_clean_error, cli
from fakes import HLO_COMPILER_CMD

from nforensics.artifacts.hlo import read_module
from nforensics.artifacts.hlo_proto import load_message
from nforensics.artifacts.hlo_write import check_module

FIXTURES = Path(__file__).parent / "fixtures" / "hlo"
PLANTED = FIXTURES / "large_planted.pb.gz"
BUDGET = 24  # distinct compiles; bench/hlo_reduce.py states the bound and the count


def reduce(tmp_path: Path, *extra: str, module: Path = PLANTED, log: Path | None = None):
    log = log or tmp_path / "compiles.log"
    return cli("reduce", "--hlo", module, "--expect", "NCC_ITEN404", "--budget", str(BUDGET), "--format", "json",
               "--journal", tmp_path / "journal.sqlite", "--out", tmp_path / "smallest.pb", *extra,
               "--", *HLO_COMPILER_CMD, "compile", "{hlo}", "--framework", "XLA", "--target", "trn1", "--log", log)


def test_the_planted_module_shrinks_to_the_failing_structure(tmp_path):
    result = reduce(tmp_path, "--workers", "2")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    before, after = answer["instructions"]
    assert before == 5163 and after <= 0.05 * before
    assert answer["runs"] <= BUDGET and not answer["budget_exhausted"]
    assert (tmp_path / "compiles.log").read_text().count("\n") == answer["runs"]
    reduced = load_message((tmp_path / "smallest.pb").read_bytes())
    assert check_module(reduced) == []
    ops = sorted(i.opcode for c in reduced.computations for i in c.instructions if i.opcode != "parameter")
    assert ops == ["convolution", "transpose"]
    text = read_module(tmp_path / "smallest.hlo")  # the text beside it reads as the same module
    assert [i.opcode for i in text.computations[-1].instructions] == ["parameter", "parameter", "convolution", "transpose"]
    # the result still fails with the same code, judged by the same oracle
    again = cli("oracle", "--expect", "NCC_ITEN404", "--", *HLO_COMPILER_CMD, "compile", tmp_path / "smallest.pb",
                "--target", "trn1")
    assert again.returncode == 0 and again.stdout.startswith("REPRODUCES"), again.stdout

    # --resume of the finished session compiles nothing again and gives the same answer
    resumed = reduce(tmp_path, "--workers", "2", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["instructions"] == answer["instructions"]
    assert (tmp_path / "compiles.log").read_text().count("\n") == answer["runs"]


def test_a_budget_stops_early_with_the_smallest_failing_module_so_far(tmp_path):
    result = reduce(tmp_path, "--workers", "1", "--budget", "4")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["budget_exhausted"] and answer["runs"] == 4
    assert answer["instructions"][1] < answer["instructions"][0]
    assert check_module(load_message((tmp_path / "smallest.pb").read_bytes())) == []


def test_a_module_that_does_not_fail_is_not_reduced(tmp_path):
    result = reduce(tmp_path, "--workers", "1", module=FIXTURES / "conv7x7.pb")
    assert result.returncode == 1
    assert json.loads(result.stdout)["reduced"] is None
    assert not (tmp_path / "smallest.pb").exists()


def test_bad_input_is_one_line(tmp_path):
    compile_ = ["--", *HLO_COMPILER_CMD, "compile", "{hlo}"]
    cases = [
        (["--hlo", FIXTURES / "conv7x7.hlo", *compile_], "needs the module as a proto"),
        (["--hlo", tmp_path / "missing.pb", *compile_], "no such file"),
        (["--hlo", FIXTURES / "SOURCE.md", *compile_], "not an HLO module"),
        (["--hlo", PLANTED, "--", *HLO_COMPILER_CMD, "compile", "model.pb"], "needs {hlo} in the command"),
        (["--hlo", PLANTED, "--items", "-O1", *compile_], "not both"),
        (["--hlo", PLANTED, "--budget", "0", *compile_], "--budget"),
        (["--out", tmp_path / "x.pb", "--items", "-O1", "--", "true", "{items}"], "for reduce --hlo"),
    ]
    for args, fragment in cases:
        result = cli("reduce", "--expect", "NCC_ITEN404", "--journal", tmp_path / "j.sqlite", *args)
        assert_clean_error(result.returncode, result.stderr, fragment)
        assert fragment in result.stderr


def test_a_failure_that_needs_two_instructions_keeps_both(tmp_path):
    """NCC_IXLV002 when one kernel is launched twice: the two launches are not adjacent (an add sits between them),
    so the cone and ddmin must keep both custom-calls and cut the add into a parameter."""
    result = cli("reduce", "--hlo", FIXTURES / "custom_kernel_twice.pb", "--expect", "NCC_IXLV002", "--format", "json",
                 "--workers", "1", "--journal", tmp_path / "journal.sqlite", "--out", tmp_path / "twice.pb",
                 "--", *HLO_COMPILER_CMD, "compile", "{hlo}", "--fail-on", "kernel-twice")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    reduced = load_message((tmp_path / "twice.pb").read_bytes())
    assert check_module(reduced) == []
    calls = [i for c in reduced.computations for i in c.instructions if i.opcode == "custom-call"]
    assert [i.name for i in calls] == ["ffi_call.3", "ffi_call.4"]
    assert answer["cut"] == ["add.3 (f32[128,512] add)"]
    assert answer["instructions"] == [7, 5]  # the parameter, the two launches, the cut value and a tuple of both
