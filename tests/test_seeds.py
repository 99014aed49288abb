"""The five seed failures: the field contract of issue 2, checked through the CLI's JSON as tools see it, and
the knowledge corrections of issue 10 (item 8): what each seed's public thread and the docs support."""

from __future__ import annotations

import json

import pytest

from conftest import SAMPLE_LOGS, run_cli
from nforensics.pipeline import analyze_path, analyze_text
from nforensics.knowledge import load_kb

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
    result = run_cli("explain", "--verbose", "sample_logs/seed003_ncc_inla001_xla_use_bf16.log")
    assert result.returncode == 1
    out = result.stdout.decode()
    for section in ("What failed", "Where", "Extracted fields", "What it means", "Why it may happen",
                    "What to try", "References", "NCC_INLA001", "line 12", ".to(torch.bfloat16).to(device)"):
        assert section in out, section


# ------------------------------------------------------------------ knowledge corrections (issue 10, item 8)

SEED000_TEXT = (SAMPLE_LOGS / "seed000_ncc_ixlv002_sendrecv_twice.log").read_text()


def _finding(analysis, code):
    return next(f for f in analysis.findings if f.code == code)


def test_ixlv002_blames_sendrecv_only_when_the_barrier_names_are_send_recv():
    """The seed's LocalSendRecv barriers keep the sendrecv hypothesis on top; the same log with all-reduce
    barrier names (no send/recv anywhere in the message) must rank the general hypothesis first."""
    seed = _finding(analyze_text(SEED000_TEXT, source="seed000"), "NCC_IXLV002")
    assert seed.hypotheses[0].id == "sendrecv-kernel-called-twice"
    assert {e.line for e in seed.hypotheses[0].evidence} == {16, 17}  # the two barrier-name lines

    all_reduce = SEED000_TEXT.replace("LocalSendRecv-0_476_sr_cb_begin", "AllReduce-0_476_cc_cb_begin") \
                             .replace("LocalSendRecv-0_176_sr_cb_begin", "AllReduce-0_176_cc_cb_begin")
    assert "SendRecv" not in all_reduce and "sendrecv" not in all_reduce.lower()
    finding = _finding(analyze_text(all_reduce, source="seed000 all-reduce"), "NCC_IXLV002")
    assert finding.fields["expected_barrier"] == "AllReduce-0_476_cc_cb_begin"
    ranked = [h.id for h in finding.hypotheses]
    assert ranked[0] == "barrier-op-instantiated-twice", ranked
    sendrecv = next(h for h in finding.hypotheses if h.id == "sendrecv-kernel-called-twice")
    assert not sendrecv.evidence and sendrecv.check  # unsupported: it says what to check instead


def test_ixlv002_core_barrier_variant_from_the_thread_is_not_blamed_on_sendrecv():
    """aws-neuron-sdk#1298 was reproduced with nisa.core_barrier and no sendrecv (CoreBarrier-0_<id> names)."""
    text = ("[INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers to have name CoreBarrier-0_480, "
            "but core barrier 5 in subgraph 0 on core 1 has name CoreBarrier-0_180\n")
    finding = _finding(analyze_text(text), "NCC_IXLV002")
    assert finding.hypotheses[0].id == "barrier-op-instantiated-twice"


def test_ixlv002_no_longer_offers_lnc1_alone_and_evrf066_explains_why():
    """--lnc=1 with a kernel launched as kernel[2] is refused with NCC_EVRF066 (docs: a kernel's LNC degree must
    match the compiler's), so the IXLV002 workarounds must not offer it on its own."""
    kb = {s.id: s for s in load_kb().signatures}
    ixlv002 = kb["ncc-ixlv002-core-barrier-name-mismatch"]
    assert not any("--lnc=1" in (w.code or "") for w in ixlv002.workarounds)
    lnc1 = next(w for w in ixlv002.workarounds if "LNC=1" in w.title)
    assert "NCC_EVRF066" in lnc1.description and "[2]" in lnc1.description

    finding = _finding(analyze_path(str(SAMPLE_LOGS / kb["ncc-evrf066-nki-kernel-lnc-mismatch"].sample_log)),
                       "NCC_EVRF066")
    assert finding.signature == "ncc-evrf066-nki-kernel-lnc-mismatch" and not finding.generic
    assert finding.fields == {"kernel": "lnc2_reduce", "kernel_lnc": 2, "compiler_lnc": 1}
    assert finding.hypotheses[0].id == "lnc-overridden-in-compiler-flags"
    assert any("--lnc=1" in e.text for e in finding.hypotheses[0].evidence)


