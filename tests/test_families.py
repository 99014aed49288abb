"""The family tier, rule by rule like the signatures (a pass and a fail case per family): each family's sample
log yields the family even with every specific signature removed (leave-one-family-out), its near miss does
not, and every built-in signature names a family that exists. Structural detectors are checked on
perturbed inputs, not only on the text they were written from."""

from __future__ import annotations

import json

import pytest

from conftest import SAMPLE_LOGS
from nforensics.pipeline import analyze_lines, analyze_text
from nforensics.ingest import read_lines
from nforensics.knowledge import build, builtin_kb

KB = builtin_kb()
FAMILIES = sorted(KB.families.values(), key=lambda f: f.id)


def _without_family(family_id: str):
    """The catalogue with every specific signature of this family removed."""
    return build([s for s in KB.signatures if s.family != family_id], families=KB.families)


def _analyse(path, kb):
    name, lines = read_lines(str(path))
    return analyze_lines(name, lines, kb=kb)


def test_every_signature_names_a_known_family():
    missing = [s.id for s in KB.signatures if s.family not in KB.families]
    assert not missing, f"signatures without a known family: {missing}"


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.id)
def test_family_sample_yields_the_family_without_its_signatures(family):
    analysis = _analyse(SAMPLE_LOGS / family.sample_log, _without_family(family.id))
    # The family finding, not necessarily the first: a cause printed earlier (an OOM kill a cache replays)
    # may rightly rank above it.
    top = next((f for f in analysis.findings if f.family == family.id), None)
    assert top is not None, f"{family.id}: sample recognised as {[(f.signature, f.tier) for f in analysis.findings]}"
    assert top.tier == "family"
    assert not top.generic and top.hypotheses and top.workarounds
    assert all(e.line for e in top.evidence), "a family finding cites the input lines behind it"
    if family.test.top_hypothesis and not top.hypotheses_undetermined:
        assert top.hypotheses[0].id == family.test.top_hypothesis
    for name, expected in family.test.fields.items():
        assert top.fields.get(name) == expected


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.id)
def test_family_near_miss_does_not_yield_the_family(family):
    analysis = _analyse(SAMPLE_LOGS / family.near_miss, KB)
    assert family.id not in [f.family for f in analysis.findings if f.tier == "family"], (
        f"{family.id}: its near miss {family.near_miss} was recognised as it")


# ------------------------------------------------------------------ structural detectors, always on

COMPILER_TAIL = """\
2025-03-01T10:00:01Z ERROR 4242 [neuronx-cc]:   File "neuronxcc/driver/CommandDriver.py", line 343, in run
2025-03-01T10:00:01Z ERROR 4242 [neuronx-cc]:   File "neuronxcc/starfish/penguin/targets/tonga/passes/TensorCopyElim.py", line 88, in transform
2025-03-01T10:00:01Z ERROR 4242 [neuronx-cc]: Version information:
2025-03-01T10:00:01Z ERROR 4242 [neuronx-cc]:   NeuronX Compiler version 2.16.372.0+4a9b2326
"""

NATIVE_ONLY = """\
 #0 0x00007f3b2c1d4a7c in __pthread_kill_implementation () from /lib/x86_64-linux-gnu/libc.so.6
 #1 0x00007f3b1a2b3c4d in neuronxcc::walrus::Allocator::assign() from /opt/venv/lib/python3.10/site-packages/neuronxcc/starfish/lib/libwalrus.so
 #2 0x00007f3b1a2b3f00 in neuronxcc::walrus::Driver::run() from /opt/venv/lib/python3.10/site-packages/neuronxcc/starfish/lib/libwalrus.so
"""


def test_compiler_frames_inside_the_driver_prefix_are_a_compiler_crash_by_stage():
    top = analyze_text(COMPILER_TAIL).findings[0]
    assert (top.tier, top.family, top.fields.get("stage")) == ("family", "compiler-tensorizer", "tensorizer")
    assert len(analyze_text(COMPILER_TAIL).findings) == 1, "one crash is one finding"
    # The near miss: a crash in a stage no narrower family covers is the compiler's internal crash.
    penguin = COMPILER_TAIL.replace("targets/tonga/passes/TensorCopyElim.py", "ir/AccessPatternAnalysis.py")
    top = analyze_text(penguin).findings[0]
    assert (top.family, top.fields.get("stage")) == ("compiler-internal-crash", "penguin")


def test_native_frames_alone_are_a_compiler_crash_in_the_backend():
    top = analyze_text(NATIVE_ONLY).findings[0]
    assert (top.family, top.fields.get("stage")) == ("compiler-codegen", "backend")


CACHE_REPLAY = """\
Traceback (most recent call last):
  File "/opt/venv/lib/python3.12/site-packages/libneuronxla/neuron_cc_wrapper.py", line 393, in neuron_xla_compile_impl
    return compile_cache_entry(output, entry, execution_mode,
  File "/opt/venv/lib/python3.12/site-packages/libneuronxla/neuron_cc_wrapper.py", line 181, in compile_cache_entry
    raise (subprocess.CalledProcessError(-1, "", stderr=error_log))
subprocess.CalledProcessError: Command '' died with <Signals.SIGHUP: 1>.
"""


def test_the_wrapper_re_raising_a_cached_failure_is_a_replay_not_a_signal():
    assert analyze_text(CACHE_REPLAY).findings[0].family == "compile-cache-replay"
    # The same wrapper raising for a compiler it did run is that compile's failure, not a replay.
    ran = CACHE_REPLAY.replace('CalledProcessError(-1, "", stderr=error_log)', "CalledProcessError(ret, cmd)").replace(
        "Command '' died with <Signals.SIGHUP: 1>", "Command 'neuronx-cc compile x.pb' returned non-zero exit status 70")
    assert analyze_text(ran).findings[0].family != "compile-cache-replay"
    # Nor is a failed compile whose files sit in a cache folder: that is where, not what was replayed.
    stored = ("RuntimeError: Failed compilation with exit status 70, workdir bucket/team-compile-cache/neuronxcc-2.14.1.0+aa/"
              "MODULE_77+bb/ (neff not written)\n")
    assert analyze_text(stored).findings[0].family != "compile-cache-replay"


def test_a_cached_failure_the_wrapper_retries_is_no_replay_what_the_retry_prints_is_the_failure():
    """The wrapper logs a cached failure at ERROR when it gives up on the graph, at INFO when it compiles it again
    (`... Retrying...`): then the new compile's own error is the failure, however often it is printed."""
    cached = ("2026-08-06 04:14:53.000183:  12991  [{level}]: Got a cached failed neff at /cache/MODULE_1/model.neff. "
              "With error log: Failed compilation with ['neuronx-cc', 'compile']:\n"
              "[libneuronxla 2.2.17544.0+fb9962bf]].                 Retrying...\n")
    fresh = ("2026-08-06 04:15:45.000656:  12991  [ERROR]: Failed compilation with ['neuronx-cc', 'compile', 'x.pb']: \n"
             "[ERROR] [NCC_EXTP003] Instructions generated by compiler 2064384 exceeds the typical limit of 150000.\n"
             "[rank0]: ValueError: RunNeuronCCImpl: error condition error != 0: [ERROR] [NCC_EXTP003] Instructions "
             "generated by compiler 2064384 exceeds the typical limit of 150000.\n")
    retried = analyze_text(cached.format(level="INFO") + fresh).findings
    assert [(f.family, f.code) for f in retried] == [("compiler-resource-limit", "NCC_EXTP003")], "one failure, once"
    assert analyze_text(cached.format(level="ERROR") + fresh).findings[0].family == "compile-cache-replay"


def test_bare_killed_after_a_compile_is_a_host_oom_kill():
    log = "2025-03-01 10:00:00.000100:  77  INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: neuronx-cc compile x.pb\n.....\nKilled\n"
    top = analyze_text(log).findings[0]
    assert top.family == "host-oom-kill" and top.tier in ("exact", "family")


def test_a_paste_cut_inside_a_traceback_says_so_instead_of_nothing():
    cut = "Process Process-1:\nTraceback (most recent call last):\n  File \"/opt/app/run.py\", line 12, in worker\n"
    [finding] = analyze_text(cut).findings
    assert (finding.signature, finding.summary) == ("generic-python-traceback-cut", "the last frame: /opt/app/run.py, line 12")
    assert analyze_text("Process Process-1: started\n").findings == []  # no traceback, nothing raised


def test_a_worker_a_signal_ended_is_a_finding_even_when_no_family_knows_why():
    findings = analyze_text("Running on trn1\n  traceback : Signal 6 (SIGABRT) received by PID 1186\n").findings
    assert [(f.signature, f.title) for f in findings] == [
        ("generic-process-crash", "A process was ended by a signal (SIGABRT)")]
    # Rust's std::process (cargo running a test of NRT bindings) names the signal its child died of.
    cargo = ("error: test failed, to rerun pass `--lib`\n\nCaused by:\n  process didn't exit successfully: "
             "`target/debug/deps/xla-181b9a97 transformer_xla_benchmark` (signal: 11, SIGSEGV: invalid memory reference)\n")
    assert [f.title for f in analyze_text(cargo).findings] == ["A process was ended by a signal (SIGSEGV)"]


def test_a_traceback_the_compiler_logged_is_its_crash_whatever_library_the_deepest_frames_are_in():
    head = "07/12/2022 12:58:03 PM ERROR 16931 [neuron-cc]: "
    frames = ['  File "neuroncc/driver/jobs/Frontend.py", line 377, in neuroncc.driver.jobs.Frontend.Frontend.runFrontend',
              '  File "/venv/lib/python3.7/site-packages/tvm/relay/build_module.py", line 282, in pre_partitioning_passes',
              "    func = ir_pass.fold_constant(func)",
              '  File "/venv/lib/python3.7/site-packages/tvm/relay/ir_pass.py", line 707, in fold_constant',
              "    return _ir_pass.FoldConstant(expr)",
              '  File "/venv/lib/python3.7/site-packages/tvm/_ffi/base.py", line 70, in check_call']
    assert _top_family("".join(head + frame + "\n" for frame in frames)) == "compiler-internal-crash"
    # The same frames in the user's own traceback: the deepest frames (a library the user called) say where.
    assert _top_family("Traceback (most recent call last):\n" + "\n".join(frames)
                       + "\nValueError: division by zero\n") != "compiler-internal-crash"


def test_a_word_that_only_resembles_killed_is_not_an_outcome():
    assert analyze_text("INFO: job Killed-by-user-request handler registered\n").findings == []


def test_log_ending_inside_an_api_call_is_a_hang_in_that_operation():
    log = ("2025-Mar-01 10:00:00.000100 77:77 INFO  NRT:nrt_init  API:IN\n"
           "2025-Mar-01 10:00:00.000200 77:77 INFO  NRT:nrt_init  API:OUT\n"
           "2025-Mar-01 10:00:01.000100 77:77 INFO  NRT:nrt_load_collectives  API:IN: (nc 0)\n")
    top = analyze_text(log).findings[0]
    assert (top.family, top.fields.get("operation")) == ("process-hang", "collectives")
    closed = log + "2025-Mar-01 10:00:09.000100 77:77 INFO  NRT:nrt_load_collectives  API:OUT\n"
    assert analyze_text(closed).findings == [], "an operation that closed is no hang"


WALRUS_PROGRESS = "".join(
    f"09/11/2024 09:18:{second:02d} AM DEBUG [WalrusDriver.0]: INFO (ShrinkDN): ANALYZE Layer_19/aten_mul_1/mul_t458_i{second}\n"
    for second in range(6))


def test_a_log_that_stops_in_the_compilers_own_progress_is_a_compile_that_had_not_finished():
    top = analyze_text(WALRUS_PROGRESS).findings[0]
    assert (top.family, top.fields.get("operation")) == ("process-hang", "compile")
    # A paste cut mid-line ends where its last whole line does.
    assert analyze_text(WALRUS_PROGRESS + "09/11/2\n").findings[0].family == "process-hang"
    assert analyze_text("INFO:Neuron:Number of arithmetic operators (pre-compilation) before = 286\n"
                        "...............\n").findings[0].family == "process-hang"
    assert analyze_text("INFO:Neuron:Number of arithmetic operators (pre-compilation) before = 286\n"
                        "INFO:Ne\n").findings[0].family == "process-hang"


@pytest.mark.parametrize("ending", [
    "09/11/2024 09:19:00 AM INFO [neuron-cc]: Compiler status PASS\n",  # the compile finished
    "Saved resnet50_neuron.pt\n",  # the job went on after the compiler's output
    "INFO:Neuron:Compile command returned: 1\n",  # torch-neuron's tracer saw the compiler end
    "Aborted\n",  # a short last line that is not the head of the line before it: the shell's SIGABRT report
    "09/11/2024 09:19:00 AM ERROR [WalrusDriver.0]: out of memory while spilling\n",  # it failed, not hung
    # The ICE banner, then the driver's message at its USER level: a compile dying, not one still running.
    "2023-10-25T08:32:15Z ERROR 509 140579525248832 [neuronxcc.driver.CommandDriver]:  An Internal Compiler Error has occurred\n"
    "2023-10-25T08:32:15Z USER 509 140579525248832 [neuronxcc.driver.CommandDriver]: Too many instructions afte\n",
])
def test_a_compile_that_ended_is_not_a_hang(ending):
    assert "process-hang" not in [f.family for f in analyze_text(WALRUS_PROGRESS + ending).findings]


def test_a_compiler_pass_named_in_its_progress_does_not_end_the_compile():
    # "Compiler status PASS" ends a compile; a pass the compiler is running does not.
    running = "09/11/2024 09:19:00 AM DEBUG [WalrusDriver.0]: running pass 7 of 12 (coloring_allocator)\n"
    assert analyze_text(WALRUS_PROGRESS + running).findings[0].family == "process-hang"


COMPILE_ROUND = ("2025-01-13 18:03:31.000153:  73  INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: neuronx-cc compile "
                 "--framework=XLA /tmp/w/model.MODULE_1+e30acd3a.hlo_module.pb --target=trn1\n.\nCompiler status PASS\n")


def test_a_second_compile_that_ended_like_the_first_is_not_a_hang():
    """A line of the same shape as one that said nothing is skipped as a flood, unless it closed a compile."""
    twice = COMPILE_ROUND + "tensor([[2., 2.]])\n" + COMPILE_ROUND.replace("18:03:31", "18:03:36")
    assert analyze_text(twice).findings == []
    assert _top_family(twice.removesuffix("Compiler status PASS\n")) == "process-hang"  # the near miss: still open


def test_a_log_whose_last_line_is_the_compilers_command_line_shows_no_hang():
    """A quoted command, or a paste cut where the compile began: nothing shows that the compile ran at all."""
    command = COMPILE_ROUND.split("\n")[0] + "\n"
    for log in (command, "Some weights were not used\n" + command):
        [note] = analyze_text(log).findings  # says where the log stops, and is no failure
        assert (note.signature, note.severity, note.tier) == ("generic-ends-at-compile", "note", "generic")
        assert analyze_text(log).failures() == []
    # The compiler's progress dot after it: the compile ran, and the log ends inside it.
    assert _top_family(command + ".\n") == "process-hang"
    # A compile that started before its command line was printed, or a run that went through a compile before
    # and stops at the next one's command line: it stopped inside that compile.
    assert _top_family("INFO:Neuron:Compiling model to Neuron...\n" + command) == "process-hang"
    assert _top_family(COMPILE_ROUND + "Epoch 0, step 1, loss 0.19\n" + command) == "process-hang"


def test_a_line_that_closed_nothing_the_first_time_closes_the_compile_the_second_time():
    cpu_trace = "WARNING:Neuron:No operator is placed on Neuron runtime; returning a CPU trace\n"
    started = "INFO:Neuron:Number of arithmetic operators (pre-compilation) before = 1, fused = 0\n"
    assert analyze_text(cpu_trace + started + cpu_trace).findings == []
    assert _top_family(cpu_trace + started) == "process-hang"  # the near miss: the second trace not printed


@pytest.mark.parametrize("elision", ["...", "[...]", "(snip)", "\u2026", "  [truncated]"])
def test_a_paste_that_ends_where_its_author_left_the_rest_out_is_no_hang(elision):
    assert "process-hang" not in [f.family for f in analyze_text(WALRUS_PROGRESS + elision + "\n").findings]
    # The compiler's own progress dots are no elision.
    assert _top_family(WALRUS_PROGRESS + "." * 12 + "\n") == "process-hang"


def test_a_warning_in_pytests_log_format_is_a_warning():
    """NxD Inference and vllm-neuron log as pytest does: `LEVEL    logger:file.py:N message`."""
    line = "vllm_neuron.platform:platform.py:280 Pin memory is not supported on Neuron.\n"
    assert [f for f in analyze_text("WARNING  " + line).findings if f.severity == "error"] == []
    assert _top_family("ERROR    " + line) == "model-library-error"


