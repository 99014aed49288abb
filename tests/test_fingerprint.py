"""Fingerprints: the same failure from two machines and days gets one fingerprint, different failures get
different ones; error lines no signature knows are grouped by Drain template."""

from __future__ import annotations


import pytest

from conftest import REPO, SAMPLE_LOGS, another_machine_and_day, run_cli_text
from nforensics.pipeline import analyze_path, analyze_text
from nforensics.diagnose.fingerprint import FINGERPRINT_VERSION, compiler_pass, fingerprint, mask


def fingerprints(text: str) -> dict[str, str]:
    return {f.signature: f.fingerprint for f in analyze_text(text).findings}


# ---------------------------------------------------------------- masking (always on, synthetic)


@pytest.mark.parametrize(
    "message, masked",
    [
        ("Compilation failed for /tmp/root/neuroncc_compile_workdir/476cf8e5-17ac-4b1e-9e9c-05e34e9ddda2/"
         "model.MODULE_9450abe5705d16fa70fb+2c2d707e.hlo_module.pb after 0 retries.",
         "Compilation failed for <path>/model.MODULE_<id>.hlo_module.pb after <n> retries."),
        ("Expected core barriers to have name LocalSendRecv-0_476_sr_cb_begin, but core barrier 6",
         "Expected core barriers to have name LocalSendRecv-<n>_sr_cb_begin, but core barrier <n>"),
        ("Instruction LoadActFuncSet I-50114-4-PWP generates invalid ISA", "Instruction LoadActFuncSet I-<n> generates invalid ISA"),
        ("Memory Location: {compare.85-t604_i0}@SB<0,0>(8x2)#Internal DebugInfo: <compare.85||uint16>",
         "Memory Location: <memloc>#Internal DebugInfo: <…>"),
        ("2024-Oct-15 18:01:17.728750  3882:3882  ERROR  TDRV:dmem_alloc_internal  Failed to alloc DEVICE memory: 180355072",
         "<ts> <n>:<n> ERROR TDRV:dmem_alloc_internal Failed to alloc DEVICE memory: <n>"),
        ("TDRV:exec_process_custom_notification nd0:nc2:h_model.id1006: at 0x00007FE726068C3C",
         "TDRV:exec_process_custom_notification nd<n>:nc<n>:h_model.id<n>: at <hex>"),
        ("Artifacts stored in: /home/u/neuronxcc-x1b2c3d4 - Please open a support ticket at https://x.y/issues/new",
         "Artifacts stored in: <path>/neuronxcc-<id>"),
    ],
)
def test_variable_parts_are_masked(message, masked):
    assert mask(message) == masked


@pytest.mark.parametrize(
    "kept", ["nrt_load status=1", "Failed to initialize devices, error:5", "neuronx-cc failed with -9",
             "Operation sort is not supported on trn2", "dtype float32", "[TEN404]", "neuronxcc/starfish/penguin/ir"],
)
def test_parts_that_tell_failures_apart_are_kept(kept):
    assert kept in mask(f"x {kept} y")


def test_fingerprint_is_versioned_and_depends_on_key_pass_and_masked_message():
    base = fingerprint("NCC_ITEN404", "Internal tensorizer error: BirCodeGenLoop: x 1", "BirCodeGenLoop")
    assert len(base) == 16 and FINGERPRINT_VERSION >= 2
    assert base == fingerprint("NCC_ITEN404", "Internal tensorizer error: BirCodeGenLoop: x 7", "BirCodeGenLoop")
    assert base != fingerprint("NCC_ITEN404", "Internal tensorizer error: BirCodeGenLoop: x 1", "LegalizePartitionReduce")
    assert base != fingerprint("NCC_IXLV002", "Internal tensorizer error: BirCodeGenLoop: x 1", "BirCodeGenLoop")
    assert compiler_pass("Internal tensorizer error: LegalizePartitionReduce") == "LegalizePartitionReduce"
    assert compiler_pass("anything", {"pass_name": "NeuronInstComb"}) == "NeuronInstComb"


# ---------------------------------------------------------------- pairs through the whole pipeline


SAME_FAILURE = """\
2024-08-15T14:51:04Z INFO 3835 [root]: Pipeline: Frontend WalrusDriver BIRLinker Kelper SaveTemps
2024-08-15T14:51:19Z ERROR 3835 [neuronx-cc]: [INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers to have name
LocalSendRecv-0_476_sr_cb_begin, but core barrier 6 in subgraph 0
on core 1 has name LocalSendRecv-0_176_sr_cb_begin
2024-08-15T14:51:20Z USER 3835 [neuronxcc.driver.CommandDriver]: Diagnostic logs stored in /tmp/root/neuroncc_compile_workdir/476cf8e5-17ac-4b1e-9e9c-05e34e9ddda2/log-neuron-cc.txt
"""


def test_same_failure_from_another_machine_and_day_has_the_same_fingerprint():
    first, second = fingerprints(SAME_FAILURE), fingerprints(another_machine_and_day(SAME_FAILURE))
    assert first and first == second
    assert another_machine_and_day(SAME_FAILURE) != SAME_FAILURE


def test_same_code_with_another_message_is_another_failure():
    other = SAME_FAILURE.replace("core barrier 6 in subgraph 0", "core barrier 6 in function 0")
    assert fingerprints(SAME_FAILURE)["ncc-ixlv002-core-barrier-name-mismatch"] != \
        fingerprints(other).get("ncc-ixlv002-core-barrier-name-mismatch")
    unknown = "[INTERNAL_ERROR] [NCC_IZZZ901] Internal tensorizer error: {}: invalid axis\n"
    assert fingerprints(unknown.format("FooPass")) != fingerprints(unknown.format("BarPass"))


