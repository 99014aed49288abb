"""The HLO writer behind `reduce --hlo` (issue 16): every sub-module it writes keeps XLA's invariants (checked
here without jaxlib), its text says what the proto says, and jaxlib (when installed) loads it back and runs it.
The reduction itself, end to end against the stand-in compiler, is tests/test_hlo_reduce_large.py."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from nforensics.artifacts.hlo_facts import hlo_report
from nforensics.artifacts.hlo_proto import load_message, to_records
from nforensics.artifacts.hlo_reduce import EntryGraph
from nforensics.artifacts.hlo_text import parse_text
from nforensics.artifacts.hlo_write import check_module, entry_computation, sub_module
from nforensics.artifacts.hlo_write_text import module_text
from xla_run import xla_run

FIXTURES = Path(__file__).parent / "fixtures" / "hlo"
PROTOS = sorted(p.name for p in FIXTURES.glob("*.pb*"))


def load(name: str):
    data = (FIXTURES / name).read_bytes()
    return load_message(gzip.decompress(data) if name.endswith(".gz") else data, name)


def subsets(module, count: int, seed: int = 16):
    """Random sets of the entry's ops, of every size, plus a prefix and a single op."""
    graph = EntryGraph(module)
    rng = random.Random(seed)
    yield frozenset(graph.ops[: len(graph.ops) // 2])
    yield frozenset(graph.ops[-1:])
    for _ in range(count):
        yield frozenset(rng.sample(graph.ops, rng.randint(1, len(graph.ops))))


def invariants(module) -> None:
    """The module-level invariants, stated directly (check_module says the same; this does not trust it)."""
    entry = entry_computation(module)
    assert entry.name == module.entry_computation_name and entry.id == module.entry_computation_id
    for computation in module.computations:
        ids = {i.id for i in computation.instructions}
        assert computation.root_id in ids, "root set"
        for instruction in computation.instructions:
            assert set(instruction.operand_ids) <= ids, "every operand defined"
            assert set(instruction.control_predecessor_ids) <= ids
            assert set(instruction.called_computation_ids) <= {c.id for c in module.computations}
    parameters = sorted(i.parameter_number for i in entry.instructions if i.opcode == "parameter")
    assert parameters == list(range(len(parameters))), "parameters numbered 0..n-1"
    root = next(i for i in entry.instructions if i.id == entry.root_id)
    for shape in (entry.program_shape, module.host_program_shape):
        assert len(shape.parameters) == len(parameters) and shape.result == root.shape
    called = {c for i in entry.instructions for c in i.called_computation_ids}
    for computation in module.computations:
        called |= {c for i in computation.instructions for c in i.called_computation_ids}
    assert {c.id for c in module.computations} == called | {entry.id}, "no computation nobody calls"
    assert check_module(module) == []


@pytest.mark.parametrize("name", PROTOS)
def test_every_sub_module_keeps_the_invariants(name):
    module = load(name)
    invariants(module)
    for ops in subsets(module, 20 if "large" not in name else 4):
        reduced = sub_module(module, ops)
        invariants(reduced)
        kept = {i.id for i in entry_computation(reduced).instructions}
        assert ops <= kept  # every op asked for is there, as itself
        by_id = {i.id: i for i in entry_computation(module).instructions}
        for instruction in entry_computation(reduced).instructions:
            if instruction.opcode != "parameter" and instruction.name != "reduced_root":
                assert instruction == by_id[instruction.id]  # copied whole: unknown fields included


def test_cut_values_become_parameters_and_the_root_is_a_tuple_of_the_outputs():
    module = load("conv7x7_grad.pb")
    names = {i.name: i.id for i in entry_computation(module).instructions}
    reduced = sub_module(module, {names["conv_general_dilated.5"], names["conv_general_dilated.4"]})
    entry = entry_computation(reduced)
    parameters = {i.name: i.parameter_number for i in entry.instructions if i.opcode == "parameter"}
    assert set(parameters) == {"x.1", "mul.3", "rev.1"}  # mul.3 and rev.1 were cut into parameters
    root = next(i for i in entry.instructions if i.id == entry.root_id)
    assert root.opcode == "tuple" and list(root.operand_ids) == [names["conv_general_dilated.5"], names["conv_general_dilated.4"]]
    assert list(reduced.host_program_shape.parameter_names) == sorted(parameters, key=parameters.get)


def test_check_module_names_what_is_broken():
    module = load("conv7x7_grad.pb")
    assert check_module(module) == []
    entry = entry_computation(module)
    broken = type(module)()
    broken.CopyFrom(module)
    del entry_computation(broken).instructions[0]  # x.1: its users now use an undefined value
    assert any("before it is defined" in p for p in check_module(broken))
    broken.CopyFrom(module)
    next(i for i in entry_computation(broken).instructions if i.opcode == "parameter").parameter_number = 5
    assert "entry parameters are not numbered 0..n-1" in check_module(broken)
    broken.CopyFrom(module)
    entry_computation(broken).root_id = 999
    assert any("no root" in p for p in check_module(broken))
    assert entry.root_id != 999


@pytest.mark.parametrize("name", PROTOS)
def test_the_text_says_what_the_proto_says(name):
    module = load(name)
    for candidate in [module, *(sub_module(module, ops) for ops in subsets(module, 2))]:
        from_proto = hlo_report(to_records(candidate), "m").model_dump(exclude={"form"})
        from_text = hlo_report(parse_text(module_text(candidate), "m.hlo"), "m").model_dump(exclude={"form"})
        assert from_text == from_proto


@pytest.mark.parametrize("name", ["conv7x7_grad.pb", "bf16_islands.pb", "custom_kernel_twice.pb", "allreduce.pb"])
def test_jaxlib_loads_every_written_module_and_runs_the_executable_ones(name):
    module = load(name)
    written = [sub_module(module, ops) for ops in subsets(module, 6)]
    results = xla_run(written)
    assert all(r.get("name") == module.name for r in results), results
    runnable = [r for r in results if r["outputs"] is not None]
    assert all(r["outputs"] for r in runnable) and (runnable or name in ("custom_kernel_twice.pb", "allreduce.pb"))


def test_the_reduced_planted_module_runs_like_the_graph_it_came_from():
    import numpy as np

    module = load("large_planted.pb.gz")
    entry = entry_computation(module)
    conv = next(i for i in entry.instructions if i.opcode == "convolution")
    transpose = next(i for i in entry.instructions if i.opcode == "transpose" and conv.id in i.operand_ids)
    [result] = xla_run([sub_module(module, {conv.id, transpose.id})])
    [out] = result["outputs"]
    # ones(1,32,8,8) convolved with ones(32,32,7,7), pad 3: 32 channels times the rows and columns the window covers
    covered = np.array([min(8, i + 4) - max(0, i - 3) for i in range(8)])
    expected = 32 * np.outer(covered, covered)
    assert out["shape"] == [1, 8, 8, 32]
    assert np.allclose(np.array(out["values"])[0, :, :, 0], expected)  # NHWC after the transpose