STOPPED_BY_HAND = """\
Traceback (most recent call last):
  File "/opt/venv/lib/python3.10/site-packages/torch_xla/core/xla_model.py", line 1062, in mark_step
    torch_xla._XLAC._xla_step_marker(
KeyboardInterrupt
"""


def test_a_run_someone_stopped_by_hand_is_a_hang_at_hang_confidence():
    for log in (STOPPED_BY_HAND, "    neuron_test.go:72: Waiting for single node job to complete\n^Csignal: interrupt\n"):
        top = analyze_text(log).findings[0]
        assert (top.family, top.confidence) == ("process-hang", 0.45)
    # An error printed before the interrupt is what failed; the interrupt only follows it.
    assert _top_family("[ERROR] [NCC_EOOM001] Maximum peak HBM usage exceeds the limit\n^C\n") == "compiler-resource-limit"
    assert _top_family("the handler for an interrupt by the timer fired\n") is None
    # Stopped by hand, then started again and failing: the interrupt is history, not how this run ended.
    rerun = STOPPED_BY_HAND + "$ python train.py --resume\nRuntimeError: Bad StatusOr access: INTERNAL: nrt_init failed. Status = 1\n"
    assert "process-hang" not in [f.family for f in analyze_text(rerun).findings]


NKI_CALL = """\
Traceback (most recent call last):
  File "/home/ubuntu/nki-samples/test_bilinear.py", line 58, in <module>
    out = {call}(interpolate_bilinear_fwd, img, scale)
AttributeError: module 'nki' ha
"""


def test_an_nki_api_call_that_raised_an_attribute_error_is_the_nki_family_even_cut_short():
    assert _top_family(NKI_CALL.format(call="nki.simulate_kernel")) == "nki-kernel-error"
    assert _top_family(NKI_CALL.format(call="mynki.simulate_kernel")) is None  # another module of a similar name


def test_an_unknown_component_code_gets_its_component_family():
    top = analyze_text("2025-03-01T10:00:01Z ERROR 1 [neuronx-cc]: [NCC_IBIR999] something new in the verifier\n").findings[0]
    assert (top.tier, top.family, top.code) == ("family", "compiler-bir-verifier", "NCC_IBIR999")


def test_legacy_daemon_status_names_alias_to_nrt_statuses():
    log = "[E neuron_runtime.cpp:269] NRTD response code 'NERR_RESOURCE' (4) The runtime was unable to allocate\n"
    finding = analyze_text(log).findings[0]
    assert finding.tier == "exact" and "resource" in finding.signature


def test_a_printed_code_beats_a_wording_pattern_on_its_line():
    """Two internal codes printed on one line: every code is read; no third signature's wording takes it."""
    log = ("2025-03-01T10:00:01Z ERROR 1 [neuronx-cc]: [NCC_ITEN404] [NCC_IBIR243] Internal tensorizer error: "
           "Expected core barriers to have name a, but core barrier 1 in subgraph 0 on core 1 has name b\n")
    codes = {f.code for f in analyze_text(log).findings}
    assert "NCC_IXLV002" not in codes and codes & {"NCC_ITEN404", "NCC_IBIR243"}



@pytest.mark.parametrize("line, code", [
    ("RuntimeError: NCC_IXLV002 Expected core barriers to have name a", "NCC_IXLV002"),  # re-raised without brackets
    ("compile failed (NCC_EOOM001)", "NCC_EOOM001"),
    ("2025-01-01T00:00:00Z ERROR 123 [neuronx-cc]: NCC_EXTP004: too many instructions", "NCC_EXTP004"),
    # The documented scheme printed without its NCC_ prefix, in brackets: the same code.
    ("2025-01-01T00:00:00Z ERROR 123 [neuronx-cc]: [ERROR] [EARG002] unrecognized argument --cache-dir", "NCC_EARG002"),
])
def test_a_code_printed_without_its_brackets_is_still_the_code(line, code):
    top = analyze_text(line + "\n").findings[0]
    assert (top.tier, top.code) == ("exact", code)


@pytest.mark.parametrize("mention", [
    "Fixed the NCC_IXLV002 issue in our kernel; the compile now succeeds",  # prose
    "ubuntu@ip-10-0-0-1:~$ grep NCC_IXLV002 compile.log",  # a prompt the paste kept
    "## NCC_EVRF029",  # a heading
    "    if (ret == NRT_RESOURCE) {",  # source code
    "INFO:Neuron:Compile command returned: 0",  # a compile that succeeded
    "[pre-commit] hook command returned: 1",  # another tool's command
    "press ^C to stop the server",  # advice, not an interrupt
    "[IDLE300] worker idle for 300 s, shutting down the failed pool",  # another tool's bracketed tag
])
def test_mentions_and_successes_are_not_failures(mention):
    assert [f.tier for f in analyze_text(mention + "\n").findings if f.tier != "generic"] == []


def test_a_sentence_that_says_killed_is_not_the_shells_report():
    timeouts = ("2023-Aug-01 16:14:43.0241 332066:332494 [29] include/socket.h:579 CCOM WARN Timeout waiting for RX "
                "(waited 120 sec) - retrying\n")
    assert _top_family("INFO: Killed 3 idle dataloader workers\n" + timeouts) == "collectives-timeout"
    assert _top_family("[1]+  Killed                  python train.py\n") == "host-oom-kill"


def test_an_unbracketed_code_is_a_mention_where_the_tool_printed_its_own():
    log = ("$ export NEURON_CC_FLAGS=--lnc=1   # to get around NCC_IXLV002\n"
           "see also NCC_ITEN404 from yesterday\n"
           "2025-03-01T10:00:01Z ERROR 1 [neuronx-cc]: [ERROR] [NCC_EVRF066] kernel is configured with LNC=2\n")
    assert [f.code for f in analyze_text(log).findings] == ["NCC_EVRF066"]
    # A code the user typed into a command or a comment is never a finding, even alone.
    assert not analyze_text("$ grep NCC_IXLV002 compile.log\n# NCC_IXLV002 again\n").findings


@pytest.mark.parametrize("line, status", [
    ("NRT_EXEC_HW_ERR_DMA_ABORT", "NRT_EXEC_HW_ERR_DMA_ABORT"),
    ("the second run returned NRT_TIMEOUT after 30 s", "NRT_TIMEOUT"),
])
def test_a_status_name_printed_alone_is_the_status(line, status):
    top = analyze_text(line + "\n").findings[0]
    assert top.tier == "exact" and top.family in ("runtime-execution-error", "process-hang") and any(status in e.text for e in top.evidence)


def test_a_name_that_only_starts_like_a_status_is_not_one():
    assert not analyze_text("NRT_SUCCESS\nNRT_FOO_BAR is set\n").findings

# ------------------------------------------------------------------ families that narrow others

def test_refines_names_real_families_and_never_loops():
    for family in FAMILIES:
        assert set(family.refines) <= set(KB.families) - {family.id}, family.id
    def broader(family_id: str, seen: tuple[str, ...] = ()) -> None:
        assert family_id not in seen, f"refines loops: {' -> '.join((*seen, family_id))}"
        for parent in KB.families[family_id].refines:
            broader(parent, (*seen, family_id))
    for family in FAMILIES:
        broader(family.id)


def test_causes_name_real_families_that_do_not_cause_them_back():
    for family in FAMILIES:
        assert set(family.causes) <= set(KB.families) - {family.id}, family.id
        assert not any(family.id in KB.families[effect].causes for effect in family.causes), family.id


RANKS_TIMING_OUT = """\
2023-Aug-01 16:14:43.0210 332066:332508 [31] bootstrap.cc:89 CCOM WARN Timeout waiting for incoming connection (waited 120 sec)
2023-Aug-01 16:14:43.0241 332066:332494 [29] include/socket.h:579 CCOM WARN Timeout waiting for RX (waited 120 sec) - retrying
"""


def test_a_known_cause_goes_before_the_symptom_it_brings_about_wherever_it_was_printed():
    assert _top_family(RANKS_TIMING_OUT) == "collectives-timeout"
    limit = "2023-Aug-01 16:12:43.0204 332066:332438 [21] bootstrap.cc:106 CCOM WARN Call to accept failed : Too many open files\n"
    for log in (limit + RANKS_TIMING_OUT, RANKS_TIMING_OUT + limit):  # ranks print out of order
        assert _top_family(log) == "collectives-bootstrap"
    # A failure that is not a cause of the timeouts does not jump ahead of them.
    assert _top_family(RANKS_TIMING_OUT + "ModuleNotFoundError: No module named 'torch_neuronx'\n") == "collectives-timeout"


ICE_ONLY = """\
2023-10-25T08:32:15Z ERROR 509 [neuronxcc.driver.CommandDriver]: ***************************************************************
2023-10-25T08:32:15Z ERROR 509 [neuronxcc.driver.CommandDriver]:  An Internal Compiler Error has occurred
2023-10-25T08:32:15Z ERROR 509 [neuronxcc.driver.CommandDriver]: ***************************************************************
2023-10-25T08:32:15Z ERROR 509 [neuronxcc.driver.CommandDriver]: Error message:  {message}
"""


def test_a_narrower_family_is_the_finding_over_the_broad_one_it_refines():
    # The ICE banner alone says "internal compiler error"; its message can say which limit was hit.
    def top_families(message: str) -> list[str | None]:
        text = ICE_ONLY.format(message=message)
        return [f.family for f in analyze_lines("x", enumerate(text.splitlines(), 1), kb=_without_signatures()).findings]

    assert top_families("unexpected state in pass FooBar")[0] == "compiler-internal-crash"
    narrow = top_families("Too many instructions after unrolling: 9300000 exceeds the limit of 5000000")
    assert narrow[0] == "compiler-resource-limit"
    assert "compiler-internal-crash" not in narrow  # one failure, one finding


def _without_signatures():
    return build([], families=KB.families)


XLA_DEVICE = """\
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/transformers/training_args.py", line 1341, in __post_init__
    and (get_xla_device_type(self.device) != "GPU")
  File "/usr/local/lib/python3.10/dist-packages/torch_xla/core/xla_model.py", line 263, in _xla_real_device
    raise RuntimeError('Invalid device format: {}'.format(device_str))
RuntimeError: {message}
"""


def test_a_device_error_inside_torch_xla_is_plugin_setup_and_a_compile_error_there_is_not():
    def top(message: str) -> str | None:
        findings = analyze_text(XLA_DEVICE.replace("{message}", message)).findings
        return findings[0].family if findings else None

    assert top("Invalid device format: cpu") == "framework-plugin-setup"
    assert top("No XLA devices found for PJRT_DEVICE=NEURON") == "framework-plugin-setup"
    assert top("neuronx-cc compilation failed with 70") != "framework-plugin-setup"


NXDI_TRACEBACK = """\
Traceback (most recent call last):
  File "/home/ubuntu/run_llama.py", line 40, in <module>
    model.load(compiled_path)
  File "/opt/aws_neuronx_venv_pytorch_2_5_nxd_inference/lib/python3.10/site-packages/neuronx_distributed_inference/models/application_base.py", line 311, in load
    self.checkpoint_loader_fn()
  File "/opt/aws_neuronx_venv_pytorch_2_5_nxd_inference/lib/python3.10/site-packages/neuronx_distributed_inference/models/model_wrapper.py", line 96, in checkpoint_loader_fn
    state_dict = self.get_state_dict(self.model_path, self.config)
"""


def _top_family(text: str) -> str | None:
    findings = analyze_text(text).findings
    return findings[0].family if findings and findings[0].tier != "generic" else None


@pytest.mark.parametrize("ending", [
    "KeyError: 'model.layers.3.self_attn.q_proj.weight'",  # an exception of any class the library raised
    "AttributeError: 'NoneType' object has no attribute 'shape'",
    "",  # the paste stops before the exception line
])
def test_an_error_raised_in_a_model_library_is_placed_there_whatever_its_class(ending):
    assert _top_family(NXDI_TRACEBACK + ending + "\n") == "model-library-error"


def test_the_model_library_family_gives_way_to_what_failed_through_its_frames():
    compile_failed = NXDI_TRACEBACK + "RuntimeError: neuronx-cc compilation failed with exit status 70\n"
    assert _top_family(compile_failed) != "model-library-error"
    skew = NXDI_TRACEBACK + "ImportError: cannot import name 'shard_linear' from 'neuronx_distributed.parallel_layers'\n"
    assert _top_family(skew) == "version-skew"
    # The same frames in a library of another name are not a model library's.
    assert _top_family(NXDI_TRACEBACK.replace("neuronx_distributed_inference", "my_inference") + "KeyError: 'x'\n") is None


LIBRARY_FRAMES = """\
Traceback (most recent call last):
  File "/srv/app/serve.py", line 12, in <module>
    outputs = llm.generate(prompts, params)
  File "{venv}/lib/python3.10/site-packages/vllm/engine/llm_engine.py", line 911, in step
    output = self.model_executor.execute_model(batch)
  File "{venv}/lib/python3.10/site-packages/transformers/generation/utils.py", line 1480, in prepare
    assert len(block_table) == 1
{exception}
"""


def test_an_error_inside_the_libraries_neuron_builds_on_is_placed_there_only_in_a_neuron_run():
    neuron = LIBRARY_FRAMES.format(venv="/opt/aws_neuronx_venv_pytorch_2_5", exception="AssertionError")
    top = analyze_text(neuron).findings[0]
    assert (top.family, top.confidence) == ("model-library-error", 0.45)
    # The same failure on a machine with no sign of Neuron is nobody's family.
    assert _top_family(LIBRARY_FRAMES.format(venv="/opt/conda", exception="AssertionError")) is None
    # A dependency missing at import is the install's, not the library's.
    missing = LIBRARY_FRAMES.format(venv="/opt/aws_neuronx_venv_pytorch_2_5", exception="ModuleNotFoundError: No module named 'onnx'")
    assert _top_family(missing) != "model-library-error"


