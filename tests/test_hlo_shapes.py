"""Shrinking an HLO module's shapes, the last phase of `reduce --hlo` (issue 16): which dimensions change size
together, which keep theirs, and that every resized module is still one XLA accepts (and runs, where it can run
on CPU). End to end, the reduction stops shrinking where the failure needs the size."""

from __future__ import annotations

import json

import pytest
from conftest import cli
from fakes import HLO_COMPILER_CMD
from test_hlo_reduce import FIXTURES, PROTOS, load, subsets
from xla_run import xla_run

from nforensics.artifacts.hlo_facts import hlo_report
from nforensics.artifacts.hlo_proto import load_message, message_classes, to_records
from nforensics.artifacts.hlo_reduce import EntryGraph
from nforensics.artifacts.hlo_shapes import ShapeClasses, element_count
from nforensics.artifacts.hlo_text import parse_text
from nforensics.artifacts.hlo_write import check_module, entry_computation, sub_module
from nforensics.artifacts.hlo_write_text import module_text

F32 = 11


def by_name(module):
    return {i.name: i for i in entry_computation(module).instructions}


def class_of(classes: ShapeClasses, instruction, dim: int):
    return next((c for c in classes.classes() if (instruction.id, (), dim) in c.members), None)


def test_a_convolution_pairs_batch_and_features_and_keeps_its_spatial_sizes():
    module = load("conv7x7.pb")
    named = by_name(module)
    x, w = (next(i for i in named.values() if i.opcode == "parameter" and i.parameter_number == n) for n in (0, 1))
    conv = next(i for i in named.values() if i.opcode == "convolution")
    c = conv.convolution_dimension_numbers
    classes = ShapeClasses(module)
    features_in = class_of(classes, x, c.input_feature_dimension)
    assert features_in is not None and (w.id, (), c.kernel_input_feature_dimension) in features_in.members
    features_out = class_of(classes, conv, c.output_feature_dimension)
    assert features_out is not None and (w.id, (), c.kernel_output_feature_dimension) in features_out.members
    for instruction, spatial in ((x, c.input_spatial_dimensions), (w, c.kernel_spatial_dimensions),
                                 (conv, c.output_spatial_dimensions)):
        assert all(class_of(classes, instruction, d) is None for d in spatial), "window, stride and padding fix them"


def _module(*instructions: tuple[str, str, list[int], list[int], dict]):
    """A module of one computation from (name, opcode, shape, operand indexes, fields) rows; the last is the root."""
    classes = message_classes()
    module = classes["HloModuleProto"]()
    module.name, module.entry_computation_name, module.entry_computation_id = "m", "main", 1
    computation = module.computations.add()
    computation.name, computation.id = "main", 1
    for number, (name, opcode, dims, operands, fields) in enumerate(instructions, 1):
        instruction = computation.instructions.add()
        instruction.name, instruction.opcode, instruction.id = name, opcode, number
        instruction.shape.element_type = F32
        instruction.shape.dimensions.extend(dims)
        instruction.operand_ids.extend(o + 1 for o in operands)
        for field, value in fields.items():
            getattr(instruction, field).extend(value) if isinstance(value, list) else setattr(instruction, field, value)
    computation.root_id = len(instructions)
    params = [i for i in computation.instructions if i.opcode == "parameter"]
    for shape in (computation.program_shape, module.host_program_shape):
        shape.parameters.extend(p.shape for p in params)
        shape.result.CopyFrom(computation.instructions[-1].shape)
    return module


def test_a_reshape_pairs_the_dimensions_it_keeps_whole_and_keeps_the_ones_it_splits():
    module = _module(("p", "parameter", [4, 6, 1], [], {"parameter_number": 0}),
                     ("r", "reshape", [4, 2, 3], [0], {}),
                     ("t", "transpose", [3, 2, 4], [1], {"dimensions": [2, 1, 0]}))
    assert check_module(module) == []
    classes = ShapeClasses(module)
    [whole] = classes.classes()  # 4 stays whole through the reshape and the transpose; 6 is split into 2 x 3
    assert whole.size == 4 and set(whole.members) == {(1, (), 0), (2, (), 0), (3, (), 2)}
    resized = classes.resized(module, whole, 1)
    assert [list(i.shape.dimensions) for i in entry_computation(resized).instructions] == [[1, 6, 1], [1, 2, 3], [3, 2, 1]]
    assert list(resized.host_program_shape.parameters[0].dimensions) == [1, 6, 1] and check_module(resized) == []
    assert element_count(resized) * 4 == element_count(module)


def test_a_dot_pairs_its_contracting_dimensions_and_a_partial_slice_keeps_its_size():
    module = _module(("a", "parameter", [8, 5], [], {"parameter_number": 0}),
                     ("b", "parameter", [5, 7], [], {"parameter_number": 1}),
                     ("d", "dot", [8, 7], [0, 1], {}),
                     ("s", "slice", [8, 3], [2], {}))
    instructions = entry_computation(module).instructions
    instructions[2].dot_dimension_numbers.lhs_contracting_dimensions.append(1)
    instructions[2].dot_dimension_numbers.rhs_contracting_dimensions.append(0)
    for start, limit in ((0, 8), (2, 5)):  # rows whole, columns 2..5 only
        bounds = instructions[3].slice_dimensions.add()
        bounds.start, bounds.limit, bounds.stride = start, limit, 1
    classes = ShapeClasses(module)
    assert {c.size: set(c.members) for c in classes.classes()} == {
        8: {(1, (), 0), (3, (), 0), (4, (), 0)},  # rows: a, the dot and the slice spanning them
        5: {(1, (), 1), (2, (), 0)},  # the contracted dimension
    }  # the dot's 7 columns feed a slice of three of them: kept
    rows = next(c for c in classes.classes() if c.size == 8)
    resized = classes.resized(module, rows, 2)
    assert entry_computation(resized).instructions[3].slice_dimensions[0].limit == 2  # the span follows the rows


