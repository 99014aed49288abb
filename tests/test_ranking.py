"""Which finding comes first: a cause printed earlier beats the symptoms its callers print after it."""

from __future__ import annotations

from nforensics.pipeline import analyze_text

CASCADE = """\
2021-Dec-03 08:02:36.0093  5110:5110  ERROR  TDRV:dma_ring_allocate                       No more pages for ring type: 1
2021-Dec-03 08:02:36.0093  5110:5110  ERROR  TDRV:kbl_model_add                           create_data_refill_rings() error
2021-Dec-03 08:02:36.0120  5110:5110  ERROR  NMGR:dlr_kelf_stage                          Failed to load subgraph
2021-Dec-03 08:02:36.0120  5110:5110  ERROR  NMGR:stage_kelf_models                       Failed to stage graph: kelf-a.json to NeuronCore
2021-Dec-03 08:02:36.0125  5110:5110  ERROR  NMGR:kmgr_load_nn_post_metrics               Failed to load NN: /tmp/tmpt83tcdeo, err: 4
"""


def test_the_first_error_of_a_runtime_cascade_is_the_top_finding():
    findings = analyze_text(CASCADE).findings
    assert findings[0].family == "runtime-dma-limits"
    assert findings[0].evidence[0].line == 1
    assert len(findings) > 1  # the callers' failures are still listed, after it


def test_errors_of_another_process_are_not_its_cause():
    lines = CASCADE.splitlines()
    # The ring error came from another process, minutes apart from the load that failed.
    other = lines[0].replace("5110:5110", "7777:7777")
    text = "\n".join([other, "unrelated progress line", "another one", *lines[2:]]) + "\n"
    assert analyze_text(text).findings[0].family != "runtime-dma-limits"


CACHE_FAILURE = """\
Traceback (most recent call last):
  File "/opt/venv/lib/python3.10/site-packages/libneuronxla/neuron_cc_wrapper.py", line 131, in compile_cache_entry
    entry.upload_neff(neff_path)
  File "/opt/venv/lib/python3.10/site-packages/libneuronxla/neuron_cc_cache.py", line 201, in upload_neff
    shutil.copyfile(src, self.neff_path)
{error}
"""


def test_what_to_try_follows_the_ranked_hypotheses():
    def first_workaround(error: str) -> tuple[str, str]:
        finding = analyze_text(CACHE_FAILURE.format(error=error)).findings[0]
        assert finding.family == "compile-cache-access"
        return finding.hypotheses[0].id, finding.workarounds[0].title

    denied = first_workaround("PermissionError: [Errno 13] Permission denied: '/var/tmp/neuron-compile-cache/x/model.neff'")
    assert denied == ("cache-not-writable", "Use a cache folder this job owns")
    stale = first_workaround("FileNotFoundError: [Errno 2] No such file or directory: "
                             "'/var/tmp/neuron-compile-cache/MODULE_1/model.neff.lock'")
    assert stale == ("stale-lock-or-partial-entry", "Remove the broken entry (or the whole cache) and rerun")


ICE_BANNER = """\
01/08/2020 12:51:20 PM ERROR [neuron-cc]: ***************************************************************
01/08/2020 12:51:20 PM ERROR [neuron-cc]:  An Internal Compiler Error has occurred
01/08/2020 12:51:20 PM ERROR [neuron-cc]: ***************************************************************
01/08/2020 12:51:20 PM ERROR [neuron-cc]: Error message:  {message}
01/08/2020 12:51:20 PM ERROR [neuron-cc]: Error location: pipeline.compile.0
"""


def test_a_worker_that_died_under_the_compiler_is_its_cause_even_without_the_error_class_line():
    died = analyze_text(ICE_BANNER.format(message="A process in the process pool was terminated abruptly while the "
                                                   "future was running or pending."))
    # the worker's death leads; the banner that reported it says the same under its own hypothesis
    assert [(f.family, f.hypotheses[0].id) for f in died.findings[:2]] == [
        ("compiler-abnormal-termination", "worker-lost-memory"), ("compiler-internal-crash", "worker-killed-host-memory")]
    other = analyze_text(ICE_BANNER.format(message="Assertion failed: shape mismatch in pass TensorInit"))
    assert other.findings[0].hypotheses[0].id != "worker-killed-host-memory"
    assert other.findings[0].family == "compiler-internal-crash"


def test_a_diagnostic_printed_again_by_each_rank_is_one_finding():
    line = "[ERROR] [NCC_EZZZ901] The frobnicator could not place tensor t1 in partition 3 of 128.\n"
    once = analyze_text(line).findings
    again = analyze_text(line + "[rank1]: RuntimeError: RunNeuronCCImpl: " + line + line).findings
    assert [f.code for f in once] == [f.code for f in again] == ["NCC_EZZZ901"]
    # The same code saying something else is another failure of that code, shown on its own.
    other = analyze_text(line + line.replace("partition 3 of 128", "SBUF: out of space")).findings
    assert [f.code for f in other] == ["NCC_EZZZ901", "NCC_EZZZ901"]


def test_an_exit_status_printed_on_the_line_decides_which_exit_it_was():
    """`neuronx-cc failed with 1` reads almost like the exit-70 message; the status it prints says it is not."""
    seventy = "RuntimeError: neuronx-cc compilation failed with 70. Check compiler logs.\n"
    assert analyze_text(seventy).findings[0].signature == "neuronx-cc-exit-70"
    assert analyze_text("RuntimeError: neuronx-cc failed with 1\n").findings[0].signature != "neuronx-cc-exit-70"