def test_evrf066_kernel_without_a_degree_under_the_trn2_default():
    text = ("2026-03-03T09:12:43Z ERROR 51402 [neuronx-cc]: [ERROR] [NCC_EVRF066] NKI kernel 'rmsnorm_kernel' "
            "is configured with LNC=1, but neuronx-cc is using LNC=2.\n")
    finding = _finding(analyze_text(text), "NCC_EVRF066")
    assert finding.fields == {"kernel": "rmsnorm_kernel", "kernel_lnc": 1, "compiler_lnc": 2}
    assert finding.hypotheses[0].id == "kernel-lnc-not-set"


def test_oob_offers_the_stale_cache_hypothesis_the_thread_had_to_rule_out():
    finding = _finding(analyze_path(str(SAMPLE_LOGS / "seed001_nrt_exec_oob_vector_dge_nxdi.log")), "NRT_EXEC_OOB")
    top = finding.hypotheses[0]
    assert top.id == "nki-kernel-complexity-in-nxdi" and "unconfirmed" in top.title  # a lead, not a fact
    stale = next(h for h in finding.hypotheses if h.id == "stale-compiled-artifact")
    assert stale.check and "cache" in stale.check and "--cache_dir" in stale.check

    cached = ("2026-04-14 09:10:02.000118:  31877  INFO ||NEURON_CC_WRAPPER||: Using a cached neff at "
              "/var/tmp/neuron-compile-cache/neuronxcc-2.24.5133.0+58f8de22/MODULE_4f2a9c1be0d37e55+d4f1e8a0/model.neff. "
              "Exiting with a successfully compiled graph.\n")
    text = cached + (SAMPLE_LOGS / "seed001_nrt_exec_oob_vector_dge_nxdi.log").read_text()
    with_cache = _finding(analyze_text(text), "NRT_EXEC_OOB")
    stale = next(h for h in with_cache.hypotheses if h.id == "stale-compiled-artifact")
    assert stale.evidence and stale.evidence[0].line == 1
    assert stale.score > next(h.score for h in with_cache.hypotheses if h.id == "index-out-of-range")


def test_inla001_workarounds_are_the_seed_fix_and_nothing_untested():
    """The report verified one fix (cast the model, drop XLA_USE_BF16); --auto-cast=matmult was never tried."""
    inla001 = {s.id: s for s in load_kb().signatures}["ncc-inla001-activation-tables-exceeded"]
    first = inla001.workarounds[0]
    assert "XLA_USE_BF16" in first.title and ".to(torch.bfloat16)" in (first.code or "")
    assert not any("matmult" in f"{w.title} {w.description} {w.code}" for w in inla001.workarounds)


SEED_ISSUES = {
    "ncc-ixlv002-core-barrier-name-mismatch": 1298,
    "nrt-exec-oob-dge-scatter-gather": 1306,
    "nrt-load-unsupported-instruction": 1311,
    "ncc-inla001-activation-tables-exceeded": 1314,
    "ncc-iten404-bircodegenloop-partition-alignment": 1295,
}


@pytest.mark.parametrize("signature_id", SEED_ISSUES)
def test_seed_signature_links_its_own_public_issue(signature_id):
    signature = {s.id: s for s in load_kb().signatures}[signature_id]
    urls = [r.url for r in signature.references]
    assert urls[0] == f"https://github.com/aws-neuron/aws-neuron-sdk/issues/{SEED_ISSUES[signature_id]}"
    assert not any(u.rstrip("/").endswith("/issues") for u in urls)  # never just the issues list page