@pytest.mark.parametrize("line, family", [
    ("E: Unable to locate package aws-neuronx-runtime-lib", "pip-resolution"),
    ("No package aws-neuronx-dkms available.", "pip-resolution"),
    ("The Neuron Runtime GRPC server at address unix:/run/neuron.sock is unavailable. Is neuron-rtd running?",
     "device-not-visible"),
    ("ValueError: Model architectures ['OPTForCausalLM'] are not supported on Neuron for now.", "model-library-error"),
    ("ImportError: cannot import name 'impl_abstract' from 'torch.library' (/opt/conda/lib/python3.10/torch/library.py)",
     "version-skew"),
    ("No package kernel-headers-5.10.234-225.895.amzn2.x86_64 available.", "driver-install"),
    ("2023-05-02T03:30:53Z ERROR 25636 [neuronx-cc]: ERROR: Failed command  /venv/lib/python3.8/site-packages/neuronxcc/"
     "starfish/bin/hlo2penguin --input /tmp/model.pb", "compiler-abnormal-termination"),
    ("Backend exited with code 1 and stderr: [DVR002]  Internal transformation failed - Please open a support ticket at "
     "https://github.com/aws-neuron/aws-neuron-sdk/issues/new.", "compiler-internal-crash"),
    # The compiler's log names the component that failed, whatever the message says.
    ("03/01/2023 01:28:13 PM ERROR 59059 [Tensorizer]: Transformation error on operator: _dot.1235", "compiler-tensorizer"),
    ("03/01/2023 01:28:13 PM ERROR 59059 [Codegen]: unexpected state while lowering", "compiler-codegen"),
    # ... also pasted without the timestamp
    ("ERROR 59059 [Tensorizer]: Transformation error on operator: _dot.1235", "compiler-tensorizer"),
    ("TypeError: Can't instantiate abstract class NeuronWorker with abstract method execute_worker", "model-library-error"),
    # A library class name inside a longer CamelCase name.
    ("AttributeError: type object 'MistralNeuronConfig' does not have the attribute 'get_axes'", "model-library-error"),
    ("AttributeError: Neuron executable (neff) is empty. Please check neuron-cc is installed", "framework-compile-failure"),
    ("ClientError: CompilationError: Unable to compile model for ml_inf1", "framework-compile-failure"),
    ("AssertionError: num_key_value_heads (8) must be divisible by tp_degree (12) of the Neuron model", "model-library-error"),
    ("ValueError: Cannot prefill 16 new request(s) with only 8 empty slots. Please align max_batch_size with the static "
     "batch size: 16.", "model-library-error"),
    ("2024-10-03 20:22:23.625 | ERROR    | yolox.core.trainer:train:86 - Exception in training: Bad StatusOr access: "
     "INVALID_ARGUMENT: RunNeuronCCImpl: error condition !(result != __null): ", "framework-compile-failure"),
    ("RuntimeError: failed to allocate 512 MB on NeuronCore 3: out of device memory", "runtime-device-memory"),
    ("RuntimeError: the NEFF was produced by neuronx-cc 2.19.1 which is newer than the runtime (2.17) supports",
     "version-skew"),
    ("RuntimeError: Unknown builtin op: neuron::forward_7.", "framework-plugin-setup"),
    ("RuntimeError: Failed to infer device type", "framework-plugin-setup"),
    ("Warning  UnexpectedAdmissionError  pod/infer-0  Allocate failed for resource aws.amazon.com/neuron", "kubernetes-components"),
    ("Invalid requirement (libneuronxla (<3.0,>2.0.x)) found in torch-neuronx-2.1.1 dependencies, skipping",
     "pip-resolution"),
    ("ERROR: No matching distribution found for neuronx-cc==2.99.0", "pip-resolution"),
    ("subprocess.CalledProcessError: Command '['optimum-cli', 'export', 'neuron', '--model', 'bert']' returned non-zero "
     "exit status 1.", "framework-compile-failure"),
    # PyTorch's tracer, which torch.neuron.trace and torch_neuronx.trace run the model through.
    ("RuntimeError: Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from traced "
     "functions", "model-not-traceable"),
    ("RuntimeError: Cannot insert a Tensor that requires grad as a constant. Consider making it a parameter or input, "
     "or detaching the gradient", "model-not-traceable"),
    ('RuntimeError: 0INTERNAL ASSERT FAILED at "../torch/csrc/jit/ir/alias_analysis.cpp":584, please report a bug to '
     "PyTorch. We don't have an op for aten::fill but it isn't a special case.", "framework-unsupported-op"),
    ('Nrt::BuildGlobalComm failed on NeuronCores 0-31(32):  nrt_status=1, message="Non specific failure".',
     "collectives-bootstrap"),
    ("ERROR: tensorflow-neuron 1.15.2.1.0 requires tensorboard-neuron<1.16.0,>=1.15.0, which is not installed.",
     "pip-resolution"),
    ("ValueError: Hugging Face Hub deployments are currently not supported with AWS Neuron and Inferentia.",
     "model-library-error"),
    ("NotImplementedError: speculative decoding is not yet supported for the Neuron backend", "model-library-error"),
    ("NeuronWorker.__init__() missing 1 required positional argument: 'cache_config'", "model-library-error"),
    ("/opt/aws/neuron/bin/neuron-ls: /lib64/libc.so.6: version `GLIBC_2.32' not found (required by "
     "/opt/aws/neuron/bin/neuron-ls)", "version-skew"),
    ("E   ImportError: cannot import name 'get_token' from 'huggingface_hub' (/home/u/.local/lib/python3.8/site-packages"
     "/huggingface_hub/__init__.py)\n  File \"/home/u/optimum-neuron/tests/test_generate.py\", line 6", "version-skew"),
    ("ClientError: CompilationError: Unable to compile model for ml_inf1: Please implement aten::alias in "
     "native_ops/aten.py", "framework-unsupported-op"),
    # The runtime's error notifications of an execution, by their subtype; an access out of bounds while it ran.
    ("Error notification found on NeuronCore 2: INFER_ERROR_SUBTYPE_NAN_INF", "runtime-execution-error"),
    ("RuntimeError: failed to run gather (indirect DMA via DGE) due to out of bound access at index 70000",
     "runtime-execution-error"),
    # The runtime's records copied without their heads: devices it could not initialise, on an inf2 host.
    ("inf2.xlarge: Failed to initialize devices: nd0 is busy", "runtime-init-failure"),
    ("ERROR: failed to initialise Neuron devices (error 5)", "runtime-init-failure"),
    # The framework saying another process holds the accelerator.
    ("RuntimeError: the accelerator of this trn1 is in use by another process (pid 4121); stop it or pick other cores",
     "neuroncores-in-use"),
    # The runtime could not reserve the host's huge pages for its DMA buffers.
    ("2024-Jan-05 10:00:00.000000 1234:1234 ERROR  TDRV:dma_pool_init   Unable to reserve 64 hugepages for nd0",
     "runtime-device-memory"),
    # The BIR verifier's one-line report of an instruction it refused.
    ("=== BIR error === Reason: Partition range out of bound. Instruction: I-812-0 Opcode: Activation Argument AP: "
     "[[1,128],[1,512]] Memory Location: {sbuf_3}", "compiler-bir-verifier"),
    # The Inf1 daemon's inference call that failed, whatever wrapped it.
    ("2022-05-26 01:44:11.574098: E tensorflow/neuron/runtime/model.cc:706] nrt::infer_wait failed with grpc status "
     "code 14, error message \"connection reset\"", "runtime-execution-error"),
    # A cache in S3 that refused an entry's transfer: an access, even with a failed compile's words in its key.
    ("RunNeuronCCImpl: error condition !(error != 400): <class 'botocore.exceptions.ClientError'>: Failed to download "
     "s3://team/ml/neuron-compile-cache/neuronxcc-2.14.1.0+aa/MODULE_77+bb/model.neff: An error occurred (403)",
     "compile-cache-access"),
    # The runtime's own words on a driver too old for it; the last line of a paste, ending its sentence, is no
    # cut line to resemble the head of another message ("Unable to determine Neuron Driver version").
    ("2022-Jul-18 08:43:01.0682  8984:8984  ERROR   NRT:nrt_init      Neuron Runtime 2.x requires Neuron driver"
     "(aws-neuron-dkms) version 2.1 or above.", "version-skew"),
    ("malloc(): unsorted double linked list corrupted", "runtime-process-crash"),  # glibc found its heap broken
    ("INFO:Neuron:PyTorch to TF conversion failed to resolve function on aten::meshgrid with inputs [<tf.Tensor>]",
     "framework-unsupported-op"),
    ("RuntimeError: Failed to compile the model for inf2 (see the log above)", "framework-compile-failure"),
    # torch-neuron's warning that neuron-cc failed on a partition (the paste cut before the compiler's own error).
    ("WARNING:Neuron:torch.neuron.trace failed on _NeuronGraph$2347; falling back to native python function call",
     "framework-compile-failure"),
    # A Neuron tool's command line refusing a subcommand a guide uses: the install is another release than the guide.
    ("optimum-cli neuron cache: error: argument {create,set,add,list,synchronize}: invalid choice: 'lookup' (choose "
     "from 'create', 'set', 'add', 'list', 'synchronize')", "version-skew"),
    ("neuronx-cc: error: unrecognized arguments: --enable-fast-loading", "compiler-arguments"),  # the compiler's own
    # The NKI front end's SyntaxError about a kernel, and an error raised on a kernel line that calls NKI's modules.
    ("SyntaxError: Store has illegal access pattern in the partition dimension of the SBUF tile", "nki-kernel-error"),
    ('  File "/home/u/kernels/mm.py", line 9, in mm_kernel\n    acc = nisa.nc_matmul(a_tile, b_tile)\n'
     "ValueError: stationary operand exceeds 128 rows", "nki-kernel-error"),
    # The framework's account of the operators it cannot place on Neuron, at whatever level it prints it.
    ("WARNING:Neuron:2 operators are unsupported by neuron-cc and will run on CPU: aten::roll, aten::clamp_min",
     "framework-unsupported-op"),
    # The NKI compiler's diagnostic in a kernel of the NKI Library.
    ("/venv/lib/python3.12/site-packages/nkilib/core/utils/helpers.py:88:4: error: 'mod' does not allow a zero divisor",
     "nki-kernel-error"),
    # PyTorch's C++ exception that nothing caught aborted the process.
    ("| 1679087716684 | terminate called after throwing an instance of 'c10::Error'", "runtime-process-crash"),
    # The inf1 daemon echoing its syslog records to stderr, tag and all, failing in its own start-up.
    ("nrtd[17]: [NRTD:nrtd_main] Failed to initialize devices: 0000:00:1c.0 0000:00:1f.0 , attempt: 1",
     "runtime-init-failure"),
    ("F0516 08:20:14.836342 38 env.go:375] Setup failure: discovered 0 neuronCorePerNode => no Neuron capacity found",
     "device-not-visible"),
    # Kubernetes finds no node with the Neuron resources: the device plugin's side.
    ("2025/05/16 08:20:14 [ERROR] Node ip-10-0-0-1 (type=inf2.48xlarge) lacks 'aws.amazon.com/neuroncore'",
     "kubernetes-components"),
    ("ModuleNotFoundError: No module named 'neuronx_distributed'", "pip-resolution"),
    # A file of a compile-cache entry the file system refused, whatever the cache folder is called.
    ("RuntimeError: Bad StatusOr access: INVALID_ARGUMENT: RunNeuronCCImpl: <class 'PermissionError'>: [Errno 13] "
     "Permission denied: '/shared/cc/neuronxcc-2.19.8089.0+8ab9f450/MODULE_11223344+abcdef01/model.neff'",
     "compile-cache-access"),
    # A Neuron package's own source the interpreter cannot parse: installed into a Python older than it supports.
    ('File "/env/lib/python3.5/site-packages/torch_neuron/__init__.py", line 29\n'
     "    f'Invalid dependency version torch=={torch.__version__}. '\n                ^\nSyntaxError: invalid syntax",
     "pip-resolution"),
    ("ERROR could not schedule pod: incompatible with nodepool inferentia-inf2, did not tolerate "
     "aws.amazon.com/neuron=:NoSchedule", "kubernetes-components"),
    ("RuntimeError: operator torchvision::nms does not exist", "version-skew"),
    # A code printed as internal whose message, wrapped onto the next line, says what is not supported.
    ("[ERROR] [NCC_ISPP027] Reduce operation with multiple operand tensors is not\nsupported. Encountered reduce "
     "operation with 2 operands.", "compiler-unsupported-input"),
    # The inf1 daemon could not reserve its cores in a group.
    # (`Check failed: 0 == ...` is a C++ CHECK comparing with 0, not a count of no failures.)
    ("mxnet.base.MXNetError: [00:26:32] src/operator/subgraph/neuron/./neuron_util.h:221: Check failed: 0 == "
     "create_eg_rsp.status().code() Failed to create NeuronCore Group with KRTD Error. KRTD Status Code: 4",
     "neuroncores-in-use"),
    # A tool of the Neuron tools failed in its own script.
    ('  File "/opt/aws/neuron/bin/neuron-monitor-cloudwatch.py", line 119, in process_data\n'
     "    instance_info = monitor_data['instance_data']\nKeyError: 'instance_data'", "profiler-tools"),
    # TorchScript prints its message on the line under the exception's class.
    ("RuntimeError: \nUnknown type name '__torch__.torch.classes.neuron.Model':", "framework-plugin-setup"),
    # The compile wrapper could not open an entry's lock file (out of file descriptors here), in glog's header.
    ("E0301 08:06:14.272283   72588 tcp_server_posix.cc:214] Failed accept4: Too many open files\n"
     "F0301 08:06:15.515834   72588 neuron_compiler.cc:200] Check failed: fd != -1 could not open the lock file "
     "(errno 24)", "compile-cache-access"),
    # The loader could not find the runtime library (an OS package pip does not install) or the plugin's.
    ('  File "/venv/lib/python3.10/site-packages/torch_neuronx/__init__.py", line 12, in <module>\n'
     "ImportError: libnrt.so.1: cannot open shared object file: No such file or directory", "framework-plugin-setup"),
])
def test_shapes_users_paste_without_a_code_get_their_family(line, family):
    assert _top_family(line + "\n") == family


@pytest.mark.parametrize("line", [
    "E: Unable to locate package libfoo-dev",  # a package manager miss that is not Neuron's
    "No package matched; using the defaults",
    "The metrics GRPC server is unavailable; retrying in 5 s",  # not the runtime daemon
    "ValueError: bf16 is not supported on this CPU",
    "ModuleNotFoundError: No module named 'yaml'",  # not an ImportError of a name inside a module
    # The user's own circular import, not two releases of the stack.
    "ImportError: cannot import name 'CONFIG' from partially initialized module 'app.train' (circular import)",
    # A module of the user's checkout, whose folder happens to name the stack: a helper it did not build.
    "ImportError: cannot import name 'helpers' from 'megatron.data' (/home/u/aws-neuron-reference-for-megatron-lm/"
    "megatron/data/__init__.py)",
    "No package kernel-headers needed for this image",  # headers named, nothing missing
    "ERROR: Failed command /usr/bin/make install",  # a failed command that is not a compiler stage
    "Unsupported dtype f64 - Please open a support ticket at https://github.com/aws-neuron/aws-neuron-sdk/issues/new",
    "03/01/2023 01:28:13 PM INFO 59059 [Tensorizer]: Finished pass TransformationCleanup",  # not an error record
    # vLLM's start-up warning names the Neuron worker, and no exception was raised.
    "WARNING 11-26 10:00:06 [utils.py:2262] Methods add_lora not implemented in <vllm.worker.neuron_worker.NeuronWorker>",
    "WARNING: tp_degree 12 does not divide the 32 heads evenly; padding them",  # a warning, nothing raised
    "INFO: prompt of 700 tokens padded to the static shapes used for compilation (1024)",  # the normal path
    "INFO: RunNeuronCCImpl returned after 42 s for MODULE_1",  # the compile call, nothing failed
    # Another accelerator's runtime failing to allocate (Ascend's), in the words every runtime uses.
    "[ERROR] RecentErrMsg: [PID: 1613532] Memory_Allocation_Failure(EL0004): Failed to allocate memory.",
    "This release is newer than 2.18 and adds Llama 3 support",  # a comparison of no component
    "ERROR: Invalid requirement: 'foo===1'",  # an installer error about no Neuron package
    "ERROR: No matching distribution found for NEURON==8.2.0",  # the neuroscience simulator, not the SDK
    "subprocess.CalledProcessError: Command '['optimum-cli', 'export', 'onnx', '--model', 'bert']' returned non-zero "
    "exit status 1.",  # an export, but not for Neuron
    "RuntimeError: Unknown builtin op: aten::frobnicate.",  # an operator of no Neuron trace
    # Every serving engine checks its parallel degree, and the kubelet admits GPU pods too: without Neuron in
    # the run these are not Neuron failures; nor is docker's client "older than the runtime API version".
    "ValueError: Tensor parallel size 3 must be divisible by the number of attention heads (hidden neurons: 4096)",
    "Warning  UnexpectedAdmissionError  pod/gpu-0  Allocate failed due to nvidia.com/gpu",
    "Error response from daemon: client version 1.39 is older than the runtime API version 1.41",
    # The Error of an exception's class name is no failure word of its message ("compiled for" is no compile failure).
    "AssertionError: Input length 5120 exceeds the maximum context length 4096 the model was compiled for",
    "git: error: argument {commit,push}: invalid choice: 'comit' (choose from 'commit', 'push')",  # not a Neuron tool
    "terminate called after throwing an instance of 'std::out_of_range'",  # an abort, but of no framework's exception
    '  File "train.py", line 3\n    x = = 1\n        ^\nSyntaxError: invalid syntax',  # Python's own syntax error
    # The interpreter failing to start is not a crash of the run (faulthandler names a signal when it is one).
    "Fatal Python error: initfsencoding: unable to load the file system codec",
    "INFO:Neuron:100.00% of all operations (including primitives) (21 of 21) are supported",  # every operator placed
    "Found nkilib 0.3 at /venv/lib/python3.12/site-packages/nkilib/__init__.py",  # the library named, nothing failed
    # torch-neuron's partitioner leaves some operators on CPU by design: a compile that goes on is no failure.
    "INFO:Neuron:There are 2 ops of 2 different types in the TorchScript that are not compiled by neuron-cc: aten::roll",
    '  File "/home/u/app.py", line 9, in main\n    y = model.load(path)\nValueError: no checkpoint at path',  # not NKI
    "2021-04-22 [ERROR] no tasks found",  # nothing counted, nothing of Neuron
    # DJL's console relaying vLLM's start-up warning (its own level and logger ahead of vLLM's): a warning.
    "INFO  PyProcess W-108-llama3-stdout: WARNING 07-09 11:38:18 utils.py:465] Pin memory is not supported on Neuron.",
    # A serving engine's configuration check that says "Assertion failed", with no compiler anywhere.
    "pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig\n"
    "  Assertion failed, When prefix caching is enabled, block_size must be set.",
    # A serving front end's client hung up, a cluster node's bootstrap failed: no collective of Neuron's.
    "io.netty.channel.unix.Errors$NativeIoException: recvAddress(..) failed: Connection reset by peer",
    "2026-03-13 04:55:09,414 - [slurm_plugin:is_bootstrap_failure] - ERROR - Node bootstrap error: gpu-st-ml-1",
    "Setup failure: discovered 0 GPUs per node => no capacity found",  # a count of another accelerator
    "ERROR: operator precedence in config expression does not exist",  # no exception: a tool's message
    "ValueError: the requested operator does not exist",  # not the RuntimeError torch raises for an extension
    # A syntax error in the user's own script, or in a package of a run with no Neuron in it.
    'File "/home/u/neuron_app/train.py", line 29\n    f"x" +\n         ^\nSyntaxError: invalid syntax',
    'File "/env/lib/python3.5/site-packages/requests/__init__.py", line 29\n    f"x"\n      ^\nSyntaxError: invalid syntax',
    # Out of file descriptors where no collectives were setting up (a data loader's shard).
    "OSError: [Errno 24] Too many open files: '/data/shards/part-0042.parquet' on trn1",
    # Devices of a run with no Neuron in it that did not initialise.
    "RuntimeError: Failed to initialize devices: CUDA driver version is insufficient for CUDA runtime version",
    # A kernel's own report on its huge page pool, in a run with no Neuron in it.
    "kernel: HugeTLB: allocating 1024 of page size 2.00 MiB failed.  Only allocated 512 hugepages.",
    # Another accelerator's library the loader could not find.
    "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
])
def test_near_misses_of_those_shapes_do_not(line):
    assert _top_family(line + "\n") not in ("pip-resolution", "device-not-visible", "model-library-error", "version-skew",
                                            "driver-install", "compiler-abnormal-termination", "compiler-internal-crash",
                                            "compiler-tensorizer", "framework-plugin-setup", "framework-compile-failure",
                                            "nki-kernel-error", "runtime-process-crash", "framework-unsupported-op",
                                            "collectives-timeout", "collectives-bootstrap")



