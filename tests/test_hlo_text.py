"""HLO text through grammars/hlo/hlo.lark: every generated module, the other ways XLA prints a module, attributes the
grammar does not know (kept, never an error), and text that is not HLO or is cut short (one clear error).

The fixtures come from a real XLA (tests/fixtures/hlo/SOURCE.md); the inline modules below are written in the forms
XLA's printer also produces (no `%`, operand shapes, /*index=N*/ comments, tiled layouts, the iota form).
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys

import pytest

from conftest import REPO
from nforensics.artifacts import hlo_text
from nforensics.artifacts.hlo_text import parse_text
from nforensics.artifacts.hlo_values import conv_dims, dim_labels, iota_groups
from nforensics.errors import InputError

FIXTURES = REPO / "tests" / "fixtures" / "hlo"
TEXTS = sorted(FIXTURES.glob("*.hlo")) + sorted(FIXTURES.glob("*.hlo.gz"))


def text_of(path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()


def instructions(module) -> dict:
    return {i.name: i for c in module.computations for i in c.instructions}


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.name)
def test_every_generated_module_parses_whole(path):
    """Each instruction line of XLA's own text becomes one instruction record, with its name and opcode."""
    text = text_of(path)
    module = parse_text(text)
    defined = re.findall(r"^\s+(?:ROOT )?%?([\w.\-]+) = \S.*? ([a-z][\w\-]*)\(", text, re.MULTILINE)
    assert [(i.name, i.opcode) for c in module.computations for i in c.instructions] == defined
    assert module.entry == re.search(r"^ENTRY %?([\w.\-]+)", text, re.MULTILINE).group(1)
    assert sum(i.is_root for c in module.computations for i in c.instructions) == len(module.computations)


def test_seven_by_seven_convolution_and_its_gradients():
    convs = {i.name: i for i in instructions(parse_text(text_of(FIXTURES / "conv7x7_grad.hlo"))).values()
             if i.opcode == "convolution"}
    forward, data, weights = convs["conv_general_dilated.3"], convs["conv_general_dilated.5"], convs["conv_general_dilated.4"]
    assert [(d.size, d.stride, d.pad_low, d.pad_high, d.lhs_dilate, d.rhs_dilate) for d in forward.window] == [(7, 2, 3, 3, 1, 1)] * 2
    assert [(d.size, d.stride, d.pad_low, d.pad_high, d.lhs_dilate) for d in data.window] == [(7, 1, 3, 4, 2)] * 2
    assert [(d.size, d.rhs_dilate, d.pad_low, d.pad_high) for d in weights.window] == [(16, 2, 3, 2)] * 2
    assert dim_labels(forward.conv_dims) == "bf01_oi01->bf01"
    assert dim_labels(weights.conv_dims) == "fb01_io01->fb01"
    assert (weights.conv_dims.input_batch, weights.conv_dims.input_feature) == (1, 0)
    assert forward.operands == ["x.1", "w.1"] and forward.shape.dims == [2, 8, 16, 16]
    assert forward.shape.layout == [3, 2, 1, 0]
    assert forward.metadata.op_name == "jit(conv_loss)/jvp()/conv_general_dilated" and forward.metadata.stack_frame_id


def test_custom_calls_keep_target_and_backend_config_exactly():
    calls = [i for i in instructions(parse_text(text_of(FIXTURES / "custom_kernel_twice.hlo"))).values()
             if i.opcode == "custom-call"]
    assert [c.custom_call_target for c in calls] == ["AwsNeuronCustomNativeKernel"] * 3
    # An unquoted JSON backend_config keeps its spacing; a quoted one is unescaped.
    assert calls[0].backend_config == '{"kernel_name": "sendrecv_kernel", "grid": [2]}'
    assert calls[2].backend_config == 'kernel_name=rmsnorm_kernel;note="quoted"'
    assert calls[0].attributes["operand_layout_constraints"] == "{f32[128,512]{1,0}}"
    assert calls[0].attributes["custom_call_has_side_effect"] == "true"


