"""The five seed failures: the field contract of issue 2, checked through the CLI's JSON as tools see it."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli

SEEDS = {
    "seed000_ncc_ixlv002_sendrecv_twice.log": ("NCC_IXLV002", {
        "expected_barrier": "LocalSendRecv-0_476_sr_cb_begin", "actual_barrier": "LocalSendRecv-0_176_sr_cb_begin",
        "barrier_index": 6, "subgraph": 0, "core": 1}, "sendrecv-kernel-called-twice"),
    "seed001_nrt_exec_oob_vector_dge_nxdi.log": ("NRT_EXEC_OOB", {"dge_kind": "vector", "status": 1006},
                                                 "nki-kernel-complexity-in-nxdi"),
    "seed002_nrt_unsupported_instruction_trn1.log": ("NRT_LOAD_UNSUPPORTED_INSTRUCTION", {"neuroncore_version": "v2"},
                                                     "fused-nki-kernels-without-mark-step"),
    "seed003_ncc_inla001_xla_use_bf16.log": ("NCC_INLA001", {
        "instruction": "LoadActFuncSet", "max_tables": 8, "tensor_dtype": "bfloat16", "tensor_shape": "128 x 16",
        "source_file": ".../neuronxcc/walrus/lower_act/src/lower_act.cpp", "source_line": 296},
        "global-bf16-with-autocast-none"),
    "seed004_ncc_iten404_conv7x7_backward_trn1.log": ("NCC_ITEN404", {
        "pass_name": "BirCodeGenLoop", "src_start_partition": "0", "dst_start_partition": "i_3",
        "partitions_per_bank": 32, "tensor_dtype": "float32", "tensor_shape": "1 x 12288",
        "kernel_name": "conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh..._a0_img_local_prefetch"},
        "conv7x7-backward-on-trn1"),
}


@pytest.mark.parametrize("name", SEEDS)
def test_seed_json_contract(name):
    code, fields, top = SEEDS[name]
    result = run_cli("explain", f"sample_logs/{name}", "--format", "json")
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["schema_version"]
    first = document["findings"][0]
    assert first["code"] == code and first["generic"] is False
    assert {k: first["fields"][k] for k in fields} == fields
    assert first["hypotheses"][0]["id"] == top
    assert first["workarounds"] and first["workarounds"][0]["title"]
    for key in ("signature", "title", "component", "fingerprint", "evidence", "references"):
        assert first[key]
    assert all(isinstance(e["line"], int) and e["text"] for e in first["evidence"])


def test_inla001_ranking_follows_the_evidence(tmp_path):
    """With XLA_USE_BF16=1 and --auto-cast=none the bf16 hypothesis leads and cites both lines; without
    them it drops and says what to check."""
    with_settings = run_cli("explain", "sample_logs/seed003_ncc_inla001_xla_use_bf16.log", "--format", "json")
    top = json.loads(with_settings.stdout)["findings"][0]["hypotheses"][0]
    assert top["id"] == "global-bf16-with-autocast-none"
    cited = {e["line"] for e in top["evidence"]}
    assert {1, 2} <= cited  # `export XLA_USE_BF16=1` and `export NEURON_CC_FLAGS="--auto-cast=none"`

    bare = tmp_path / "inla001.log"
    bare.write_text("[INTERNAL_ERROR] [NCC_INLA001] Unhandled exception with message:\n"
                    "Instruction LoadActFuncSet I-14774-0-PWP: the number of activation tables must be <= 8\n")
    hypotheses = json.loads(run_cli("explain", str(bare), "--format", "json").stdout)["findings"][0]["hypotheses"]
    bf16 = next(h for h in hypotheses if h["id"] == "global-bf16-with-autocast-none")
    assert hypotheses[0]["id"] != "global-bf16-with-autocast-none"
    assert bf16["check"] and "XLA_USE_BF16" in bf16["check"] and not bf16["evidence"]


def test_terminal_explanation_shows_every_section():
    result = run_cli("explain", "sample_logs/seed003_ncc_inla001_xla_use_bf16.log")
    assert result.returncode == 1
    out = result.stdout.decode()
    for section in ("What failed", "Where", "Extracted fields", "What it means", "Why it may happen",
                    "What to try", "References", "NCC_INLA001", "line 12", ".to(torch.bfloat16).to(device)"):
        assert section in out, section