# A worker's new wording of a collectives failure (no signature knows it), then the status the framework raised.
COLLECTIVES_LOAD = """\
2025-Feb-02 10:00:01.0001 4471:4689 ERROR   NRT:nrt_load_collectives   could not reach the root rank at 10.1.2.3:62182
RuntimeError: nrt_load_collectives status=1
"""


def test_a_bare_status_is_one_line_under_the_family_that_says_why_the_call_failed():
    findings = analyze_text(COLLECTIVES_LOAD).findings
    assert (findings[0].tier, findings[0].family) == ("family", "collectives-bootstrap")
    assert [w.note for w in findings[0].wrapped_by] == ["nrt-status-failure"]  # NRT_FAILURE's general meaning
    assert "nrt-status-failure" not in [f.signature for f in findings]


def test_a_bare_status_no_family_narrows_keeps_its_general_meaning():
    findings = analyze_text("RuntimeError: nrt_load status=1\n").findings
    assert (findings[0].tier, findings[0].signature) == ("exact", "nrt-status-failure")
    # A family that does not narrow what the status means (a Python error elsewhere) takes nothing from it.
    mixed = analyze_text("ModuleNotFoundError: No module named 'torch_neuronx'\nRuntimeError: nrt_load status=1\n").findings
    assert "nrt-status-failure" in [f.signature for f in mixed]


NO_DEVICE = """\
2026-Apr-18 20:18:50.199855 19779:19779 ERROR  TDRV:tdrv_get_dev_info                       unable to retrieve device architecture
2026-Apr-18 20:18:50.200091 19779:19779 ERROR   NRT:nrt_init                                Cannot find Neuron devices.
2026-Apr-18 20:18:50.201282 19779:19779 ERROR   NRT:nrt_infodump                            Failure: NRT_INVALID in nrt_init()
"""


def test_a_catch_all_status_means_what_the_call_that_returned_it_does():
    # NRT_INVALID is seen from nrt_load most often; returned by nrt_init it is a runtime that did not come up.
    alone = analyze_text(NO_DEVICE.splitlines()[-1] + "\n").findings
    assert (alone[0].signature, alone[0].family) == ("nrt-status-invalid", "runtime-init-failure")
    assert analyze_text("RuntimeError: nrt_load status=2\n").findings[0].family == "runtime-neff-load"
    # ... and under the device that could not be found, it is one line of that finding.
    findings = analyze_text(NO_DEVICE).findings
    assert findings[0].family == "device-not-visible"
    assert "nrt-status-invalid" in [w.note for w in findings[0].wrapped_by]


def test_a_narrower_failure_printed_before_the_top_one_is_its_cause():
    traceback = ('Traceback (most recent call last):\n  File "/app/run.py", line 9, in <module>\n'
                 '    model.to(device)\nRuntimeError: Neuron runtime cannot be initialized; cannot determine the number '
                 'of available NeuronCores\n')
    before = "ls: cannot access '/dev/neuron*': No such file or directory\n"
    assert analyze_text(before + traceback).findings[0].family == "device-not-visible"
    # Printed after the failure (someone looked afterwards), or as a warning, it is no cause of it.
    assert analyze_text(traceback + before).findings[0].family == "runtime-init-failure"
    warned = "2026-Apr-18 20:18:50.1 1:1 WARN   TDRV:tdrv_get_dev_info   unable to retrieve device architecture\n"
    assert analyze_text(warned + traceback).findings[0].family == "runtime-init-failure"


def test_a_status_whose_family_is_said_only_in_a_warning_is_one_finding():
    text = ("2025-Feb-02 10:00:01.000100 4471:4471 WARN   NRT:nrt_init   Neuron Runtime could not be initialized, retrying\n"
            "2025-Feb-02 10:00:02.000100 4471:4471 ERROR  NRT:nrt_infodump   Failure: NRT_FAILURE in nrt_init()\n")
    findings = analyze_text(text).findings
    assert [f.family for f in findings] == ["runtime-init-failure"]


def test_a_status_on_the_line_of_its_account_agrees_with_the_two_line_paste():
    one = "RuntimeError: nrt_execute status=1: timed out waiting for peer rank 3\n"
    two = "RuntimeError: nrt_execute status=1\ntimed out waiting for peer rank 3 (collective all-reduce)\n"
    assert analyze_text(one).findings[0].family == analyze_text(two).findings[0].family == "collectives-timeout"


def test_a_bare_python_warning_takes_no_status_under_it():
    # Python's warning category at the start of a line, its `file.py:N:` head lost in the paste.
    text = ("UserWarning: Cannot find Neuron devices on this host yet, retrying\n"
            "2026-Apr-18 20:18:55.201282 19779:19779 ERROR   NRT:nrt_infodump   Failure: NRT_INVALID in nrt_init()\n")
    findings = analyze_text(text).findings
    assert findings[0].signature == "nrt-status-invalid" and not findings[0].wrapped_by


def test_the_code_a_folded_status_printed_is_the_code_of_the_finding_it_folds_into():
    findings = analyze_text(COLLECTIVES_LOAD).findings
    assert findings[0].family == "collectives-bootstrap" and findings[0].code == "NRT_FAILURE"