@pytest.mark.parametrize(("line", "not_family"), [
    # A warning of the tracer is advice, and a traced function named in passing is no failure.
    ("TracerWarning: Converting a tensor to a Python boolean might cause the trace to be incorrect.",
     "model-not-traceable"),
    ("Saved the traced function to model.pt; outputs are tuples of tensors", "model-not-traceable"),
    # PyTorch's own C++ assertion is not the Neuron compiler's.
    ('RuntimeError: INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":1154, please report a bug to '
     "PyTorch.", "compiler-internal-crash"),
    ("Built the global communicator (GlobalComm) for 32 ranks in 2.1 s", "collectives-bootstrap"),
    ("ERROR: torchvision 0.4.2 requires torch==1.3.1, which is not installed.", "pip-resolution"),  # no Neuron package
    # A file the file system refused outside any compile-cache entry: the NEFF the user gave.
    ("RuntimeError: nrt_load failed: [Errno 13] Permission denied: '/shared/models/model.neff'", "compile-cache-access"),
    ("jit trace failed on input 3 of 8, retrying with strict=False", "framework-compile-failure"),
    ("ValueError: more than 4096 neurons per layer are not supported", "model-library-error"),  # a model's neurons
    ("Cache operations are not supported for Neuron backend.", "framework-unsupported-op"),  # a serving engine's limit
    ("Verified 1200 shards: no corrupted files, malloc() arena stats written", "runtime-process-crash"),
    # No Neuron in the run: another project's binary, import or build.
    ("dlr.DLRError: Failed to load dynamic shared library /home/u/compiled.so /lib64/libm.so.6: version `GLIBC_2.27' "
     "not found (required by /home/u/compiled.so)", "version-skew"),
    ("dlr.DLRError: Failed to load dynamic shared library /home/u/compiled.so", "framework-compile-failure"),  # a file
    ("ImportError: cannot import name 'get_token' from 'huggingface_hub' (/venv/lib/python3.8/site-packages/"
     "huggingface_hub/__init__.py)", "version-skew"),
    ("ImportError: cannot import name 'Mapping' from 'collections' (/usr/lib/python3.10/collections/__init__.py)",
     "version-skew"),
    ("Trainer.__init__() got an unexpected keyword argument 'tokenizer'", "model-library-error"),  # no Neuron class
    ("RuntimeError: neuronal morphology format v3 is not supported", "model-library-error"),  # a simulator's
])
def test_tracer_and_framework_assertion_near_misses(line, not_family):
    assert _top_family(line + "\n") != not_family


TORCH_NEURON_CONVERT = """\
Traceback (most recent call last):
  File "compile.py", line 9, in <module>
    model_neuron = torch.neuron.trace(model, example_inputs=[example])
  File "/venv/lib/python3.7/site-packages/torch_neuron/convert.py", line 184, in trace
    cu.compile_tfgraph(neuron_graph)
  File "/venv/lib/python3.7/site-packages/{module}", line {line}, in {function}
    {code}
TypeError: {message}
"""


def test_a_plain_python_error_in_an_inf1_op_handler_is_an_unsupported_op_and_in_the_model_is_not():
    handler = TORCH_NEURON_CONVERT.format(module="torch_neuron/ops/aten.py", line=1102, function="arange",
                                          code="return _arange(op, *inputs)",
                                          message="arange() takes from 2 to 6 positional arguments but 7 were given")
    assert _top_family(handler) == "framework-unsupported-op"
    model = TORCH_NEURON_CONVERT.format(module="transformers/models/gpt2/modeling_gpt2.py", line=771, function="forward",
                                        code="position_ids = torch.arange(past_length, input_shape[-1] + past_length)",
                                        message="unsupported operand type(s) for +: 'int' and 'NoneType'")
    assert _top_family(model) != "framework-unsupported-op"


OWN_MODULE = """\
Traceback (most recent call last):
  File "/venv/bin/optimum-cli", line 5, in <module>
    from optimum.commands.optimum_cli import main
  File "/venv/lib64/python3.8/site-packages/optimum/commands/__init__.py", line 16, in <module>
    from .env import EnvironmentCommand
ModuleNotFoundError: No module named '{module}'
"""


LAZY_IMPORT = """\
Traceback (most recent call last):
  File "/venv/lib/python3.8/site-packages/transformers/utils/import_utils.py", line 1382, in _get_module
    return importlib.import_module("." + module_name, self.__name__)
RuntimeError: Failed to import optimum.neuron.modeling because of the following error (look up to see its traceback): No module named '{module}'
"""


def test_a_lazy_module_re_raising_its_own_missing_module_is_a_mixed_install():
    """Hugging Face's lazy modules re-raise the ModuleNotFoundError as a RuntimeError naming the importer."""
    assert _top_family(LAZY_IMPORT.format(module="optimum.exporters.neuron")) == "version-skew"
    assert _top_family(LAZY_IMPORT.format(module="onnx")) != "version-skew"  # a dependency, not its own module


def test_a_package_that_cannot_import_its_own_module_is_a_mixed_install():
    assert _top_family(OWN_MODULE.format(module="optimum.commands.env")) == "version-skew"
    # Another package's module missing is a missing dependency, not a mixed install of this one.
    assert _top_family(OWN_MODULE.format(module="onnx.helper")) != "version-skew"


EXTENSION_LOAD = """\
Traceback (most recent call last):
  File "neuroncc/driver/JobRegistry.py", line 25, in neuroncc.driver.JobRegistry.JobRegistry.__init__
  File "/envs/inf/lib/python3.7/importlib/__init__.py", line 127, in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
  File "<frozen importlib._bootstrap>", line 583, in module_from_spec
  File "<frozen importlib._bootstrap_external>", line 1043, in create_module
  File "<frozen importlib._bootstrap>", line 219, in _call_with_frames_removed
{exception}: /envs/inf/lib/python3.7/site-packages/neuroncc/starfish/lib/libwalrus.so
"""


def test_an_extension_module_that_fails_to_load_is_version_skew():
    assert _top_family(EXTENSION_LOAD.format(exception="ImportError")) == "version-skew"
    assert _top_family(EXTENSION_LOAD.format(exception="MemoryError")) != "version-skew"


def test_a_named_word_list_is_expanded_and_an_unknown_one_is_named():
    from pydantic import ValidationError

    from nforensics.knowledge.family_schema import Detect

    rule = Detect(words=[["no matching distribution"], ["@neuron_packages", "my-extra"]])
    assert {"libneuronxla", "neuron-cc", "optimum-neuron"} <= set(rule.words[1]) and rule.words[1][-1] == "my-extra"
    assert not any(word.startswith("@") for word in rule.words[1])
    with pytest.raises(ValidationError, match="no word list '@neuron_pkgs'.*neuron_context, neuron_packages"):
        Detect(words=[["@neuron_pkgs"]])


GPU_WATCHDOG = """\
host-7:1184:1203 [1] NCCL INFO comm 0x55d1b41a9f10 rank 1 nranks 4 cudaDev 1 nvmlDev 1 busId 20000 - Init COMPLETE
[rank3]:[E1002 09:22:41.550 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE) ran for 600031 milliseconds before timing out.
terminate called after throwing an instance of 'c10::DistBackendError'
"""


@pytest.mark.parametrize("log", [
    GPU_WATCHDOG,
    # Habana Gaudi's graph compiler, and torch-xla on a TPU (XLA alone is no sign of Neuron).
    "[19:08:34.165045][PT_BRIDGE ][error][tid:44F8A] graph.cpp: 599Graph compile failed. synStatus=synStatus 26 "
    "[Generic failure]. compile\n",
    # NVIDIA NCCL's own OFI plugin warning on a GPU cluster (Neuron's collectives tag their lines CCOM).
    "gpu-node-3:8716:9558 [2] NCCL INFO Ring 00 : 26[2] -> 30[6] via P2P/IPC\ngpu-node-4:72593:73427 [7] "
    "create_nccl_ofi_component:459 NCCL WARN NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument\n",
    # Tenstorrent's allocator (its words are the runtime's: "Not enough space to allocate").
    "E       RuntimeError: TT_THROW @ ../tt_metal/impl/allocator/allocator.cpp:145: tt::exception\nE       Out of Memory: "
    "Not enough space to allocate 67108864 B L1 buffer across 8 banks\n",
    "Exception in device=TPU:6: tensorflow/compiler/xla/xla_client/mesh_service.cc:294 : Failed to meet rendezvous "
    "'init': Socket closed (14)\n  File \"/usr/lib/python3/dist-packages/torch_xla/distributed/xla_multiprocessing.py\", "
    "line 231, in _start_fn\n",
])
def test_a_run_on_another_accelerator_gets_no_neuron_family_or_report(log):
    analysis = analyze_text(log)
    assert {f.tier for f in analysis.findings} <= {"generic"}, [(f.tier, f.signature) for f in analysis.findings]


@pytest.mark.parametrize("neuron_line", [
    "2024-Oct-02 09:22:40.1 1186:1186 ERROR  NCCOM:ncclCommInitRank  bootstrap failed",  # the runtime's collectives
    "  File \"/opt/venv/lib/python3.10/site-packages/libneuronxla/neuron_cc_wrapper.py\", line 71, in compile",
    "$ python train.py   # trn1.32xlarge",
])
def test_a_neuron_run_that_mentions_cuda_keeps_its_family(neuron_line):
    assert _top_family(neuron_line + "\n" + GPU_WATCHDOG) in ("collectives-timeout", "collectives-bootstrap")


COMPILER_ROOTS = """\
2024-10-10 21:04:44.000898:  9694  INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: neuronx-cc compile --target=trn1 --framework=XLA model.hlo_module.pb --output model.neff
.root = {path}
root = {parent}
2024-10-10 21:04:46.000246:  9694  ERROR ||NEURON_CC_WRAPPER||: Failed compilation with ['neuronx-cc', 'compile', '--target=trn1', '--framework=XLA', 'model.hlo_module.pb']
"""


@pytest.mark.parametrize(("path", "family"), [
    # The pass that inlines NKI kernels failed: the kernel did not compile into the graph.
    ("neuronxcc/starfish/penguin/targets/transforms/InlineNKIKernels.py", "nki-kernel-error"),
    # Any other pass of the compiler: a crash inside it, placed at its stage.
    ("neuronxcc/starfish/penguin/targets/sunda/passes/SundaSizeTiling.py", "compiler-internal-crash"),
])
def test_the_file_neuronx_cc_names_as_a_pass_fails_places_the_failure(path, family):
    log = COMPILER_ROOTS.format(path=path, parent=path.rsplit("/", 1)[0])
    assert _top_family(log) == family


def test_a_root_chain_outside_the_compiler_is_its_crash_at_no_stage():
    """neuronx-cc prints the chain as one of its passes fails, also when the file is the standard library's (the
    worker process the pass ran in): the compiler failed inside itself, at a stage the chain does not name."""
    log = COMPILER_ROOTS.format(path="/usr/lib/python3.8/multiprocessing/process.py", parent="/usr/lib/python3.8/multiprocessing")
    [top] = [f for f in analyze_text(log).findings if f.severity == "error"]
    assert top.family == "compiler-internal-crash" and "stage" not in top.fields
    # Without the envelope after it, the chain still ends the compile: a crash, not a compile still running.
    assert _top_family(log.rsplit("\n", 2)[0] + "\n") == "compiler-internal-crash"
    # One `root = ...` line alone is a setting someone printed (a dataset root), not the chain.
    assert _top_family(log.replace("root = /usr/lib/python3.8/multiprocessing\n", "")) == "framework-compile-failure"
    # Nor are two that do not climb the folders, or a chain where no compiler ran.
    assert _top_family("root = /data/imagenet/train\nroot = /data/imagenet/val\n") is None
    assert _top_family("root = /data/imagenet/train/x.py\nroot = /data/imagenet/train\n") is None


def test_a_lone_root_line_in_a_compile_is_no_end_of_it():
    assert _top_family(COMPILE_ROUND.split("\n")[0] + "\nroot = /data/imagenet/train\n.\n") == "process-hang"


def test_a_graph_that_failed_to_stage_is_not_short_of_cores_when_its_status_says_memory():
    log = ("2024-Jul-10 09:14:41.987894 12878:14366 ERROR  NMGR:kmgr_load_nn_internal_v2  Failed to stage graph: kelf-0.json"
           " to NeuronCore\n2024-Jul-10 09:14:42.047050 12878:14366 ERROR  NMGR:kmgr_load_nn_post_metrics  Failed to load NN:"
           " /tmp/model.neff, err: 4\n2024-Jul-10 09:14:42.787422 12878:14365 ERROR  TDRV:dmem_alloc_internal  Failed to"
           " alloc DEVICE memory: 45429760\n")
    assert [f.signature for f in analyze_text(log).findings][:1] != ["nrt-load-not-enough-neuroncores"]
    assert _top_family(log) == "runtime-device-memory"


def _waiting(times: int, then: str = "") -> str:
    loop = "".join(f"DEBUG 05-31 01:{40 + n:02d}:17 client.py:191] Waiting for output from MQLLMEngine.\n" for n in range(times))
    return "INFO 05-31 01:38:02 llm_engine.py:72] Initializing an LLM engine with tensor_parallel_size=32\n" + loop + then


def test_a_log_that_ends_in_a_loop_still_waiting_is_a_hang():
    analysis = analyze_text(_waiting(6))
    assert _top_family(_waiting(6)) == "process-hang"
    assert "Waiting for output" in analysis.findings[0].evidence[0].text


@pytest.mark.parametrize("log", [
    _waiting(2),  # twice is a wait, not a loop
    _waiting(6, "INFO 05-31 01:47:00 api_server.py:300] Started server process\n"),  # it stopped waiting
    _waiting(6, "RuntimeError: NeuronCore 0 is already in use by process 4242\n"),  # a failure ends the wait
])
def test_a_wait_that_ended_is_no_hang(log):
    assert _top_family(log) != "process-hang"


def test_words_are_never_read_inside_ids_and_hashes():
    """A random work directory or module hash spells hex words: `efa5` in a UUID is no EFA failure."""
    log = ("2024-10-10 21:04:46.000246:  9694  ERROR ||NEURON_CC_WRAPPER||: Compilation failed for /tmp/u/neuroncc_compile"
           "_workdir/b4d670f7-efa5-4206-b770-6f5f7d95dd58/model.MODULE_efa01234567+d41d8cd9.hlo_module.pb after 0 retries.\n")
    families = [f.family for f in analyze_text(log).findings]
    assert families[0] == "framework-compile-failure" and "collectives-efa" not in families


def test_a_lone_root_setting_is_no_compiler_frame():
    log = ("root = neuronxcc/starfish/penguin/targets/transforms/InlineNKIKernels.py\n"
           "RuntimeError: training stopped: loss is nan\n")
    assert _top_family(log) not in ("nki-kernel-error", "compiler-internal-crash")


def test_a_launcher_stopped_from_outside_is_host_memory_as_nxd_training_documents():
    """torchrun's agent saying it received SIGTERM and stopping its workers, with no error of the run's own:
    NxD Training's known issues show exactly this output for the host running out of memory (and the threads
    behind three held-out logs established the same), so the family is the OOM kill, at low confidence, with
    a scheduler's or a node's SIGTERM as the other account. SIGKILL cannot be received: no such line."""
    stopped = ("WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers\n"
               "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3721028 closing signal SIGTERM\n")
    [top] = analyze_text(stopped).findings
    assert (top.family, top.hypotheses[0].id) == ("host-oom-kill", "host-ram-too-small") and top.confidence < 0.5
    assert "stopped-from-outside" in [h.id for h in top.hypotheses]
    assert _top_family(stopped + "RuntimeError: NEFF load failed: NRT_RESOURCE\n") != "host-oom-kill"  # an error came after
    assert _top_family("^C\n") == "process-hang"  # stopped by hand
    # Also where the log ends inside a compile: the signal is a fact of how the run ended.
    inside = analyze_text(COMPILE_ROUND.split("\n")[0] + "\n.\n" + stopped).findings[0]
    assert inside.fields["signal"] == 15 and inside.family == "host-oom-kill"


