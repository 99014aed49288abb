"""`nforensics hlo FILE`: the facts a user reads (terminal and --format json) for each generated module, the structural
convolution roles with their near misses, and bad input as one line on stderr with exit code 2.
"""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from conftest import REPO, assert_clean_error, cli, run_cli_text
from nforensics.artifacts.hlo_facts import hlo_report, kernel_name
from nforensics.artifacts.hlo_text import parse_text

FIXTURES = REPO / "tests" / "fixtures" / "hlo"


def facts(path) -> dict:
    code, out, err = cli("hlo", path, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_convolution_gradients_are_recognised_from_structure():
    convs = {c["name"]: c for c in facts(FIXTURES / "conv7x7_grad.pb")["convolutions"]}
    forward = convs["conv_general_dilated.3"]
    assert (forward["window"], forward["stride"], forward["padding"], forward["backward"]) == ("7x7", "2x2", "3_3x3_3", None)
    data, weights = convs["conv_general_dilated.5"], convs["conv_general_dilated.4"]
    assert (data["backward"], data["backward_of"], data["lhs_dilate"]) == ("input", "conv_general_dilated.3", "2x2")
    assert (weights["backward"], weights["backward_of"], weights["window"], weights["rhs_dilate"]) == (
        "filter", "conv_general_dilated.3", "16x16", "2x2")
    assert weights["dim_labels"] == "fb01_io01->fb01" and forward["feature_group_count"] == 1
    # The fixtures were generated in another checkout: the source line names the generator, wherever it was.
    assert forward["source"].split(":")[0].endswith("/tools/gen_hlo_fixtures.py")


def test_a_forward_convolution_alone_is_no_gradient():
    [conv] = facts(FIXTURES / "conv7x7.hlo")["convolutions"]
    assert conv["backward"] is None and conv["why"] is None and conv["window"] == "7x7"


def _module(body: str) -> str:
    return "HloModule m\n\nENTRY main {\n" + body + "\n}\n"


@pytest.mark.parametrize("body, role", [
    # backward-only graphs: no forward twin, the window's marks decide
    ("  g = f32[2,8,16,16]{3,2,1,0} parameter(0)\n  w = f32[8,3,7,7]{3,2,1,0} parameter(1)\n"
     "  ROOT dx = f32[2,3,32,32]{3,2,1,0} convolution(g, w), window={size=7x7 pad=3_4x3_4 lhs_dilate=2x2}, "
     "dim_labels=bf01_io01->bf01", "input"),
    ("  g = f32[2,8,32,32]{3,2,1,0} parameter(0)\n  w = f32[8,3,7,7]{3,2,1,0} parameter(1)\n"
     "  r = f32[8,3,7,7]{3,2,1,0} reverse(w), dimensions={2,3}\n"
     "  ROOT dx = f32[2,3,32,32]{3,2,1,0} convolution(g, r), window={size=7x7 pad=3_3x3_3}, dim_labels=bf01_io01->bf01",
     "input"),
    ("  x = f32[2,3,32,32]{3,2,1,0} parameter(0)\n  g = f32[2,8,16,16]{3,2,1,0} parameter(1)\n"
     "  ROOT dw = f32[8,3,7,7]{3,2,1,0} convolution(x, g), window={size=16x16 pad=3_2x3_2 rhs_dilate=2x2}, "
     "dim_labels=fb01_io01->fb01", "filter"),
    # near misses: forward convolutions with a transposed (not reversed) kernel, a 1x1 window, a depthwise conv
    ("  x = f32[2,3,32,32]{3,2,1,0} parameter(0)\n  w = f32[3,8,7,7]{3,2,1,0} parameter(1)\n"
     "  t = f32[8,3,7,7]{3,2,1,0} transpose(w), dimensions={1,0,2,3}\n"
     "  ROOT y = f32[2,8,16,16]{3,2,1,0} convolution(x, t), window={size=7x7 stride=2x2 pad=3_3x3_3}, "
     "dim_labels=bf01_oi01->bf01", None),
    ("  x = f32[2,3,32,32]{3,2,1,0} parameter(0)\n  w = f32[8,3,1,1]{3,2,1,0} parameter(1)\n"
     "  ROOT y = f32[2,8,32,32]{3,2,1,0} convolution(x, w), window={size=1x1}, dim_labels=bf01_oi01->bf01", None),
    ("  x = f32[2,8,32,32]{3,2,1,0} parameter(0)\n  w = f32[8,1,3,3]{3,2,1,0} parameter(1)\n"
     "  ROOT y = f32[2,8,32,32]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, "
     "feature_group_count=8", None),
], ids=["lhs-dilated", "reversed-kernel", "rhs-dilated", "transposed-kernel", "1x1", "depthwise"])
def test_gradient_marks_without_a_forward_twin(body, role):
    [conv] = hlo_report(parse_text(_module(body)), "m").convolutions
    assert conv.backward == role
    assert conv.backward_of is None


def test_custom_kernel_called_twice():
    [call] = facts(FIXTURES / "custom_kernel_twice.pb")["custom_calls"]
    assert call["target"] == "AwsNeuronCustomNativeKernel" and call["calls"] == 3
    assert call["kernels"] == {"sendrecv_kernel": 2, "rmsnorm_kernel": 1}


@pytest.mark.parametrize("config, op_name, expected", [
    ('{"kernel_name": "flash_fwd"}', None, "flash_fwd"),
    ('{"func_name": "matmul_tiled", "grid": [4]}', None, "matmul_tiled"),
    ('kernel_name=rmsnorm;grid=2', None, "rmsnorm"),
    ('{"grid": [4]}', "jit(f)/my_kernel", "my_kernel"),  # no name in the config: the op_name's last part
    ("opaque-bytes", None, "?"),
])
def test_kernel_names(config, op_name, expected):
    meta = f', metadata={{op_name="{op_name}"}}' if op_name else ""
    text = _module(f"  x = f32[2]{{0}} parameter(0)\n  ROOT k = f32[2]{{0}} custom-call(x), "
                   f"custom_call_target=\"AwsNeuronCustomNativeKernel\", backend_config={json.dumps(config)}{meta}")
    [call] = [i for c in parse_text(text).computations for i in c.instructions if i.opcode == "custom-call"]
    assert kernel_name(call) == expected


def test_bf16_with_f32_islands():
    dtypes = facts(FIXTURES / "bf16_islands.hlo")["dtypes"]
    assert dtypes["mixed_bf16_f32"] is True
    assert dtypes["converts"] == {"bf16->f32": 2, "f32->bf16": 2}
    assert {s["change"] for s in dtypes["sites"]} == {"bf16->f32", "f32->bf16"}
    assert facts(FIXTURES / "conv7x7.pb")["dtypes"]["mixed_bf16_f32"] is False  # near miss: all f32


def test_hbm_estimate_from_shapes():
    memory = facts(FIXTURES / "conv7x7.pb")["memory"]
    assert memory["parameter_bytes"] == (2 * 3 * 32 * 32 + 8 * 3 * 7 * 7) * 4
    assert memory["output_bytes"] == 2 * 8 * 16 * 16 * 4
    assert memory["estimate_bytes"] == memory["parameter_bytes"] + memory["output_bytes"]
    assert facts(FIXTURES / "bf16_islands.pb")["memory"]["parameter_bytes"] == (16 * 64 + 64 * 128 + 128 * 32) * 2


def test_collectives_and_dynamic_shapes():
    collectives = {c["opcode"]: c for c in facts(FIXTURES / "allreduce.pb")["collectives"]}
    assert collectives["all-reduce"]["replica_groups"] == [[0, 1], [2, 3]]
    assert collectives["reduce-scatter"]["replica_groups"] == [[0, 2], [1, 3]]
    assert collectives["collective-permute"]["source_target_pairs"] == [[0, 2], [2, 0], [1, 3], [3, 1]]
    report = facts(FIXTURES / "dynamic.pb")
    assert [(d["name"], d["shape"]) for d in report["dynamic"]] == [
        ("bounded", "f32[<=8,4]"), ("doubled", "f32[<=8,4]"), ("out", "(f32[<=8,4], s32[])")]
    assert facts(FIXTURES / "conv7x7.pb")["dynamic"] == []


def test_large_module_gzipped_both_ways():
    text, proto = facts(FIXTURES / "large.hlo.gz"), facts(FIXTURES / "large.pb.gz")
    assert text["instructions"] == proto["instructions"] == 5155
    assert text["ops"] == proto["ops"] and text["ops"]["dot"] == 384
    assert proto["biggest"][0]["source"] and ":" in proto["biggest"][0]["source"]


def test_terminal_output_says_what_matters():
    code, out, _ = cli("hlo", FIXTURES / "conv7x7_grad.hlo")
    assert code == 0
    assert "HLO module jit_conv_loss (text," in out and "10 instructions" in out
    assert "conv_general_dilated.5 is the input gradient of conv_general_dilated.3" in out
    assert "conv_general_dilated.4 is the filter gradient of conv_general_dilated.3" in out
    code, out, _ = cli("hlo", FIXTURES / "custom_kernel_twice.pb")
    assert "AwsNeuronCustomNativeKernel" in out and "sendrecv_kernel (2)" in out
    code, out, _ = cli("hlo", FIXTURES / "bf16_islands.pb")
    assert "bf16 and f32 mix" in out and "bf16->f32 2" in out


def test_file_names_do_not_decide_the_form(tmp_path):
    """A cache entry's model.hlo_module.pb and a dump named .txt are read by content."""
    shutil.copy(FIXTURES / "conv7x7.hlo", tmp_path / "model.hlo_module.pb")
    shutil.copy(FIXTURES / "conv7x7.pb", tmp_path / "dump.txt")
    assert facts(tmp_path / "model.hlo_module.pb")["form"] == "text"
    assert facts(tmp_path / "dump.txt")["form"] == "proto"


def _bad_inputs(tmp_path):
    proto = (FIXTURES / "conv7x7_grad.pb").read_bytes()
    files = {
        "missing.pb": None,
        "empty.pb": b"",
        "notes.txt": b"just some notes\nnothing here\n",
        "truncated.pb": proto[: len(proto) // 2],
        "truncated.hlo": (FIXTURES / "conv7x7_grad.hlo").read_bytes()[:900],
        "binary.pb": bytes(range(256)) * 4,
        "cut.pb.gz": gzip.compress(proto)[:200],
        "garbled.gz": b"\x1f\x8b" + b"\x00" * 30,
        "latin1.hlo": b"HloModule caf\xe9\n",
    }
    for name, data in files.items():
        if data is not None:
            (tmp_path / name).write_bytes(data)
    return files


@pytest.mark.parametrize("name, fragment", [
    ("missing.pb", "cannot read"), ("empty.pb", "empty file"), ("notes.txt", "does not start with `HloModule`"),
    ("truncated.pb", "not an HLO module proto"), ("truncated.hlo", "HLO text"), ("binary.pb", "not an HLO module proto"),
    ("cut.pb.gz", "truncated gzip"), ("garbled.gz", "gzip"), ("latin1.hlo", "not UTF-8"), (".", "is a folder"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, name, fragment):
    _bad_inputs(tmp_path)
    code, out, err = cli("hlo", tmp_path / name)
    assert_clean_error(code, err, fragment)
    assert fragment in err and out == ""


def test_bad_input_from_a_real_shell(tmp_path):
    _bad_inputs(tmp_path)
    result = run_cli_text("hlo", tmp_path / "truncated.pb", "--format", "json")
    assert_clean_error(result.returncode, result.stderr, "not an HLO module proto")
    result = run_cli_text("hlo", FIXTURES / "conv7x7.pb", "--format", "yaml")
    assert result.returncode == 2 and "Traceback" not in result.stderr


# ---------------------------------------------------------------- hlo diff


def diff(a, b) -> dict:
    code, out, err = cli("hlo", "diff", a, b, "--format", "json")
    assert code == 0, err
    return {change["key"]: (change["a"], change["b"]) for change in json.loads(out)["changes"]}


def test_diff_says_what_the_gradient_added():
    changes = diff(FIXTURES / "conv7x7.pb", FIXTURES / "conv7x7_grad.hlo")
    assert changes["ops.convolution"] == (1, 3) and changes["ops.reverse"] == (None, 1)
    assert changes["convolutions.window=7x7 stride=1x1 pad=3_4x3_4 dilation=2x2/1x1 groups=1 role=input"] == (None, 1)
    assert changes["convolutions.window=16x16 stride=1x1 pad=3_2x3_2 dilation=1x1/2x2 groups=1 role=filter"] == (None, 1)
    assert "convolutions.window=7x7 stride=2x2 pad=3_3x3_3 dilation=1x1/1x1 groups=1 role=forward" not in changes  # in both
    assert changes["memory.output_bytes"] == (2 * 8 * 16 * 16 * 4, (2 * 3 * 32 * 32 + 8 * 3 * 7 * 7) * 4)


def test_diff_of_one_module_as_text_and_proto_is_empty():
    assert diff(FIXTURES / "large.pb.gz", FIXTURES / "large.hlo.gz") == {}
    code, out, _ = cli("hlo", "diff", FIXTURES / "allreduce.hlo", FIXTURES / "allreduce.pb")
    assert code == 0 and "no differences" in out


def test_diff_sees_kernels_and_replica_groups(tmp_path):
    text = (FIXTURES / "custom_kernel_twice.hlo").read_text()
    once = tmp_path / "once.hlo"
    once.write_text(text.replace("sendrecv_kernel", "other_kernel", 1))  # the first launch becomes another kernel
    changes = diff(FIXTURES / "custom_kernel_twice.hlo", once)
    assert changes["custom_calls.AwsNeuronCustomNativeKernel.kernels.sendrecv_kernel"] == (2, 1)
    assert changes["custom_calls.AwsNeuronCustomNativeKernel.kernels.other_kernel"] == (None, 1)
    regrouped = tmp_path / "regrouped.hlo"
    regrouped.write_text((FIXTURES / "iota_groups.hlo").read_text().replace("[2,2]<=[2,2]T(1,0)", "[2,2]<=[4]"))
    changes = diff(FIXTURES / "iota_groups.pb", regrouped)
    assert changes["collectives.all-reduce {{0,1},{2,3}}"] == (1, 2)
    assert changes["collectives.all-reduce {{0,2},{1,3}}"] == (1, None)


def test_diff_with_a_bad_module_is_one_line(tmp_path):
    (tmp_path / "bad.hlo").write_text("HloModule m\n\nENTRY main {\n")
    code, out, err = cli("hlo", "diff", FIXTURES / "conv7x7.pb", tmp_path / "bad.hlo")
    assert_clean_error(code, err, "bad.hlo: HLO text that ends too early")
    assert out == ""


def test_ops_asked_for_by_name_are_listed_with_their_source_lines():
    """`--op` picks ops by instruction name, opcode or a word of the framework op name, whatever their size."""
    code, out, err = cli("hlo", FIXTURES / "conv7x7.hlo", "--op", "conv_general_dilated", "--format", "json")
    (picked,) = json.loads(out)["named"]
    assert code == 0 and picked["opcode"] == "convolution" and picked["source"].split(":")[0].endswith("gen_hlo_fixtures.py")
    assert [op["opcode"] for op in json.loads(cli("hlo", FIXTURES / "conv7x7.hlo", "--op", "convolution",
                                                  "--format", "json").stdout)["named"]] == ["convolution"]
    code, out, err = cli("hlo", FIXTURES / "conv7x7.hlo", "--op", "conv_general")  # a part of a word picks nothing
    assert code == 0 and "no instruction, opcode or framework op name" in err and "Ops asked for" not in out