def test_ops_the_table_does_not_know_keep_their_shapes_and_their_operands():
    module = load("custom_kernel_twice.pb")
    instructions = {i.id: i for i in entry_computation(module).instructions}
    classes = ShapeClasses(module)
    calls = [i for i in instructions.values() if i.opcode == "custom-call"]
    assert calls
    for instruction in (*calls, *(instructions[o] for call in calls for o in call.operand_ids)):
        assert all(class_of(classes, instruction, d) is None for d in range(len(instruction.shape.dimensions)))


def _resized_modules(name: str):
    module = load(name)
    if "large" in name:  # a few thousand instructions: windows of the graph, not all of it
        ops = EntryGraph(module).ops
        candidates = [sub_module(module, ops[start:start + 60]) for start in (0, len(ops) // 2, len(ops) - 60)]
    else:
        candidates = [module, *(sub_module(module, ops) for ops in subsets(module, 3))]
    for candidate in candidates:
        classes = ShapeClasses(candidate)
        for dim_class in classes.classes()[:6]:
            for size in sorted({1, max(1, dim_class.size // 2)}):
                yield classes.resized(candidate, dim_class, size)


@pytest.mark.parametrize("name", PROTOS)
def test_the_dimensions_of_a_class_have_one_size(name):
    """A class pairs dimensions that must be equal: ones of different sizes in one class is a relation read wrong."""
    module = load(name)
    for candidate in [module, *(sub_module(module, ops) for ops in subsets(module, 4))]:
        instructions = {i.id: i for i in entry_computation(candidate).instructions}
        for dim_class in ShapeClasses(candidate).classes():
            sizes = set()
            for iid, path, d in dim_class.members:
                shape = instructions[iid].shape
                for index in path:
                    shape = shape.tuple_shapes[index]
                sizes.add(shape.dimensions[d])
            assert sizes == {dim_class.size}, dim_class


@pytest.mark.parametrize("name", PROTOS)
def test_every_resized_module_keeps_the_invariants_and_reads_alike_as_text(name):
    count = 0
    for resized in _resized_modules(name):
        assert check_module(resized) == []
        from_proto = hlo_report(to_records(resized), "m").model_dump(exclude={"form"})
        assert hlo_report(parse_text(module_text(resized), "m.hlo"), "m").model_dump(exclude={"form"}) == from_proto
        count += 1
    assert count or name in ("dynamic.pb",)  # a module of dynamic shapes only has nothing that may shrink


def _arrays(shape):
    """The array shapes of a result, its tuples flattened as XLA returns them."""
    if shape.element_type == 13:
        for part in shape.tuple_shapes:
            yield from _arrays(part)
    else:
        yield tuple(shape.dimensions)


@pytest.mark.parametrize("name", ["conv7x7_grad.pb", "bf16_islands.pb", "allreduce.pb", "large_planted.pb.gz"])
def test_jaxlib_accepts_every_resized_module_and_runs_it_with_the_new_shapes(name):
    resized = list(_resized_modules(name))
    results = xla_run(resized)  # a run compiles first: XLA's shape verifier checks every instruction
    assert [r.get("error") for r in results] == [None] * len(resized)
    ran = [(module, r["outputs"]) for module, r in zip(resized, results, strict=True) if r["outputs"] is not None]
    for module, outputs in ran:
        assert [o["shape"] for o in outputs] == [list(s) for s in _arrays(module.host_program_shape.result)]
    assert ran or name == "allreduce.pb"  # collectives do not run on one CPU device; loading checked them


def test_reduce_shrinks_each_size_only_as_far_as_the_failure_allows(tmp_path):
    """The stand-in fails only while the 7x7 convolution computes at least 12 output features: the reduction takes
    the input features down to 1 and the output features down to 12, never below."""
    out = tmp_path / "smallest.pb"
    result = cli("reduce", "--hlo", FIXTURES / "large_planted.pb.gz", "--expect", "NCC_ITEN404", "--budget", "40",
                 "--format", "json", "--journal", tmp_path / "journal.sqlite", "--out", out, "--",
                 *HLO_COMPILER_CMD, "compile", "{hlo}", "--target", "trn1", "--min-features", "12")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["shrunk"] == ["reshape.2: f32[1,32,8,8] -> f32[1,1,8,8]", "kernel.1: f32[32,32,7,7] -> f32[12,1,7,7]"]
    assert answer["phases"]["shapes"] <= 2 * 5 + 1  # one class at size 1 at once, one galloped: 2 ceil(log2 32) + 1
    conv = next(i for i in entry_computation(load_message(out.read_bytes())).instructions if i.opcode == "convolution")
    assert list(conv.shape.dimensions) == [1, 12, 8, 8]
    # One feature fewer no longer fails: the size is the failure's, not the search's stopping point.
    smaller = ShapeClasses(load_message(out.read_bytes()))
    features = next(c for c in smaller.classes() if c.size == 12)
    (tmp_path / "eleven.pb").write_bytes(smaller.resized(load_message(out.read_bytes()), features, 11).SerializeToString())
    again = cli("oracle", "--expect", "NCC_ITEN404", "--", *HLO_COMPILER_CMD, "compile", tmp_path / "eleven.pb",
                "--target", "trn1", "--min-features", "12")
    assert again.stdout.startswith("PASSES"), again.stdout