def _pip_fetching(*versions: str) -> str:
    return "".join(f"Collecting neuronx-cc>=2.0.0a0\n  Downloading https://pip.repos.neuron.amazonaws.com/neuronx-cc/"
                   f"neuronx_cc-{v}%2Bab12cd34-cp310-cp310-linux_x86_64.whl (612.0 MB)\n"
                   "     ---------------------------------------- 612.0/612.0 MB 40.1 MB/s 0:00:15\n" for v in versions)


def test_a_log_that_ends_while_pip_fetches_release_after_release_is_the_resolver_backtracking():
    assert _top_family(_pip_fetching("2.19.8089.0", "2.18.121.0", "2.17.194.0")) == "pip-resolution"
    assert analyze_text(_pip_fetching("2.19.8089.0", "2.18.121.0")).findings == []  # one step back is no loop
    finished = _pip_fetching("2.19.8089.0", "2.18.121.0", "2.17.194.0") + "Successfully installed neuronx-cc-2.17.194.0\n"
    assert analyze_text(finished).findings == []


EFA_WARNINGS = """\
2024-Jan-09 10:01:02.0101 5120:5121 [0] nccl_net_ofi_init:1415 CCOM WARN NET/OFI aws-ofi-nccl initialization failed
2024-Jan-09 10:01:02.0102 5120:5121 [0] init.cc:99 CCOM WARN OFI plugin initNet() failed is EFA enabled?
"""


def test_the_efa_warning_before_a_collectives_error_is_its_cause_and_alone_is_chatter():
    failed = EFA_WARNINGS + ("2024-Jan-09 10:01:02.0140 5120:5121 ERROR   ENC:enc_init_global_comm    [nec_dev 0] failed "
                             "to create global comm\n")
    assert _top_family(failed) == "collectives-efa"
    assert analyze_text(EFA_WARNINGS + "Model loaded on 2 NeuronCores\n").findings == []


def test_a_compiler_crash_on_a_full_disk_says_so_first():
    ice = ("2026-07-01T08:13:07Z ERROR 136165 [neuronxcc.driver.CommandDriver]: {}\n" * 3).format(
        "*" * 40, " An Internal Compiler Error has occurred", "*" * 40)
    full = ice + "2026-07-01T08:13:07Z USER 136165 [neuronxcc.driver.CommandDriver]: [Errno 28] No space left on device\n"
    died, banner = analyze_text(full).findings
    assert (died.signature, died.hypotheses[0].id) == ("compiler-stage-process-died", "disk-full")
    assert banner.family == "compiler-internal-crash"  # the banner that reported it comes second
    [alone] = analyze_text(ice).findings  # the banner alone: the compiler's own failure, for want of a cause
    assert alone.family == "compiler-internal-crash" and alone.hypotheses[0].id != "compiler-host-resources"


def test_an_ice_whose_stage_died_of_a_signal_leads_with_the_death_and_one_that_reported_an_error_does_not():
    banner = "03/14/2022 09:41:27 AM ERROR 23117 [neuron-cc]:  An Internal Compiler Error has occurred\n"
    message = ("03/14/2022 09:41:27 AM ERROR 23117 [neuron-cc]: Error message:  Non-zero exit status ({}) for command: "
               "/venv/lib/python3.7/site-packages/neuroncc/starfish/bin/list_sch --hhir hh.json\n")
    for status, hypothesis in ((134, "native-stage-crash"), (139, "native-stage-crash"), (-11, "native-stage-crash")):
        top = analyze_text(banner + message.format(status)).findings[0]
        assert (top.family, top.hypotheses[0].id, top.fields["stage"]) == ("compiler-abnormal-termination", hypothesis, "list_sch")
    assert analyze_text(banner + message.format(137)).findings[0].family == "host-oom-kill"  # SIGKILL: the host's memory
    assert analyze_text(banner + message.format(1)).findings[0].family == "compiler-internal-crash"  # its own error
    pool = "03/14/2022 09:41:27 AM ERROR 23117 [neuron-cc]: Error message:  A process in the process pool was terminated abruptly\n"
    top = analyze_text(banner + pool).findings[0]
    assert (top.family, top.hypotheses[0].id) == ("compiler-abnormal-termination", "worker-lost-memory")
    # the same Python message from a program that is not the compiler is not the compiler's
    elsewhere = analyze_text("concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated "
                             "abruptly while the future was running or pending.\n").findings
    assert all(f.family != "compiler-abnormal-termination" for f in elsewhere)


def test_a_library_warning_it_copes_with_is_not_the_failure_of_a_run_that_failed_elsewhere():
    warning = ("/venv/lib/python3.12/site-packages/neuronx_distributed/modules/moe/blockwise.py:102: UserWarning: "
               "Warning: Failed to import blockwise_mm: No module named 'neuronxcc.nki._private.blockwise_mm'\n"
               '  warnings.warn(f"Warning: {error}")\n')
    failure = ("Traceback (most recent call last):\n"
               '  File "/venv/lib/python3.12/site-packages/neuronx_distributed_inference/models/model_base.py", '
               "line 310, in load_weights\n    state_dict[key]\nKeyError: 'layers.3.conv_state'\n")
    assert _top_family(warning + failure) == "model-library-error"
    assert {f.family for f in analyze_text(warning + failure).findings} == {"model-library-error"}


def test_a_compile_failure_in_general_words_is_neurons_only_in_a_run_that_involved_neuron():
    said = "RuntimeError: Compilation failed!\nCompiler exitcode: 255\n"
    assert _top_family(said) is None  # another accelerator's compiler says it in the same words
    assert _top_family("$ python trace.py   # on an inf2.xlarge with torch-neuronx\n" + said) == "framework-compile-failure"
    assert _top_family("[NCC_EXYZ901] something odd\n" + said) == "framework-compile-failure"  # a Neuron code is enough


def test_a_finding_recognised_by_its_words_carries_the_code_its_message_prints():
    """The compile cache quoting the failed compile's `[XTP002] ...`, the runtime naming NRT_STATE_CHILD: the code
    the user can search for is the finding's code; a word that only looks like one (SHA256) is not."""
    cached = (SAMPLE_LOGS / "neuron_cache_got_cached_failed_neff.log").read_text()
    assert [(f.signature, f.code) for f in analyze_text(cached).findings][:1] == [("neuron-cache-cached-failed-neff", "XTP002")]
    forked = (SAMPLE_LOGS / "nrt_state_child_after_fork.log").read_text()
    assert analyze_text(forked).findings[0].code == "NRT_STATE_CHILD"
    hashed = cached.replace("[XTP002]", "SHA256")
    assert analyze_text(hashed).findings[0].code is None



DKMS_FAILURE = """\
Building module:
cleaning build area...
'make' -j8 KERNELRELEASE=6.4.1-zen1-1-zen modules.......................(bad exit status: 2)
Error! Bad return status for module build on kernel: 6.4.1-zen1-1-zen (x86_64)
Consult /var/lib/dkms/{module}/build/make.log for more information.
"""


def test_a_dkms_build_failure_is_the_neuron_drivers_only_in_a_run_that_involved_neuron():
    assert _top_family(DKMS_FAILURE.format(module="aws-neuronx/2.19.64.0")) == "driver-install"
    for other in ("nvidia/390.157", "zfs/0.6.2", "vboxhost/7.0.8"):  # every other out-of-tree module builds so too
        assert _top_family(DKMS_FAILURE.format(module=other)) != "driver-install"


def test_cores_another_process_holds_explain_the_runtime_that_could_not_initialise_printed_above_them():
    log = ("RuntimeError: The PyTorch Neuron Runtime could not be initialized. Neuron Driver issues are logged\n"
           "to your system logs. See the Neuron Runtime's troubleshooting guide for help on this topic.\n"
           "2024-Oct-15 01:18:17.0366 260688:260689 ERROR   NRT:nrt_allocate_neuron_cores               "
           "NeuronCore(s) not available - Requested:nc6-nc6 Available:0\n")
    assert _top_family(log) == "neuroncores-in-use"
    assert "runtime-init-failure" in {f.family for f in analyze_text(log).findings}


def test_the_source_line_under_a_python_warning_is_the_warnings_not_an_error_of_its_own():
    warning = ("/venv/lib/python3.12/site-packages/neuronx_distributed/modules/moe/blockwise.py:102: UserWarning: "
               "Warning: Failed to import blockwise_mm: No module named 'neuronxcc.nki._private.blockwise_mm'\n"
               '  warnings.warn(f"Warning: {error}")\n')
    refusal = ("export attempt failed: KeyError: \"siglip is not supported yet for transformers. Only ['bert', 'albert']"
               ' are supported."\n')
    findings = analyze_text(warning + refusal).findings
    assert [f.family for f in findings] == ["model-library-error"]  # no generic finding for the echo line
    assert findings[0].hypotheses[0].id == "unsupported-configuration"
    assert not any(e.line == 2 for f in analyze_text(warning).findings for e in f.evidence)


def test_a_source_build_pip_could_not_finish_is_an_install_failure_only_when_installing_for_neuron():
    build = ("  error: subprocess-exited-with-error\n"
             "  x Getting requirements to build wheel did not run successfully.\n  | exit code: 1\n")
    for_neuron = "# pip install . --extra-index-url https://pip.repos.neuron.amazonaws.com\n" + build
    findings = analyze_text(for_neuron).findings
    assert findings[0].family == "pip-resolution" and findings[0].hypotheses[0].id == "source-build-failed"
    assert _top_family("# pip install .\n" + build) != "pip-resolution"


ENC_FAILED = "2026-Feb-04 20:51:02.701138 266303:287512 ERROR   ENC:enc_load_operations  [nec_dev 2] failed to post an operation\n"
RECOMPILING = "WARNING loader.py:211: Unable to find precompiled artifacts. Recompiling...\n"


def test_words_that_explain_a_runtime_record_are_read_around_it_not_anywhere():
    filler = "".join(f"INFO step {n} done\n" for n in range(100))
    assert _top_family(RECOMPILING + ENC_FAILED) == "mpmd-graph-mismatch"  # said together: one rank recompiled
    assert _top_family(RECOMPILING + filler + ENC_FAILED) != "mpmd-graph-mismatch"  # an hour apart: unrelated


def test_an_allocation_that_failed_goes_before_the_non_specific_status_it_ends_in():
    alloc = ("2026-Feb-04 20:51:02.534607 266303:287512 ERROR  TDRV:log_dev_mem  Failed to allocate 40.000MB "
             "(alignment: none, usage: collectives) on ND 0:NC 2\n")
    dumps = "".join(f"2026-Feb-04 20:51:02.5{n:05d} 266303:287512 ERROR  TDRV:dml_dump  Wrote nrt memory alloc debug info\n"
                    for n in range(60))
    status = "RuntimeError: nrt_execute status=1, error message=\"Non specific failure\"\n"
    findings = analyze_text(alloc + dumps + status).findings
    assert findings[0].family == "runtime-device-memory"
    # ... and the status, NRT_FAILURE's general meaning, is one line under it: one failure, one finding.
    assert "nrt-status-failure" in [w.note for w in findings[0].wrapped_by]
    assert "runtime-neff-load" not in [f.family for f in findings]


def test_a_compile_that_failed_before_someone_pressed_ctrl_c_is_the_failure():
    failed = ('RuntimeError: Compilation error occurred on Neuron for operation=torch_compile;\n'
              'error message="COMPILATION FAILED: Failed to read file: /tmp/neuron_backend/module.neff"\n')
    waited = "".join(f"INFO step {n} retrying\n" for n in range(20))
    stopped = ('Traceback (most recent call last):\n  File "run.py", line 1001, in main\n    time.sleep(10)\n'
               'KeyboardInterrupt\n')
    findings = analyze_text(failed + waited + stopped).findings
    assert [f.family for f in findings][:2] == ["framework-compile-failure", "process-hang"]
    assert not findings[1].wrapped_by  # the interrupt wraps nothing: it came after
    assert _top_family(waited + stopped) == "process-hang"  # alone, the run did not finish


def test_an_internal_code_of_an_input_component_is_unsupported_input_only_when_it_says_so():
    said = "[ERROR] [NCC_ISPP027] Reduce operation with multiple operand tensors is not\nsupported.\n"
    assert _top_family(said) == "compiler-unsupported-input"
    assert _top_family("[ERROR] [NCC_ISPP027] Reduce operation lowering failed\nunexpectedly.\n") != "compiler-unsupported-input"


def test_a_run_stopped_by_hand_whose_engine_then_reports_it_died_is_a_run_that_did_not_finish():
    stopped = ('Traceback (most recent call last):\n  File "bench.py", line 9, in main\n    time.sleep(10)\n'
               "KeyboardInterruptKeyboardInterrupt\n\n"  # two ranks' lines glued together
               "ERROR 07-01 07:13:39 [core_client.py:616] Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.\n")
    findings = analyze_text(stopped).findings
    assert findings[0].family == "process-hang"
    # Started again at a shell prompt and failing there: the interrupt is history.
    again = stopped + "ubuntu@ip-10-0-0-1:~$ python bench.py --resume\nRuntimeError: nrt_init failed. Status = 1\n"
    assert _top_family(again) != "process-hang"


def test_a_line_after_an_exception_without_a_message_is_its_message_only_when_it_is_no_record():
    log = ("RuntimeError: \nUnknown type name '__torch__.torch.classes.neuron.Model':\n"
           "ValueError: \nERROR 07-01 07:13:39 [core.py:1] Engine core died\n")
    from nforensics.parse import assemble

    parsed, _ = assemble("x", enumerate(log.splitlines(), 1))
    assert [(t.exception, t.message or None) for t in parsed.tracebacks] == [
        ("RuntimeError", "Unknown type name '__torch__.torch.classes.neuron.Model':"), ("ValueError", None)]


NEURON_CC_ICE = """\
05/24/2021 11:12:51 PM ERROR [neuron-cc]: ***************************************************************
05/24/2021 11:12:51 PM ERROR [neuron-cc]:  An Internal Compiler Error has occurred
05/24/2021 11:12:51 PM ERROR [neuron-cc]: ***************************************************************
05/24/2021 11:12:51 PM ERROR [neuron-cc]:
05/24/2021 11:12:51 PM ERROR [neuron-cc]: Error message:  Non-zero exit status ({status}) for command: /venv/lib/python3.7/site-packages/neuroncc/starfish/bin/pre_sched --hhir hh.json
05/24/2021 11:12:51 PM ERROR [neuron-cc]:
05/24/2021 11:12:51 PM ERROR [neuron-cc]: Error class:    CompilerInternalError
"""


def test_an_ice_whose_stage_the_kernel_killed_is_the_host_running_out_of_memory_first():
    killed = analyze_text(NEURON_CC_ICE.format(status=137)).findings
    assert [f.family for f in killed][:2] == ["host-oom-kill", "compiler-internal-crash"]
    assert _top_family(NEURON_CC_ICE.format(status=134)) != "host-oom-kill"  # an abort is the stage's own


def test_another_compilers_internal_compiler_error_is_not_a_neuron_compilers():
    gcc = ("numpy/core/src/umath/loops.c.src:202:20: internal compiler error: in convert_move, at expr.c:218\n"
           "Please submit a full bug report,\nlto-wrapper: fatal error: arm-linux-gnueabihf-gcc returned 1 exit status\n")
    assert _top_family(gcc) != "compiler-internal-crash"
    assert _top_family("$ neuronx-cc compile model.hlo --target trn1\ninternal compiler error: in tile_loop\n") == \
        "compiler-internal-crash"


def test_a_graph_the_compilers_frontend_could_not_read_is_an_unsupported_input():
    line = ("02/22/2022 12:27:28 PM ERROR 8902 [neuron-cc]: Failed to parse model /tmp/w/graph_def.pb: Traceback (most "
            "recent call last):\n  [bt] (0) /venv/lib/python3.7/site-packages/tvm/libtvm.so(TVMFuncCall+0x52) [0x7ff9403b7d72]\n")
    assert _top_family(line) == "compiler-unsupported-input"
    assert _top_family("onnxruntime: Failed to parse model /tmp/m.onnx: protobuf parsing failed\n") is None


def test_a_backend_stage_the_driver_saw_die_of_a_signal_is_the_processes_death():
    died = ("walrus_driver: Hwm.cpp:325: Assertion `false && \"not implemented\"' failed.\n"
            "2026-07-18T16:24:06Z ERROR [job.WalrusDriver.0]: Backend exited with code {} and stderr:\n")
    top = analyze_text(died.format(-6)).findings[0]
    assert (top.family, top.hypotheses[0].id) == ("compiler-abnormal-termination", "native-stage-crash")
    assert [e.text for e in top.hypotheses[0].evidence] == ["exit_status = -6"]  # a field cites its value
    assert analyze_text(died.format(1)).findings[0].family == "compiler-internal-crash"  # it reported its own error