def test_sample_logs_survive_the_move_to_another_machine():
    """Every signature's own sample log, pasted from another machine and day, groups with the original."""
    changed = 0
    for sample in sorted(SAMPLE_LOGS.glob("*.log")):
        text = sample.read_text(encoding="utf-8", errors="replace")
        moved = another_machine_and_day(text)
        changed += moved != text
        assert fingerprints(moved) == fingerprints(text), sample.name
    assert changed > 20, "the transformation must actually change the sample logs"


# ---------------------------------------------------------------- real pairs from ../shared


def _fingerprints_of(path) -> dict[str, str]:
    return {f.signature: f.fingerprint for f in analyze_path(str(path)).findings}


def test_corpus_logs_survive_the_move_to_another_machine(shared):
    for path in sorted((shared / "corpus" / "dev").glob("*.log")):
        text = path.read_text(encoding="utf-8", errors="replace")
        assert fingerprints(another_machine_and_day(text)) == _fingerprints_of(path), path.name


def test_two_public_reports_of_one_failure_share_a_fingerprint(shared):
    # aws-neuron-sdk#1298 as pasted in the corpus and as the seed report (prose, listings, reproducer around it).
    corpus = _fingerprints_of(shared / "corpus" / "dev" / "055_ncc_ixlv002_core_barrier_name_mismatch_lnc2_sendrecv.log")
    seed = _fingerprints_of(shared / "seeds" / "000_d3dbbd396ced5386.txt")
    key = "ncc-ixlv002-core-barrier-name-mismatch"
    assert corpus[key] == seed[key]


@pytest.mark.parametrize(
    "a, b",
    [
        ("017_bir_verification_failed_expect_ap_datatype.log", "069_bir_verification_failed_partition_48_cloudwatch.log"),
        ("056_ncc_iten404_bircodegenloop_partition_alignment_conv7x7_bwd.log", "103_ncc_iten404_legalizepartitionreduce_cte_bucket_256.log"),
        ("049_xcg815_estimated_peak_hbm_ncc_wrapper_llama3_70b_inf2.log", "093_ncc_eoom001_peak_hbm_32gb_exceeds_24gb_trn2.log"),
        ("009_nrt_timestamp_program_stop_timeout_init_failed.log", "021_tdrv_could_not_open_nd0_init_failed.log"),
        ("006_kernel_mc_alloc_device_mempool.log", "057_tdrv_failed_alloc_device_memory_trace_llava.log"),
    ],
)
def test_different_failures_from_the_corpus_have_different_fingerprints(shared, a, b):
    corpus = shared / "corpus" / "dev"
    first, second = _fingerprints_of(corpus / a), _fingerprints_of(corpus / b)
    assert first and second
    assert not set(first.values()) & set(second.values())


def test_top_findings_of_different_corpus_families_never_collide(shared):
    import csv

    # A shared symptom may repeat (two causes both end in "Failed to initialize devices, error:1"), but the
    # top finding of each file is its cause: two families must never be grouped by it.
    owner: dict[str, str] = {}
    for row in csv.DictReader((shared / "corpus" / "dev" / "labels.csv").open()):
        findings = analyze_path(str(shared / "corpus" / "dev" / row["file"])).findings
        if findings:
            assert owner.setdefault(findings[0].fingerprint, row["family"]) == row["family"], row["file"]
    assert len(owner) > 30


# ---------------------------------------------------------------- Drain grouping of unknown error lines

UNKNOWN = """\
2025-Jan-02 10:00:00.000001  111:111  ERROR  NRT:nrt_widget   Widget 3 lost connection to host alpha-1
2025-Jan-02 10:00:00.000002  112:112  ERROR  NRT:nrt_widget   Widget 7 lost connection to host beta-2
2025-Jan-02 10:00:00.000003  113:113  ERROR  NRT:nrt_flux     Flux capacitor misaligned by 3 degrees
2025-Jan-02 10:00:00.000004  111:111  ERROR  NRT:nrt_widget   Widget 9 lost connection to host gamma-3
"""


def test_unknown_error_lines_are_grouped_by_template():
    findings = analyze_text(UNKNOWN).findings
    assert [(f.generic, f.component, f.fields["occurrences"]) for f in findings] == [(True, "runtime", 3), (True, "runtime", 1)]
    widget, flux = findings
    assert widget.title == "Unrecognised runtime error: Widget <n> lost connection to host <*>"
    assert [e.line for e in widget.evidence] == [1, 2, 4]
    assert flux.fields["template"] == "Flux capacitor misaligned by <n> degrees"
    assert fingerprints(another_machine_and_day(UNKNOWN)) == fingerprints(UNKNOWN)


def test_unknown_template_surfaces_in_the_cli_with_exit_1():
    result = run_cli_text("explain", "-", "--format", "json", input=UNKNOWN.encode())
    assert result.returncode == 1
    assert "Widget <n> lost connection to host <*>" in result.stdout


def test_a_recognised_failure_does_not_import_drain3():
    code = ("import sys; from nforensics.pipeline import analyze_text; "
            f"a = analyze_text({SAME_FAILURE!r}); assert a.findings; print('drain3' in sys.modules)")
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.strip() == "False", out.stderr