def test_stack_frame_index_gives_source_lines():
    module = parse_text(text_of(FIXTURES / "conv7x7.hlo"))
    conv = instructions(module)["conv_general_dilated.1"]
    frame = module.frames[conv.metadata.stack_frame_id - 1]
    assert frame.file.endswith("tools/gen_hlo_fixtures.py") and frame.function == "_modules.<locals>.conv"
    assert frame.line > 0 and frame.parent == conv.metadata.stack_frame_id - 1
    assert module.frames[0].parent is None


def test_replica_groups_explicit_and_iota():
    collectives = instructions(parse_text(text_of(FIXTURES / "allreduce.hlo")))
    assert collectives["psum_invariant.5"].replica_groups == [[0, 1], [2, 3]]
    assert collectives["reduce_scatter.5"].replica_groups == [[0, 2], [1, 3]]
    assert collectives["ppermute.1"].source_target_pairs == [[0, 2], [2, 0], [1, 3], [3, 1]]
    assert collectives["psum_invariant.5"].channel_id == 1 and collectives["psum_invariant.5"].use_global_device_ids
    assert collectives["psum_invariant.5"].called == ["region_0.1"]
    iota = instructions(parse_text(text_of(FIXTURES / "iota_groups.hlo")))
    assert iota["rows"].replica_groups == [[0, 1], [2, 3]]
    assert iota["columns"].replica_groups == [[0, 2], [1, 3]]  # [2,2]<=[2,2]T(1,0): transposed before cutting


def test_iota_expansion():
    assert iota_groups(2, 4, [8], []) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert iota_groups(4, 2, [2, 4], [1, 0]) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert iota_groups(2, 4, [2, 2, 2], [2, 1, 0]) == [[0, 4, 2, 6], [1, 5, 3, 7]]


def test_dynamic_shapes():
    module = parse_text(text_of(FIXTURES / "dynamic.hlo"))
    bounded = instructions(module)["bounded"]
    assert (bounded.shape.dims, bounded.shape.dynamic) == ([8, 4], [True, False])
    root = instructions(module)["out"]
    assert root.shape.dtype == "tuple" and root.shape.tuple_shapes[0].dynamic == [True, False]


# The forms XLA's printer writes besides the fixtures': short names, operand shapes (older XLA), /*index=N*/,
# tiled layouts and memory spaces, constants' literals, no ENTRY mark, a computation's execution_thread.
OTHER_FORMS = """HloModule other_forms, is_scheduled=true, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(f32[] a, f32[] b)
}

side (p: f32[4]) -> f32[4], execution_thread="host" {
  ROOT p = f32[4]{0:T(128)S(1)} parameter(0)
}

main {
  x = f32[4]{0} parameter(0)
  c = f32[2,2]{1,0} constant({ {1, 2}, {3, 4} })
  n = f32[] constant(-inf)
  t = (f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, /*index=5*/f32[4]{0}) tuple(x, x, x, x, x, /*index=5*/x)
  g = f32[4]{0} get-tuple-element(t), index=5
  r = f32[] reduce(g, n), dimensions={0}, to_apply=add
  ar = f32[4]{0} all-reduce(g), replica_groups=[1,4]<=[4], to_apply=add, sharding={devices=[2,1]0,1 last_tile_dim_replicate}
  cc = f32[4]{0} custom-call(ar), custom_call_target="AwsNeuronCustomNativeKernel", backend_config="kernel\\"x\\"\\n\\101", api_version=API_VERSION_STATUS_RETURNING
  w = f32[4]{0} while(cc), condition=add, body=side, future_attribute={a=[1,2] "b": {c:"d"} e=(1, 2)}, frontend_attributes={k="v"}
  ROOT m = f32[4]{0} multiply(w, cc), metadata={op_type="Mul" op_name="model/mul" source_file="/src/model.py" source_line=42}
}
"""