def test_a_pod_no_node_can_take_is_the_device_plugins_side_and_a_container_without_devices_is_not():
    pending = ("  Warning  FailedScheduling  2m14s (x7 over 32m)  default-scheduler  0/3 nodes are available: 1 node(s) had "
               "untolerated taint {node-role: system}, 2 Insufficient aws.amazon.com/neuron.\n")
    [finding] = analyze_text(pending).findings
    assert (finding.family, finding.hypotheses[0].id) == ("kubernetes-components", "resources-not-advertised")
    container = ("$ docker run --rm -it my-image python serve.py\n"
                 "ls: cannot access '/dev/neuron*': No such file or directory\n")
    top = analyze_text(container).findings[0]
    assert (top.family, top.hypotheses[0].id) == ("device-not-visible", "devices-not-exposed")


def test_a_failure_an_envelope_wraps_on_its_own_line_is_named_and_the_envelope_folds_into_it():
    wrapped = ("NCCError: neuronx-cc compilation failed with exit code 70 stderr: [INTERNAL_ERROR] [NCC_INLA001] Unhandled "
               "exception with message: === BIR verification failed === Reason: operand 2 is not initialised\n")
    [finding] = analyze_text(wrapped).findings
    assert finding.family == "compiler-bir-verifier"
    assert any("NCC_INLA001" in w.text for w in finding.wrapped_by)
    plain = wrapped.replace("=== BIR verification failed === Reason: operand 2 is not initialised", "list index out of range")
    assert analyze_text(plain).findings[0].signature == "ncc-inla001-unhandled-exception"  # nothing inside to name


def test_wrappers_around_a_cause_nothing_names_fold_into_the_innermost_of_them():
    # "compile failed" printed first, the compiler's own F139 after it: the compiler's report is nearer the cause.
    log = ("WARNING:tensorflow:neuron-cc failed with:\n2024-08-09T13:57:35Z [F139] neuronx-cc terminated abnormally - "
           "Please open a support ticket at https://github.com/aws-neuron/aws-neuron-sdk/issues/new\n")
    without = build([s for s in KB.signatures if s.family != "compiler-abnormal-termination"], families=KB.families)
    [finding] = analyze_lines("x", enumerate(log.splitlines(), 1), kb=without).findings
    assert finding.family == "compiler-abnormal-termination"
    assert [w.text for w in finding.wrapped_by] == ["A framework or model library reports that compilation failed"]


def test_an_assertion_in_the_runtimes_own_source_is_the_process_crashing_not_the_compiler():
    compiled = "2026-Jul-02 23:05:21.595910 240915:241115  INFO  NMGR:kmgr_load_nn_post_metrics  NN: module.neff, loaded\n"
    runtime = ("python: /opt/workspace/KaenaRuntime/tdrv/tensor.c:185: tensor_set_slice: Assertion "
               "`(tensor_source->_size) >= (offset + size)' failed.\n")
    assert _top_family(compiled + runtime) == "runtime-process-crash"
    stage = ("walrus_driver: /opt/src/build/cpp/cmake/include/bir/src/Hwm.cpp:325: virtual int64_t bir::Hwm::getLatency"
             "(const bir::InstRangeSelect&) const: Assertion `false && \"not implemented\"' failed.\n")
    assert _top_family(compiled + stage) == "compiler-internal-crash"  # the compiler's own check, where it was at work


def test_a_cluster_that_cannot_place_a_request_for_neuron_cores_is_short_of_free_cores():
    ray = ("(autoscaler +20s) Error: No available node types can fulfill resource request defaultdict(<class 'float'>, "
           "{'neuron_cores': 32.0, 'CPU': 32.0}). Add suitable node types to this cluster to resolve this issue.\n")
    [finding] = analyze_text("2026-07-07 09:58:16,760 INFO worker.py:2012 -- Started a local Ray instance.\n" + ray).findings
    assert (finding.family, finding.hypotheses[0].id) == ("neuroncores-in-use", "request-exceeds-a-node")
    assert _top_family(ray.replace("neuron_cores", "GPU")) != "neuroncores-in-use"  # another accelerator's request


def test_a_sections_heading_and_a_librarys_notice_of_ignored_settings_are_no_failures():
    traced = ("=========== warnings from kernel tracing qwen.nki_rmsnorm_kernel ===========\n"
              "=========== errors from kernel tracing qwen.nki_rmsnorm_kernel ===========\n"
              "The KLR format is located at: final_klir_filepath='/tmp/klir/k.klir'\n")
    assert analyze_text(traced).findings == []  # empty sections: nothing failed
    failed = traced + ("/venv/lib/python3.12/site-packages/nkilib/core/utils/helpers.py:88:4: error: 'mod' does not "
                       "allow a zero divisor\n")
    assert _top_family(failed) == "nki-kernel-error"  # what a section holds is still read
    notice = "root: NeuronConfig init: Unexpected keyword arguments: {'mode': 'evaluate_single', 'enable_nki': True}\n"
    assert _top_family(notice) != "model-library-error"  # the library ignores them and goes on
    assert _top_family("TypeError: NeuronConfig.__init__() got an unexpected keyword argument 'mode'\n") == \
        "model-library-error"


def test_a_compilers_log_of_warnings_alone_is_no_compile_left_unfinished():
    remarks = ("2023-10-18T00:18:48Z WARNING 16718 [job.Frontend.0]: TVM not detected.\n"
               "2023-10-18T00:22:17Z WARNING 16718 [LayoutBottleneck]: Connected component _subtract.2109 has no "
               "matmult/reduce/batchnorm. Guessing layout. Considering putting on CPU.\n")
    assert analyze_text(remarks).findings == []
    progress = remarks + "2023-10-18T00:22:19Z INFO 16718 [sg0000/Tensorizer/PGTiling]: Running PGTiling\n"
    assert analyze_text(progress).findings[0].family == "process-hang"  # its progress, where the log stops


def test_torch_distributed_failing_to_start_on_the_network_is_a_collectives_bootstrap_in_a_neuron_run():
    taken = ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
             "port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use\n")
    neuron = "[train] trn2.3xlarge: torchrun --nproc_per_node=2, one rank per logical NeuronCore\n"
    assert analyze_text(neuron + taken).findings[0].family == "collectives-bootstrap"
    # On a GPU job, or any PyTorch job that says nothing of Neuron, it is not a Neuron failure.
    gpu = "[train] p4d.24xlarge: torchrun --nproc_per_node=8, one rank per GPU\n"
    assert all(f.family != "collectives-bootstrap" for f in analyze_text(gpu + taken).findings)


def test_a_model_librarys_nki_kernel_refusing_its_input_is_the_kernels_limit():
    raised = ('Traceback (most recent call last):\n'
              '  File "/opt/venv/lib/python3.12/site-packages/optimum/neuron/models/training/llama/modeling_llama.py", '
              'line 400, in forward\n    attn_output = nki_flash_attn_func(\n'
              '  File "/opt/venv/lib/python3.12/site-packages/neuronx_distributed/kernels/flash_attn.py", line 200, '
              'in nki_flash_attn_func\n    raise NotImplementedError("Only support sequence as multiples of 2K")\n'
              'NotImplementedError: Only support sequence as multiples of 2K\n')
    top = analyze_text(raised).findings[0]
    assert (top.family, top.hypotheses[0].id) == ("nki-kernel-error", "shape-outside-kernel-support")
    # The same library raising from its model code is the library's own check.
    elsewhere = raised.replace("neuronx_distributed/kernels/flash_attn.py", "neuronx_distributed/parallel_layers/layers.py")
    assert analyze_text(elsewhere).findings[0].family == "model-library-error"


def test_a_libfabric_failure_is_a_neuron_collectives_failure_only_in_a_neuron_run():
    failed = "[0000] WARN:  transport_ofi.c:656: ofi_mr_reg_external_heap\n[0000]        fi_mr_regattr (heap) failed\n"
    assert all(f.family != "collectives-efa" for f in analyze_text(failed).findings)  # SHMEM on another fabric
    neuron = "torchrun --nproc_per_node=32 train.py   # trn1.32xlarge, 32 NeuronCores\n"
    assert _top_family(neuron + failed) == "collectives-efa"


def test_pytorchs_tracer_refusing_the_model_is_model_not_traceable_only_where_the_tracer_raised():
    traced = ('>>> model = torch.neuron.trace(model, example_inputs=inputs)\nTraceback (most recent call last):\n'
              '  File "/venv/site-packages/torch_neuron/convert.py", line 228, in to_graph\n'
              '    jit_trace = torch.jit.trace(func_or_mod, example_inputs)\n'
              '  File "/venv/site-packages/torch/jit/_trace.py", line 940, in trace_module\n    _force_outplace,\n'
              "RuntimeError: Encountering a dict at the output of the tracer might cause the trace to be incorrect\n")
    top = analyze_text(traced).findings[0]
    assert (top.family, top.fields.get("raised_in")) == ("model-not-traceable", "torch/jit/_trace.py")
    # The same trace, the model's own forward raising inside it: the model failed, not the tracer's rules.
    inside = traced.replace("    _force_outplace,\n", "    _force_outplace,\n"
                            '  File "/home/u/model.py", line 12, in forward\n    x = x.view(-1, 7)\n')
    assert analyze_text(inside).findings[0].family != "model-not-traceable"


@pytest.mark.parametrize("where", ["aclrtSetDevice(deviceId) failed: 507033", "hipErrorOutOfMemory on ROCm 6.1",
                                   "[HCCL] init failed on device 3", "poplar_error: IPU 0 out of memory"])
def test_a_run_on_another_accelerator_gets_no_neuron_family(where):
    # (A serving timeout is a family in words alone; behind another accelerator's runtime it is not Neuron's.)
    failed = where + "\nRuntimeError: Timed out after 600 seconds waiting for the model server health check\n"
    assert all(f.tier == "generic" for f in analyze_text(failed).findings)
    on_neuron = failed + "2024-Jan-09 10:01:02.0140 5120:5121 ERROR   NRT:nrt_execute  failed on NeuronCore 3\n"
    assert any(f.tier != "generic" for f in analyze_text(on_neuron).findings)  # Neuron in the run: read as usual


def test_a_check_in_the_verifiers_own_source_is_the_bir_verifier_and_elsewhere_a_compiler_crash():
    """neuronx-cc's own assertion names its source file after the condition: the verifier's file places the
    failure in BIR verification, whatever the message; another file of the compiler leaves a compiler crash."""
    crash = ("neuronxcc.driver.Exceptions.CompilerInternalError  (exit code 70)\n"
             "Assertion failure: bad_use.empty()  [{}]\nDead memory locations in subgraphs nc00/sg01\n")
    assert _top_family(crash.format("inst_visitor.cpp:632")) == "compiler-bir-verifier"
    assert _top_family(crash.format("/build/neuronxcc/walrus/verifier/src/other_check.cpp:17")) == "compiler-bir-verifier"
    assert _top_family(crash.format("scheduler.cpp:632")) == "compiler-internal-crash"


@pytest.mark.parametrize(("text", "family"), [
    # NxD's sharded checkpoint loader names the key whose tensor does not fit: the model library's family.
    ("RuntimeError: Incorrect tensor shape at checkpoint key layers.0.self_attn.k_layernorm.weight:\n"
     "    received 1024, expected 128.\n", "model-library-error"),
    # PyTorch's own words for it, in a Neuron run.
    ("Compiling for trn1 with neuronx-cc\nRuntimeError: Error(s) in loading state_dict for LlamaModel:\n"
     "\tsize mismatch for embed_tokens.weight: copying a param with shape torch.Size([32000, 4096])\n", "model-library-error"),
])
def test_a_checkpoint_that_does_not_fit_the_model_is_the_model_librarys(text, family):
    assert _top_family(text) == family


@pytest.mark.parametrize("text", [
    # The same PyTorch words on a GPU run: no Neuron family.
    "RuntimeError: Error(s) in loading state_dict for ResNet:\n\tsize mismatch for fc.weight: copying a param "
    "with shape torch.Size([10, 512])\n",
    # A checkpoint key named in a success line, no exception.
    "Loaded checkpoint key layers.0.weight (received 1024 values)\n",
])
def test_checkpoint_words_without_the_failure_or_the_platform_are_not_the_model_librarys(text):
    assert _top_family(text) != "model-library-error"


def test_dockers_first_pull_notice_is_no_failure_and_a_pull_that_failed_is():
    """`docker run` prints "Unable to find image 'x' locally" before it pulls the image: the normal path."""
    run = ("$ docker run --device=/dev/neuron0 neuron-monitor:latest\n"
           "Unable to find image 'neuron-monitor:latest' locally\nlatest: Pulling from neuron-monitor\n"
           '{"neuron_runtime_data": [], "instance_info": {"instance_type": "inf1.2xlarge"}}\n')
    assert analyze_text(run).findings == []
    failed = run.replace("latest: Pulling from neuron-monitor", "docker: Error response from daemon: unable to pull "
                         "neuron-monitor:latest: manifest unknown")
    assert analyze_text(failed).findings != []


PARALLEL_COMPILE = """\
2024-02-29 04:03:01.000535:  318159  INFO ||NEURON_PARALLEL_COMPILE||: sub-process 0 got exception: Traceback (most recent call last):
  File "/home/me/venv/lib/python3.10/site-packages/libneuronxla/neuron_parallel_compile.py", line 171, in parallel_compile
    results = gather(jobs)
  File "{innermost}", line 88, in gather
    for graph, (state, tries) in statuses.items():
AttributeError: 'NoneType' object has no attribute 'items'
"""


@pytest.mark.parametrize("innermost, family", [
    ("/home/me/venv/lib/python3.10/site-packages/libneuronxla/neuron_parallel_compile.py", "framework-compile-failure"),
    ("/opt/venv/lib/python3.11/site-packages/libneuronxla/neuron_parallel_compile.py", "framework-compile-failure"),
    ("/home/me/train/collect.py", None),  # the user's own code, called from it: not the tool failing
])
def test_neuron_parallel_compile_failing_in_its_own_code_is_a_failed_compile_step(innermost, family):
    assert _top_family(PARALLEL_COMPILE.format(innermost=innermost)) == family


BANNER_FOOT = """\
{prefix}  HWM version 2.10.0.5-7b1976adf
{prefix}  NumPy version 1.21.6
{prefix}
{prefix}  Running on AMI ami-01257e71ecb2f431c
{prefix}  Running in region usw2-az4
{prefix}
{prefix}Diagnostic logs stored in /home/me/xla/log-neuron-cc.txt
', xla/src/xla_utils.rs:49:5
"""


@pytest.mark.parametrize("prefix", ["2023-09-27T22:49:19Z ", "2023-09-27T22:49:19Z USER 9513 [neuronx-cc]: ", ""])
def test_the_foot_of_an_ice_banner_alone_is_a_compiler_crash(prefix):
    """A paste that keeps only the banner's version block and the logs line (its rows above were cut) is
    still the compiler failing inside itself: only an internal error prints that block."""
    assert _top_family(BANNER_FOOT.format(prefix=prefix)) == "compiler-internal-crash"


@pytest.mark.parametrize("text", [
    BANNER_FOOT.format(prefix="").replace("Diagnostic logs stored in /home/me/xla/log-neuron-cc.txt", "done"),  # --version
    "Diagnostic logs stored in /home/me/xla/log-neuron-cc.txt\n",  # a user error's report ends so too: no crash
    BANNER_FOOT.format(prefix="").replace("Running in region usw2-az4\n", "Running in region usw2-az4\n" + "x = 1\n" * 8),
])
def test_a_version_listing_or_a_logs_line_alone_is_no_compiler_crash(text):
    assert _top_family(text) != "compiler-internal-crash"


PYTEST_TRACEBACK = """\
=================================== FAILURES ===================================
    ???
{library}/_torch_xla.py:129: in {module}._torch_xla.PyTorchXLAKernel.__call__
    ???
{library}/compiler/backends/neuron/TraceKernel.py:409: in {module}.compiler.backends.neuron.TraceKernel.expand
    ???
{caller}
E   AssertionError: slice with variable size is not supported
"""


_KERNEL_CALLER = "trnfft/fft/dispatch.py:272: in _complex_mul\n    ar = torch.mul(a_re_2d[:, f_off:f_end], b)"


@pytest.mark.parametrize("library, module, family", [
    ("neuronxcc/nki", "neuronxcc.nki", "nki-kernel-error"),
    ("/opt/venv/lib/python3.12/site-packages/neuronxcc/nki", "neuronxcc.nki", "nki-kernel-error"),
    ("mylib/kernels", "mylib.kernels", None),  # the same test failing in a library of its own
])
def test_pytest_frames_are_read_as_the_traceback_they_are(library, module, family):
    assert _top_family(PYTEST_TRACEBACK.format(library=library, module=module, caller=_KERNEL_CALLER)) == family


NUMPY_ICE = """\
ERROR 227874 [neuronx-cc]: ***************************************************************
ERROR 227874 [neuronx-cc]:  An Internal Compiler Error has occurred
ERROR 227874 [neuronx-cc]: ***************************************************************
ERROR 227874 [neuronx-cc]: Error message:  {owner} has no attribute '{name}'
ERROR 227874 [neuronx-cc]: Error class:    AttributeError
"""