def test_other_printer_forms():
    module = parse_text(OTHER_FORMS)
    assert module.name == "other_forms" and module.entry == "main"  # no ENTRY mark: the last computation
    assert [c.is_entry for c in module.computations] == [False, False, True]
    found = instructions(module)
    assert found["s"].operands == ["a", "b"]  # operand shapes are not operands
    assert found["c"].operands == [] and found["n"].operands == []  # literals are not operands
    assert found["t"].operands == ["x"] * 6 and len(found["t"].shape.tuple_shapes) == 6
    assert found["ar"].replica_groups == [[0, 1, 2, 3]]
    assert found["ar"].attributes["sharding"] == "{devices=[2,1]0,1 last_tile_dim_replicate}"
    assert found["cc"].backend_config == 'kernel"x"\nA'
    assert found["cc"].attributes["api_version"] == "API_VERSION_STATUS_RETURNING"
    assert found["w"].called == ["add", "side"]
    assert found["w"].attributes["future_attribute"] == '{a=[1,2] "b": {c:"d"} e=(1, 2)}'  # unknown: kept as written
    assert found["m"].metadata.source_file == "/src/model.py" and found["m"].metadata.source_line == 42
    assert found["m"].metadata.op_type == "Mul"
    assert module.computations[1].instructions[0].shape.layout == [0]  # tiling and memory space after ':'


def test_dim_labels_round_trip():
    for labels in ("bf01_oi01->bf01", "b01f_01io->b01f", "fb01_io01->fb01", "bf0_oi0->bf0", "b012f_012io->b012f"):
        assert dim_labels(conv_dims(labels)) == labels
    assert conv_dims("not labels") is None


@pytest.mark.parametrize("text, where", [
    ("HloModule m\n\nENTRY main {\n  x = f32[2]{0} parameter(0)\n", "ends too early"),  # cut short: no closing brace
    ("HloModule m\n\nENTRY main {\n  x = f32[2]{0} parameter(0\n}\n", "line 5"),  # unclosed operand list
    ("HloModule m\n\nENTRY main {\n  x f32[2]{0} parameter(0)\n}\n", "line 4"),  # no '='
    ("HloModule m\n\nENTRY main {\n  x = f32[2]{0} add(y), window={size=3\n}\n", "line 5"),  # unbalanced attribute
    ("HloModule\n", "ends too early"),  # a header and nothing else
    ("HloModule m\n\nENTRY main {\n  x = f32[2]{0} parameter(0)\n  ROOT y = f32[2]{0} negate(x), window={size=2}} }\n", "line 5"),
])
def test_text_that_stops_being_hlo_names_where(text, where):
    with pytest.raises(InputError, match=where):
        parse_text(text, "bad.hlo")


def test_a_cut_at_any_line_is_an_input_error():
    """Every prefix of a real module that ends at a line break is either a shorter valid module or an InputError."""
    text = text_of(FIXTURES / "allreduce.hlo")
    whole = len(parse_text(text).computations)
    errors = 0
    for cut in [m.end() for m in re.finditer("\n", text)][:-2]:
        try:
            shorter = parse_text(text[:cut], "cut.hlo")
        except InputError:
            errors += 1
            continue
        assert text[:cut].rstrip().endswith("}") and len(shorter.computations) < whole  # cut between computations
    assert errors >= text.count("\n") - 2 * whole - 2


def test_parser_tables_ship_prebuilt_and_current():
    """grammars/hlo/hlo.lark changed without `python tools/build_hlo_tables.py`: start-up would build the parser."""
    result = subprocess.run([sys.executable, str(REPO / "tools/build_hlo_tables.py"), "--check"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert hlo_text.prebuilt(hlo_text.grammar_path().read_text(encoding="utf-8")) is not None
    assert hlo_text.prebuilt(hlo_text.grammar_path().read_text(encoding="utf-8") + "\n// edited\n") is None