@pytest.mark.parametrize("owner, name, family", [
    ("module 'numpy'", "asscalar", "version-skew"),  # the library moved on: the skew is the cause of the crash
    ("module 'scipy'", "misc", "version-skew"),
    ("'NoneType' object", "shape", "compiler-internal-crash"),  # a bug in the compiler's own code
])
def test_a_library_api_missing_under_the_compiler_is_a_version_skew_first(owner, name, family):
    assert _top_family(NUMPY_ICE.format(owner=owner, name=name)) == family


def test_a_package_written_for_another_python_is_a_version_skew_in_a_neuron_run():
    moved = "ImportError: cannot import name 'Mapping' from 'collections' (/usr/lib/python3.10/collections/__init__.py)\n"
    assert _top_family("$ pip list | grep neuron\ntorch-neuronx 2.1.2.2.3.0\n" + moved) == "version-skew"
    assert _top_family(moved) != "version-skew"  # nothing says the run involved Neuron (see the near misses above)


@pytest.mark.parametrize("text, family", [
    ("[DVR002] Internal transformation failed\n", "compiler-internal-crash"),
    ("2024-01-01T00:00:00Z ERROR 7 [neuronx-cc]: [DVR002] Internal transformation failed\n", "compiler-internal-crash"),
    ("The release notes say DVR002 was fixed in 2.15 and the upgrade went fine.\n", None),  # a mention, no failure
])
def test_the_compilers_bare_internal_transformation_code_is_its_crash(text, family):
    assert _top_family(text) == family


@pytest.mark.parametrize("text, family", [
    ("ValueError: nc_matmul dst dtype must be float32 on gen2\n", "nki-kernel-error"),
    ("AssertionError: nisa.nc_transpose expected a tile of at most 128 partitions\n", "nki-kernel-error"),
    # The compiler's own matmul instruction failing in BIR is no kernel's ISA call.
    ("RuntimeError: MatMult instruction failed the BIR verifier: expected partition start 0\n", None),
])
def test_an_nki_isa_call_named_in_a_failure_is_the_kernels(text, family):
    top = analyze_text(text).findings
    assert (top[0].family if top and top[0].tier != "generic" and top[0].family == "nki-kernel-error" else None) == family


def test_protobuf_refusing_old_generated_code_is_a_version_skew_in_a_neuron_run():
    refused = ("TypeError: Descriptors cannot be created directly.\nIf this call came from a _pb2.py file, your "
               "generated code is out of date and must be regenerated with protoc >= 3.19.0.\n")
    assert _top_family("$ pip list | grep neuron\ntorch-neuronx 1.13.1.1.9.0\n" + refused) == "version-skew"
    assert _top_family(refused) != "version-skew"  # nothing says the run involved Neuron


NOTHING_PARTITIONED = ("RuntimeError: No operations were successfully partitioned and compiled to neuron for this model "
                       "- aborting trace!\n")


def test_a_trace_that_placed_no_operator_on_neuron_is_an_unsupported_model():
    assert _top_family(NOTHING_PARTITIONED) == "framework-unsupported-op"
    # The compiler failing on the partitions is what failed, where the log shows it.
    ice = ("02/22/2022 12:27:28 PM ERROR [neuron-cc]: ***************************************************************\n"
           "02/22/2022 12:27:28 PM ERROR [neuron-cc]:  An Internal Compiler Error has occurred\n"
           "02/22/2022 12:27:28 PM ERROR [neuron-cc]: ***************************************************************\n"
           "02/22/2022 12:27:28 PM ERROR [neuron-cc]: Error class:    AssertionError\n")
    assert _top_family(ice + NOTHING_PARTITIONED) == "compiler-internal-crash"
    # The near miss: a trace that placed every operator.
    assert _top_family("INFO:Neuron:All operations were successfully partitioned and compiled to neuron for this model\n") is None


IMPORT_WARNING = ("/v/lib/python3.12/site-packages/neuronx_distributed/modules/moe/blockwise.py:102: UserWarning: Warning: "
                  "Failed to import blockwise_mm_bwd: No module named 'neuronxcc.nki._private.blockwise_mm_bwd'\n"
                  '  warnings.warn(f"Warning: {error}")\n')


def test_a_run_that_printed_python_warnings_and_went_on_has_no_failure():
    """Also the warning's second print, which the flood shortcut does not parse again."""
    finished = IMPORT_WARNING + "Neuron: Skipping model warmup\n" + IMPORT_WARNING + "[wan] video saved to /tmp/v.mp4\n"
    assert [f for f in analyze_text(finished).findings if f.severity == "error"] == []
    # The near miss: the same words raised, not warned.
    raised = "ModuleNotFoundError: No module named 'neuronxcc.nki._private.blockwise_mm_bwd'\n"
    assert _top_family(IMPORT_WARNING + raised) is not None


def test_the_hub_cache_refusing_a_push_is_a_compile_cache_access_failure():
    refused = ("Could not push the cached model to the repo aws-neuron/optimum-neuron-cache, most likely due to not "
               "having the write permission for this repo. Exact error: 401 Client Error.\n")
    assert _top_family(refused) == "compile-cache-access"
    assert _top_family("Pushed the cached model to the repo aws-neuron/optimum-neuron-cache.\n") is None


def test_a_runtime_that_does_not_know_the_devices_architecture_is_version_skew():
    line = "2024-Dec-23 22:35:20.691409 28490:28590 ERROR  TDRV:arch_init                 Architecture not found 1\n"
    assert _top_family(line) == "version-skew"
    # A model's architecture a library does not know is no runtime's.
    assert _top_family("ValueError: Model architecture not found in the registry\n") != "version-skew"


def test_a_pip_install_a_build_step_ran_that_failed_is_an_install_failure_not_a_compile():
    step = ('ERROR: failed to solve: process "/bin/sh -c pip3 install --no-cache-dir neuronx-cc[tensorflow] torch-neuronx" '
            "did not complete successfully: exit code: 1\n")
    assert _top_family(step) == "pip-resolution"
    assert _top_family(step.replace("pip3 install --no-cache-dir", "neuronx-cc compile --framework XLA")) != "pip-resolution"


def test_logrus_errors_are_the_profilers_only_in_a_run_that_involved_it():
    line = "ERRO[0004] Processing failed, exiting\n"
    assert _top_family("$ neuron-profile view -n file.neff -s profile.ntff\n" + line) == "profiler-tools"
    assert _top_family("ERRO[0000] error waiting for container: context canceled\n") != "profiler-tools"


def test_a_setting_a_library_says_it_will_ignore_is_no_failure():
    notice = "Pin memory is not supported on Neuron and will be ignored.\n"
    assert _top_family(notice) is None
    assert _top_family(notice.replace(" and will be ignored", "")) == "model-library-error"
    # A failure that mentions something ignored is still a failure.
    failed = "neuronx-cc failed: SBUF allocation failed; the flag --O3 is ignored\n"
    assert _top_family(failed) == "framework-compile-failure"
    failed = "neuronx-cc: compilation failed; option foo is unknown and will be ignored\n"
    assert _top_family(failed) == "framework-compile-failure"


def test_a_log_that_ends_waiting_for_a_cache_entrys_lock_is_the_caches():
    wait = ("2026-07-12 05:{:02d}:10.000181:  7816  [INFO]: Another process must be compiling /var/tmp/neuron-compile-cache/"
            "neuronxcc-2.26.6360.0+6f180f47/MODULE_33496b7f+d6b08f8e/model.hlo_module.pb, been waiting for: {}.0 minutes\n")
    top = analyze_text("".join(wait.format(m, 830 + m) for m in range(6))).findings[0]
    assert (top.family, top.hypotheses[0].id) == ("compile-cache-access", "stale-lock-or-partial-entry")
    # The near miss: a loop waiting for anything else is a hang.
    other = "".join(f"Waiting for the server to start, {m} s\n" for m in range(6))
    assert _top_family(other) == "process-hang"


@pytest.mark.parametrize("cut", [1, 40, 120, 213])
def test_a_cache_lock_wait_whose_last_line_the_paste_cut_is_still_the_caches(cut):
    wait = ("2026-07-12 05:{:02d}:10.000181:  7816  [INFO]: Another process must be compiling /var/tmp/neuron-compile-cache/"
            "neuronxcc-2.26.6360.0+6f180f47/MODULE_33496b7f+d6b08f8e/model.hlo_module.pb, been waiting for: {}.0 minutes\n")
    log = "".join(wait.format(m, 830 + m) for m in range(6)) + wait.format(7, 837)[:cut] + "\n"
    assert _top_family(log) == "compile-cache-access"


KUBECTL_DAEMONSETS = """\
$ kubectl get daemonset -A
NAMESPACE     NAME                             DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE
kube-system   aws-node                         2         2         2       2            2           <none>          12m
kube-system   neuron-device-plugin-daemonset   2         2         {ready}       2            {ready}           <none>          2m
"""


@pytest.mark.parametrize(("log", "broken"), [
    (KUBECTL_DAEMONSETS.format(ready=0), True),
    (KUBECTL_DAEMONSETS.format(ready=2), False),  # every desired pod ready
    (" ".join(KUBECTL_DAEMONSETS.format(ready=0).split("\n")), True),  # the table pasted as one line
    ("NAME                          READY   STATUS             RESTARTS   AGE\n"
     "neuron-device-plugin-x7k2p    0/1     CrashLoopBackOff   5          3m\n", True),
    ("NAME                          READY   STATUS    RESTARTS   AGE\n"
     "neuron-device-plugin-x7k2p    1/1     Running   0          3m\n", False),
    ("Name:           neuron-device-plugin-daemonset\nSelector:       name=neuron-device-plugin-ds\n"
     "Desired Number of Nodes Scheduled: 0\nCurrent Number of Nodes Scheduled: 0\n", True),  # scheduled nowhere
    ("Name:           neuron-device-plugin-daemonset\nDesired Number of Nodes Scheduled: 2\n", False),
    ("Name:           fluent-bit\nDesired Number of Nodes Scheduled: 0\n", False),  # not a Neuron component
])
def test_kubectl_showing_a_neuron_component_not_running_is_the_components_failure(log, broken):
    assert (_top_family(log) == "kubernetes-components") is broken


_ENC_HEAD = "2025-Feb-03 11:20:41.000512 4242:4250 ERROR  ENC:{function} [nec_dev 3] {message}\n"
_LOAD_FAILED = "2025-Feb-03 11:20:41.000900 4242:4250 ERROR  NMGR:kmgr_load_nn_post_metrics Failed to load NN: /tmp/m.neff, err: 1\n"


@pytest.mark.parametrize("message", [
    "mismatching number of cc ops, expected 40 received 38. Check if ranks 0 and 5 are using the same neff",
    "rank 2 loaded a different NEFF: collective op count mismatch across the replica group",
])
def test_of_two_families_on_one_runtime_line_the_rule_that_met_more_conditions_names_it(message):
    # Any ENC record is a collectives set-up for collectives-bootstrap (one condition); MPMD needs the record
    # and its words. Equally confident, the narrower rule wins, ahead of the load failure it causes.
    log = _ENC_HEAD.format(function="validate_neff_cc_ops", message=message) + _LOAD_FAILED
    assert analyze_text(log).findings[0].family == "mpmd-graph-mismatch"


def test_an_enc_record_without_words_of_a_mismatch_stays_a_collectives_set_up():
    log = _ENC_HEAD.format(function="enc_init_comm", message="failed to create the ring over 32 ranks") + _LOAD_FAILED
    families = [f.family for f in analyze_text(log).findings]
    assert "collectives-bootstrap" in families and "mpmd-graph-mismatch" not in families


def test_a_legacy_daemon_status_is_read_by_its_name_not_by_its_number():
    # A daemon number no public log pins (7 is NRT_QUEUE_FULL in NRT's own enum) does not override the name.
    log = ("RuntimeError: NeuronDevice::process_nrtd_response: Context=NRTD_CTX_INITIALIZE NRTD response code "
           "'NERR_RESOURCE_NC' (7) There were insufficient NCs for the requested model\n")
    top = analyze_text(log).findings[0]
    assert (top.family, top.signature) == ("neuroncores-in-use", "nrt-load-not-enough-neuroncores")


@pytest.mark.parametrize(("code", "family"), [
    ("NCC_IBVF038", "compiler-bir-verifier"),  # the verifier rejected an instruction: internal
    ("NCC_IBVF112", "compiler-bir-verifier"),
    ("NCC_EBVF031", "compiler-resource-limit"),  # its user-facing (E) checks are the instruction limit
])
def test_a_backend_verifier_code_is_placed_by_its_class_letter(code, family):
    top = analyze_text(f"[INTERNAL_ERROR] [{code}] TensorReduce on partition 3 requires dtype in (uint8, uint16)\n").findings[0]
    assert (top.tier, top.family) == ("family", family)


@pytest.mark.parametrize("log", [
    # the inf1 daemon's words (it printed no level), then its summary of the init failure
    "nrtd[1791]: [TDRV:tdrv_init_mla_phase1] Could not open the device index:0\n"
    "nrtd[1791]: [TDRV:tdrv_destroy] TDRV not initialized\n"
    "nrtd[1791]: [NRTD:InitTongas] Failed to initialize devices, error:1\n",
    "2025-Mar-02 08:00:01.000100 4242:4242 ERROR  TDRV:tdrv_open_devices Unable to open device /dev/neuron5\n"
    "2025-Mar-02 08:00:01.000300 4242:4242 ERROR   NRT:nrt_init Failed to initialize devices, error:1\n",
])
def test_the_driver_layer_failing_to_open_a_device_is_the_cause_of_the_init_failure(log):
    findings = analyze_text(log).findings
    assert [f.family for f in findings[:2]] == ["device-not-visible", "runtime-init-failure"]


def test_the_driver_layer_failing_to_open_something_else_is_not_a_missing_device():
    log = "2025-Mar-02 08:00:01.000100 4242:4242 ERROR  TDRV:tdrv_load_fw Could not open firmware file fw.bin\n"
    assert "device-not-visible" not in [f.family for f in analyze_text(log).findings]


def test_the_compilers_progress_lines_are_no_failure_whatever_their_words():
    executing = ("2026-01-21T05:40:14Z INFO 6599 [job.HLOToTensorizer.0]: Executing: /opt/venv/neuronxcc/starfish/bin/hlo2penguin "
                 "--input /tmp/m/model --output penguin.py --verbose=error --logfile=/tmp/log-neuron-cc.txt\n")
    done = "2026-01-21T05:40:15Z INFO 6595 [root]: Subcommand returned with exitcode=0\n"
    assert analyze_text(executing + done).findings == []
    # The same words at the compiler's error level are its failure.
    failed = executing.replace(" INFO ", " ERROR ").replace("Executing:", "neuronx-cc failed running")
    assert "framework-compile-failure" in [f.family for f in analyze_text(failed).findings]


def test_in_a_notebook_stream_the_compilers_error_beside_its_progress_is_still_read():
    # A saved notebook holds every line of the output under one line number: the progress line is skipped by
    # its own head, not by the number it shares with the error.
    lines = ["2024-10-28T17:46:40Z ERROR 9958 [WalrusDriver]: The number of instructions generated (11843392) exceeds "
             "the maximum allowed per NEFF (5000000).\n",
             "2024-10-28T17:46:40Z INFO 9958 [root]: Subcommand returned with an error\n"]
    cell = json.dumps({"name": "stderr", "output_type": "stream", "text": lines}) + "\n"
    assert analyze_text(cell).findings[0].family == "compiler-resource-limit"


def test_a_frameworks_information_line_may_still_say_what_failed():
    # torch-neuron prints its conversion failures at INFO level.
    log = ("INFO:Neuron:PyTorch to TF conversion failed to resolve function on aten::avg_pool2d with inputs [2, 2]\n"
           "WARNING:Neuron:torch.neuron.trace failed on _NeuronGraph$12; falling back to native python function call\n")
    assert [f.family for f in analyze_text(log).findings] == ["framework-unsupported-op"]


@pytest.mark.parametrize("line", [
    "2023-08-02 11:20:10.000100: INFO ||PARALLEL||: worker 3 exited with exit code 137",  # at INFO: still read
    "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137",
])
def test_an_exit_code_of_128_plus_sigkill_is_a_kill(line):
    assert analyze_text(line + "\n").findings[0].family == "host-oom-kill"


def test_an_ordinary_exit_code_is_no_kill():
    families = [f.family for f in analyze_text("2023-08-02 11:20:10.000100: INFO ||PARALLEL||: worker 3 exited with exit code 1\n").findings]
    assert "host-oom-kill" not in families


_MARK_STEP = ('Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    xm.mark_step()\n'
              '  File "/venv/lib/python3.10/site-packages/torch_xla/core/xla_model.py", line 1055, in mark_step\n'
              "    torch_xla._XLAC._xla_step_marker(\n")


def test_a_runtime_failure_raised_through_torch_xlas_step_is_the_runtimes_not_the_plugins():
    # Every execution's error surfaces at mark_step in torch-xla's device layer: what it says decides the family.
    failed = "RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: nrt_tensor_allocate failed: out of device memory on NeuronCore 0\n"
    assert _top_family(_MARK_STEP + failed) == "runtime-device-memory"
    # ... and a device the process cannot have is still the plugin's set-up.
    assert _top_family(_MARK_STEP + "RuntimeError: Invalid device format: cpu\n") == "framework-plugin-setup"


def test_a_lock_file_the_process_had_no_descriptor_for_blames_the_open_files_limit():
    log = ("F0301 08:06:15.515834   72588 neuron_compiler.cc:200] Check failed: fd != -1 could not open the lock file "
           "(errno 24)\n")
    top = analyze_text(log).findings[0]
    assert (top.family, top.hypotheses[0].id) == ("compile-cache-access", "out-of-file-descriptors")
    # A lock that was there but could not be taken is another worker's, not the limit's.
    stale = "RuntimeError: could not open the lock file of neuron-compile-cache/MODULE_42: it is held by pid 7\n"
    assert analyze_text(stale).findings[0].hypotheses[0].id != "out-of-file-descriptors"


def test_a_rule_word_that_starts_with_a_space_is_refused_where_it_could_never_match():
    from pydantic import ValidationError

    from nforensics.knowledge.family_schema import Detect

    # Words match where a token starts: " nd" never matched "Could not open the nd1".
    with pytest.raises(ValidationError, match="cannot begin with a space"):
        Detect.model_validate({"words": [["could not open"], [" nd"]]})
    assert Detect.model_validate({"words": [["could not open"], ["nd"]]}).words == [["could not open"], ["nd"]]
    nd = "2024-Apr-18 07:55:19.0420 11802:11802 ERROR  TDRV:tdrv_init_mla_phase1     Could not open the nd1\n"
    findings = analyze_lines("x", enumerate(nd.splitlines(), 1), kb=_without_signatures()).findings
    assert findings[0].family == "device-not-visible"  # the family's own rule, no signature's


@pytest.mark.parametrize("text, family", [
    # A NEFF from another compiler release than the runtime knows, in the runtime's own records.
    ("2025-Oct-02 08:10:11.000002 1201:1201 ERROR  NEFF:neff_load_header   this NEFF (NEFF version: 3.1) is not "
     "supported by the runtime\n", "version-skew"),
    ("2025-Oct-02 08:10:11.000002 1201:1201 ERROR  TDRV:decode_instr   neff uses opcode 0x7c, unsupported by this "
     "runtime; upgrade aws-neuronx-runtime-lib\n", "version-skew"),
    ("2025-Oct-02 08:10:11.000002 1201:1201 ERROR  NMGR:load_model   refusing incompatible NEFF /tmp/m.neff\n",
     "version-skew"),
    # The runtime's API names are Neuron's: 'OFI ... failed is EFA enabled?' needs no other word for it.
    ("(node 1) RuntimeError: OFI plugin initNet() failed is EFA enabled? in nrt_load_collectives\n", "collectives-efa"),
    # A kernel's own error that ends with advice ("use the default ..."): the advice is no replacement.
    ("ERROR: nki.language.matmul failed: the moving tensor's partition dimension 256 exceeds 128; use the default "
     "tile size\n", "nki-kernel-error"),
    # A kill the reporter puts down to the host's memory.
    ("2026-01-05T10:00:00Z [F137] neuronx-cc was killed by the system - most likely not enough memory on the host\n",
     "host-oom-kill"),
    # NKI's own module that no longer has (or does not yet have) an API.
    ("AttributeError: module 'nki' has no attribute 'benchmark_kernel'\n", "nki-kernel-error"),
])
def test_families_hold_new_wordings_of_failures_their_signatures_know(text, family):
    findings = analyze_lines("x", enumerate(text.splitlines(), 1), kb=_without_signatures()).findings
    assert findings and findings[0].family == family


@pytest.mark.parametrize("text, not_family", [
    # An engine's abort during execution is no DMA limit; nor is GPSIMD's print queue.
    ("2024-Dec-17 03:58:40.0110 7401:7432 ERROR  TDRV:dma_check_abort   [MLA 0][NC 0] DMA TX engine 0 is in an abort "
     "state\n", "runtime-dma-limits"),
    ("2023-Jan-06 22:28:01.0845 137472:137472 ERROR TDRV:pool_stdio_queue_consume_all_entries  Printing stderr from "
     "GPSIMD: failed\n", "runtime-dma-limits"),
    # A NEFF for another NeuronCore generation or instance is no release skew, whatever its path says.
    ("2026-May-02 14:03:58.114021  9311:9311  ERROR  NRT:nrt_load   Failed to load NEFF /home/u/vit_feature_extractor/"
     "version_2/model.neff: this NEFF targets trn2 and is not supported on this instance (trn1)\n", "version-skew"),
    # A package manager's lock in a run that installs Neuron's packages is no compile cache's.
    ("$ apt-get install -y aws-neuronx-dkms\nE: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: "
     "Permission denied)\n", "compile-cache-access"),
    # Another program's runtime state, and a data loader out of file descriptors in a torchrun job.
    ("java.lang.IllegalStateException: Unexpected runtime state RUNNING for job 7f3a\n", "runtime-init-failure"),
    ("[rank3]: RuntimeError: Too many open files. Communication with the workers is no longer possible. Please "
     "increase the limit using `ulimit -n`\n", "collectives-bootstrap"),
    # An NKI kernel a library falls back from, beside a tensorizer error of the compile: not the kernel's.
    ("2024-08-20 09:41:03,000 - neuronx_distributed_inference - WARNING - NKI kernel flash_fwd is not supported for "
     "this head size, falling back\n2024-08-20T09:41:05Z ERROR 7 [neuronx-cc]: [TEN404] Internal tensorizer error: "
     "NeuronValueNumbering: insert at end\n", "nki-kernel-error"),
    # Out of bounds as the compiler's checks found it, building the program: no execution.
    ("=== BIR error === Reason: Access pattern out of bound. Instruction: I-5 Opcode: TensorCopy\n",
     "runtime-execution-error"),
    ("2026-03-01T10:00:00Z ERROR 7 [neuronx-cc]: [NCC_INLA001] Allocated memory out of bound for tensor t5 in kernel "
     "execution plan\n", "runtime-execution-error"),
    # A NEFF for another NeuronCore generation is no release skew, whatever its path says ("model.MODULE_...").
    ("2026-May-02 14:03:58.114021  9311:9311  ERROR  NRT:nrt_load   Failed to load NEFF /tmp/w/model.MODULE_1a93+e9e5"
     ".neff: Unsupported instruction (shared memory instruction not supported on NeuronCore v2)\n", "version-skew"),
    # Waiting for the other ranks at a barrier, or another accelerator's device held: no NeuronCores in use.
    ("[rank1]: RuntimeError: Timed out after 1800 s waiting for the other processes to reach "
     "accelerator.wait_for_everyone()\n", "neuroncores-in-use"),
    ("ERROR: the accelerator is busy: another process (pid 4121) holds GPU 0\n", "neuroncores-in-use"),
    # A user's own class calling what its base never had, in a Neuron run with no Neuron library in it.
    ("2026-08-06 10:00:00 INFO torch_neuronx: compiling for trn1\nTraceback (most recent call last):\n  File "
     '"/home/u/mymodel.py", line 40, in forward\n    h = super().my_helper(x)\nAttributeError: \'super\' object has no '
     "attribute 'my_helper'\n", "version-skew"),
    # A device mesh, or a CUDA device, that a user's script could not set up on a Neuron host.
    ("INFO torch_neuronx: trn1.32xlarge\nRuntimeError: Failed to initialize device mesh: world size 32 is not "
     "divisible by mesh shape (3, 11)\n", "runtime-init-failure"),
    ("INFO torch_neuronx: trn1.32xlarge\nRuntimeError: Failed to initialize CUDA device: no CUDA-capable device is "
     "detected\n", "runtime-init-failure"),
    # The compiler warning of an index that may go out of bounds: a compile, not an execution.
    ("2026-03-01T10:00:00Z ERROR 7 [neuronx-cc]: Indirect DMA index may be out of bounds for tensor t5 (dynamic slice "
     "on axis 0)\n", "runtime-execution-error"),
    # An inference call that failed once and was retried, then succeeded.
    ("2022-05-26 01:44:11.574098: E tensorflow/neuron/runtime/model.cc:706] nrt::infer_wait failed once with grpc "
     "status code 14, retrying\n2022-05-26 01:44:12.000000: I tensorflow/neuron/runtime/model.cc:710] inference "
     "succeeded after retry\n", "runtime-execution-error"),
    # Another command's usage status, read as an exit status: not the compiler's command line.
    ("subprocess.CalledProcessError: Command '['make', '-C', 'ext']' returned non-zero exit status 2.\n",
     "compiler-arguments"),
    # A library that went on with another implementation, in any words, beside the compiler's own error.
    ("ERROR:neuronx_distributed_inference:Failed to import NKI kernel flash_fwd (No module named 'neuronxcc.nki._x'), "
     "using XLA attention instead\n2026-07-01T10:00:00Z ERROR 8 [neuronx-cc]: [ERROR] [NCC_EVRF001] Operator "
     "'rng-bit-generator' is not supported\n", "nki-kernel-error"),
    # A library's warning that an NKI module failed to import, beside a compiler error: not the kernel's.
    ("/venv/lib/python3.12/site-packages/neuronx_distributed/modules/moe/blockwise.py:102: UserWarning: Failed to import "
     "blockwise_mm: No module named 'neuronxcc.nki._private'\n2026-06-13T11:41:38Z ERROR 35061 [neuronx-cc]: [ERROR] "
     "[NCC_EVRF007] Instructions generated by compiler 6,101,424 exceeds the typical limit\n", "nki-kernel-error"),
])
def test_and_do_not_take_what_only_resembles_them(text, not_family):
    findings = analyze_lines("x", enumerate(text.splitlines(), 1), kb=_without_signatures()).findings
    assert not findings or findings[0].family != not_family


def test_each_runtime_api_is_one_familys_to_account_for():
    # A catch-all status takes the family of the call that returned it: two families may not both claim a call.
    listed = [api for family in KB.families.values() for api in family.runtime_apis]
    assert listed and len(listed) == len(set(listed))


def test_a_compiler_check_naming_an_nki_kernel_gives_the_kernels_family_beside_the_check():
    coded = ("2026-07-01T10:00:00Z ERROR 8 [neuronx-cc]: [ERROR] [NCC_EVRF070] NKI kernel 'rms_norm' uses a tile shape "
             "the target cannot run\n")
    findings = analyze_lines("x", enumerate(coded.splitlines(), 1), kb=_without_signatures()).findings
    # (the kernel's account narrows the refused input's: one finding, the kernel's)
    assert [f.family for f in findings] == ["nki-kernel-error"]
    assert _top_family(coded) == "nki-kernel-error"


@pytest.mark.parametrize("notice", [
    "ERROR:neuronx_distributed_inference:Failed to import NKI kernel flash_fwd (No module named "
    "'neuronxcc.nki._private_kernels'), using the native implementation",
    "2024-08-20 09:41:03,000 - neuronx_distributed_inference - ERROR - nki_flash_attn failed for this head size, "
    "falling back to the default attention",
    "WARNING:nxdi:NKI kernel flash_fwd could not be used (failed import of neuronxcc.nki), fell back to native attention",
    "ERROR:neuronx_distributed_inference:Failed to import NKI kernel flash_fwd (No module named 'neuronxcc.nki._x'), "
    "using XLA attention instead",
])
def test_a_kernel_a_library_replaced_is_no_kernel_failure_beside_the_compilers_own_error(notice):
    other = "2026-07-01T10:00:00Z ERROR 8 [neuronx-cc]: [ERROR] [NCC_EVRF001] Operator 'rng-bit-generator' is not supported\n"
    findings = analyze_text(notice + "\n" + other).findings
    assert findings[0].signature == "ncc-evrf001-unsupported-operator"
    assert "nki-kernel-error" not in {f.family for f in findings}
    if "ERROR" in notice:  # The same kernel failing, with nothing to say the library went on without it, is its failure.
        failed = notice.split(", using")[0].split(", fall")[0]
        assert analyze_text(failed + "\n" + other).findings[0].family == "nki-kernel-error"


def _faulthandler(outermost: str) -> str:
    return ("Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n"
            '  File "/usr/lib/python3.10/concurrent/futures/process.py", line 246 in _process_worker\n'
            '  File "/usr/lib/python3.10/multiprocessing/process.py", line 108 in run\n'
            f'  File "{outermost}", line 8 in <module>\n')


def test_a_signal_that_killed_the_compilers_interpreter_is_the_compilers_death_not_the_applications():
    assert _top_family(_faulthandler("/opt/venv/bin/neuronx-cc")) == "compiler-abnormal-termination"
    # (with the compiler's own modules on the stack, it is its crash as well)
    assert _top_family(_faulthandler("/opt/venv/lib/python3.10/site-packages/neuronxcc/driver/CommandDriver.py")) in (
        "compiler-abnormal-termination", "compiler-internal-crash")
    # The same report from the user's own script running the model is the application's crash.
    assert _top_family(_faulthandler("/home/u/serve.py").replace("concurrent/futures/process.py",
                                                                  "site-packages/torch_xla/core/xla_model.py")) == "runtime-process-crash"


def test_huge_pages_the_runtime_could_not_reserve_lead_to_reserving_more():
    log = ("Apr 2 23:56:57 ip-172-31-12-231 nrtd[22209]: [TDRV:hugetlb_cache_init] Failed to mmap huge page 257 out "
           "of requested 512\nApr 2 23:56:57 ip-172-31-12-231 nrtd[22209]: [TDRV:tdrv_init] Attempt to preallocate "
           "512 hugetlb pages failed, required 512 pages per device\n")
    [finding] = analyze_text(log).findings
    assert (finding.family, finding.hypotheses[0].id) == ("runtime-device-memory", "host-huge-pages-short")
    # Where it names no huge pages, the initialisation that failed is all the log says.
    other = log.split("\n")[1].replace("preallocate 512 hugetlb pages", "open the device").split(", required")[0]
    assert analyze_text(other).findings[0].family == "runtime-init-failure"


def test_a_base_class_method_gone_under_a_neuron_library_is_its_neighbours_release():
    log = ("/opt/aws_neuronx_venv_pytorch_2_7/lib/python3.10/site-packages/neuronx_distributed_inference/utils/"
           "hf_adapter.py:88: UserWarning: adapter in use\nERROR:server:Generation failed: 'super' object has no "
           "attribute 'sample'\n")
    [finding] = analyze_text(log).findings
    assert (finding.family, finding.hypotheses[0].id) == ("version-skew", "neighbour-library-release")
    # A user's own class calling a method its base never had, in a run with no Neuron in it, is no release skew.
    assert _top_family(log.split("\n", 1)[1]) != "version-skew"


def test_an_allocation_that_failed_after_the_runtime_did_not_initialise_is_not_its_cause():
    log = ("2024-Jan-05 10:00:00.000100 1234:1234 ERROR  NRT:nrt_init   Failed to initialize devices, error:5\n"
           "2024-Jan-05 10:00:01.000000 1234:1234 ERROR  NRT:nrt_allocate_tensor   Failed to allocate tensor: runtime "
           "not initialized\n")
    assert analyze_text(log).findings[0].family == "runtime-init-failure"


def test_a_replayed_failure_leads_with_the_replay_whichever_of_them_a_signature_knows():
    log = ("2024-11-04 16:20:31.000233:  88412  ERROR ||NEURON_CC_WRAPPER||: Got a cached failed neff at /var/tmp/neuron-"
           "compile-cache/neuronxcc-2.15.141.0+d3cfc8ca/MODULE_5a17+4497a662/model.neff. Will skip compilation\n"
           "2024-11-04 16:20:31.000300:  88412  ERROR ||NEURON_CC_WRAPPER||: [TEN404] (aten__mul_mul.20814) Internal "
           "tensorizer error: NeuronValueNumbering:insertAtEnd(): incompatible function arguments\n")
    without_replay = build([s for s in KB.signatures if s.family != "compile-cache-replay"], families=KB.families)
    findings = analyze_lines("x", enumerate(log.splitlines(), 1), kb=without_replay).findings
    assert [f.family for f in findings][:2] == ["compile-cache-replay", "compiler-tensorizer"]
    # Without the replay, the stored error is the failure.
    alone = analyze_lines("x", enumerate(log.splitlines()[1:], 1), kb=without_replay).findings
    assert alone[0].family == "compiler-tensorizer"
    # A compile's own error, then a later run replaying it: the replay did not bring that error about.
    later = "\n".join(log.splitlines()[::-1]) + "\n"
    assert analyze_text(later).findings[0].family == "compiler-tensorizer"

