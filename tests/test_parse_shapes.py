"""The shapes users paste, read into records: each test gives a synthetic input in one shape, checks the record a
user's finding rests on, and checks a near miss that must not produce it."""

from __future__ import annotations

import json
import typing

import pytest

from nforensics.pipeline import analyze_text
from nforensics.parse import assemble
from nforensics.parse.normalise import unescaped, unwrap
from nforensics.records import ParsedLog


def _parse(text: str):
    log, _ = assemble("<test>", enumerate(text.splitlines(), 1))
    return log


def _top_family(text: str) -> str | None:
    findings = analyze_text(text).findings
    return findings[0].family if findings else None


# --- the inf1 neuron-rtd daemon --------------------------------------------------------------------------

DAEMON = """\
May 04 02:18:56 ip-10-0-1-8.ec2.internal nrtd[20664]: [NMGR:kmgr_create_eg] Not enough free NCs to allocate 4 members group
May 04 02:18:56 ip-10-0-1-8.ec2.internal nrtd[20664]: [NRTD:create_eg] create_eg() failed.
"""


def test_daemon_heads_behind_a_syslog_prefix_are_runtime_events():
    events = _parse(DAEMON).events
    assert [(e.producer, e.component, e.level) for e in events] == [
        ("runtime", "NMGR:kmgr_create_eg", None), ("runtime", "NRTD:create_eg", None)]
    assert _top_family(DAEMON) == "neuroncores-in-use"


@pytest.mark.parametrize("day", ["May 4", "May  4", "May 04", "May 14"])
def test_a_syslog_prefix_is_the_same_prefix_whether_its_day_is_padded_or_not(day):
    # syslog pads a one-digit day with a space; a paste through Markdown or HTML collapses it.
    events = _parse(DAEMON.replace("May 04", day)).events
    assert [e.component for e in events] == ["NMGR:kmgr_create_eg", "NRTD:create_eg"]
    # A line that only looks like one (a word of three letters, a number, a clock) keeps what it says.
    assert unwrap("Job 3 12:00:01 worker-1 train.py: epoch 2 done").line.startswith("Job 3")


def test_a_level_in_brackets_that_starts_a_line_is_its_level():
    # torch-neuron echoes each of its log records as `[LEVEL] message`.
    log = _parse("[WARNING] torch.neuron.trace failed on _NeuronGraph$12; falling back to native python function call\n"
                 "[ERROR] neuron-cc failed with the following command line call:\n[INFO]x\n[FATAL] aborting\n")
    assert [(e.line, e.level, e.message[:20]) for e in log.events] == [
        (1, "WARNING", "torch.neuron.trace f"), (2, "ERROR", "neuron-cc failed wit"), (4, "FATAL", "aborting")]


def test_bracketed_words_that_are_not_daemon_heads_stay_messages():
    log = _parse("[INFO] compiling\n[NCC_IXLV002] barrier\n[ cut here ]\n[core.py:866] started\n")
    assert not [e for e in log.events if e.component in ("INFO", "core.py:866")]
    assert [d.code for d in log.diagnostics] == ["NCC_IXLV002"]


def test_a_markdown_bold_line_reads_as_its_text():
    text = "Jan 08 21:53:19 ip-10-0-0-31 nrtd[4154]: **[hal] request seq: 2, cmd: 1 timed out**\n"
    assert [(e.component, e.message) for e in _parse(text).events] == [("hal", "request seq: 2, cmd: 1 timed out")]
    assert _top_family(text) == "runtime-init-failure"
    assert _top_family(text.replace("timed out", "completed")) is None  # the same head, nothing failed


# --- tracebacks ------------------------------------------------------------------------------------------

def test_ipython_header_names_the_exception_when_the_paste_stops_early():
    text = ("StopIteration                             Traceback (most recent call last)\n"
            "Cell In[4], line 2\n      1 x = 1\n----> 2 model.sample(ids)\n")
    [traceback] = _parse(text).tracebacks
    assert traceback.exception == "StopIteration"
    assert traceback.frames[0].code == "model.sample(ids)"


def test_ipython_final_line_closes_the_traceback_its_header_opened():
    text = ("KeyError                                  Traceback (most recent call last)\n"
            "Cell In[4], line 2\n----> 2 d['x']\n\nKeyError: 'x'\n")
    [traceback] = _parse(text).tracebacks
    assert (traceback.exception, traceback.message) == ("KeyError", "'x'")


def test_an_older_ipython_traceback_keeps_its_frames_and_where_they_are():
    # IPython before 8 prints `path in function(args)` and numbered context lines, no `File` and no line number.
    text = ("FileNotFoundError                         Traceback (most recent call last)\n"
            "<ipython-input-8-6a82917494e1> in <module>()\n      1 # load\n----> 2 model = Model.from_pretrained(d)\n\n"
            ".../python3.9/site-packages/optimum/neuron/modeling_base.py in from_pretrained(cls, model_id)\n"
            "    401 \n--> 402         return load(model_id)\n\n")
    [traceback] = _parse(text).tracebacks
    assert [(f.file, f.code) for f in traceback.frames] == [
        ("<ipython-input-8-6a82917494e1>", "model = Model.from_pretrained(d)"),
        ("/python3.9/site-packages/optimum/neuron/modeling_base.py", "return load(model_id)")]  # (the elision dots go)
    assert _top_family(text) == "model-library-error"  # raised inside optimum-neuron, even cut before its last line
    elsewhere = text.replace("optimum/neuron", "diffusers").replace("Model.from_pretrained", "build")
    assert _top_family(elsewhere) != "model-library-error"


def test_python_frames_carry_the_source_line_that_failed():
    text = ('Traceback (most recent call last):\n  File "train.py", line 538, in train\n'
            '    optimizer.load_state_dict(state_dict["optimizer"])\n'
            '    ^^^^^^^^^^^^^^^^^^^^^^^^^\nKeyError: \'optimizer\'\n')
    [traceback] = _parse(text).tracebacks
    assert traceback.frames[0].code == 'optimizer.load_state_dict(state_dict["optimizer"])'
    assert _top_family(text) == "model-library-error"
    # The same exception from a call that loads nothing is not a checkpoint failure.
    assert _top_family(text.replace("optimizer.load_state_dict", "optimizer.step")) != "model-library-error"


FAULTHANDLER = """\
Fatal Python error: Segmentation fault

Thread 0x00007f11 (most recent call first):
  File "/usr/lib/python3.10/threading.py", line 324 in wait

Current thread 0x00007f3a (most recent call first):
  File "/venv/site-packages/neuronxcc/starfish/penguin/targets/tonga/passes/Tensorizer.py", line 33 in run
  File "/venv/site-packages/neuronxcc/driver/jobs/Frontend.py", line 90 in runSingleInput
  File "/home/u/lib/a.py", line 5 in f
  File "/home/u/lib/b.py", line 6 in g
  File "/home/u/run.py", line 10 in main
  File "/home/u/run.py", line 20 in <module>
Segmentation fault (core dumped)
"""


def test_a_faulthandler_dump_is_read_innermost_first_as_it_is_printed():
    """faulthandler prints each thread's frames innermost first: the crash happened in the top frame, here
    the compiler's tensorizer, not in the user's script at the bottom of the dump."""
    [crashed] = _parse(FAULTHANDLER).tracebacks  # the thread waiting in threading.py did not crash
    assert [f.function for f in crashed.frames] == ["<module>", "main", "g", "f", "runSingleInput", "run"]
    assert _top_family(FAULTHANDLER) == "compiler-tensorizer"
    # The same frames under a Python traceback's header ran the other way: the user's script failed last.
    as_traceback = FAULTHANDLER.replace("Current thread 0x00007f3a (most recent call first):",
                                        "Traceback (most recent call last):")
    assert [f.function for f in _parse(as_traceback).tracebacks[-1].frames][-1] == "<module>"
    assert _top_family(as_traceback) == "runtime-process-crash"


def test_faulthandlers_other_threads_are_not_the_crash():
    """The `Current thread` crashed; a `Thread` block is another thread, waiting wherever it was."""
    waiting_in_compiler = FAULTHANDLER.replace(
        '  File "/usr/lib/python3.10/threading.py", line 324 in wait\n',
        '  File "/venv/site-packages/neuronxcc/starfish/penguin/targets/tonga/passes/Tensorizer.py", line 3 in run\n')
    crashed_in_xla = waiting_in_compiler.split("Current thread")[0] + (
        "Current thread 0x00007f3a (most recent call first):\n"
        '  File "/venv/site-packages/torch_xla/core/xla_model.py", line 1062 in mark_step\n'
        '  File "/home/u/train.py", line 20 in <module>\nSegmentation fault (core dumped)\n')
    assert [[f.function for f in t.frames] for t in _parse(crashed_in_xla).tracebacks] == [["<module>", "mark_step"]]
    assert _top_family(crashed_in_xla) == "runtime-process-crash"
    # A dump with no `Current thread` (the crash was in a thread Python does not run) keeps every thread.
    assert len(_parse(crashed_in_xla.replace("Current thread", "Thread")).tracebacks) == 2


def test_a_traceback_folded_onto_one_line_is_unfolded():
    text = ('Traceback (most recent call last): File "/app/run.py", line 9, in main run() '
            'File "/venv/site-packages/torch_xla/core/xla_model.py", line 263, in _xla_real_device '
            "raise RuntimeError('Invalid device format') RuntimeError: Invalid device format: cpu\n")
    [traceback] = _parse(text).tracebacks
    assert [f.function for f in traceback.frames] == ["main", "_xla_real_device"]
    assert traceback.frames[1].code == "raise RuntimeError('Invalid device format')"
    assert (traceback.exception, traceback.message) == ("RuntimeError", "Invalid device format: cpu")


def test_go_panic_frames_form_one_stack():
    text = ("2023/11/24 14:40:03 http: panic serving 10.2.3.4:5: runtime error: invalid memory address\n"
            "goroutine 74 [running]:\nmain.filterHandler(0x1)\n"
            "\t/build/src/cmd/k8s-neuron-scheduler/routes.go:44 +0x825\nnet/http.serverHandler.ServeHTTP(0x2)\n"
            "\t/usr/local/go/src/net/http/server.go:2887 +0xa3\n")
    [stack] = _parse(text).stacks
    assert stack.syntax == "go"
    assert [(f.file.rsplit("/", 1)[-1], f.lineno) for f in stack.frames] == [("routes.go", 44), ("server.go", 2887)]
    assert _top_family(text) == "kubernetes-components"
    assert _top_family(text.replace("k8s-neuron-scheduler", "my-web-app")) != "kubernetes-components"


# --- containers of log text ------------------------------------------------------------------------------

LOG = ("2024-Jan-22 08:41:06.0312    19:19    ERROR  TDRV:tdrv_get_dev_info   No neuron device available\n"
       "2024-Jan-22 08:41:06.0313    19:19    ERROR   NRT:nrt_init   Failed to initialize devices, error:1\n")


def test_a_notebook_error_cell_reads_like_the_log_it_holds():
    cell = {"ename": "RuntimeError", "evalue": "Neuron runtime cannot be initialized", "output_type": "error",
            "traceback": ["\x1b[0;31m-----\x1b[0m", *LOG.splitlines(), "\x1b[0;31mRuntimeError\x1b[0m: boom"]}
    direct = [(f.signature, f.family) for f in analyze_text(LOG).findings]
    saved = analyze_text(json.dumps(cell, indent=1)).findings  # one JSON string per line, as .ipynb files are
    assert [(f.signature, f.family) for f in saved][:len(direct)] == direct
    # All on one physical line, every finding shares line 1, so only the first is told apart.
    assert (analyze_text(json.dumps(cell)).findings[0].signature, ) == (direct[0][0], )


def test_ansi_colours_are_not_part_of_the_text():
    coloured = LOG.replace("ERROR", "\x1b[31mERROR\x1b[0m")
    assert [e.level for e in _parse(coloured).events] == ["ERROR", "ERROR"]


def test_colour_escapes_a_collector_wrote_out_are_not_part_of_the_text():
    """rsyslog writes the ESC character as `#033`; other collectors as `\\033` or `^[`."""
    for escape in ("#033", "\\033", "^["):
        line = f"{escape}[2m2024-02-12T16:57:53Z{escape}[0m {escape}[31mERROR{escape}[0m Shard process was signaled to shutdown with signal 9\n"
        [outcome] = _parse(line).outcomes
        assert (outcome.kind, outcome.signal) == ("killed", 9), escape


def test_a_process_ended_by_a_signal_is_an_outcome_in_the_words_tools_use():
    for text, kind in (("Shard process was signaled to shutdown with signal 9", "killed"),
                       ("worker terminated by signal SIGKILL", "killed"), ("child killed by signal 11", "segfault")):
        assert [o.kind for o in _parse(text + "\n").outcomes] == [kind], text
    assert _parse("the process handles signal 9 by flushing its logs\n").outcomes == []


def test_torchruns_report_of_a_worker_a_signal_ended_is_an_outcome():
    """torchrun prints a worker's signal as a negative exit code, in its logging format or glog's header."""
    for text, kind in (
            ("E1002 09:22:45.002000 1180 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) "
             "local_rank: 3 (pid: 1186) of binary: /usr/bin/python3", "killed"),
            ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) local_rank: 0 (pid: 11) of binary: x",
             "segfault"),
            ("  exitcode  : -6 (pid: 1186)", "abort"),
            ("  traceback : Signal 9 (SIGKILL) received by PID 1186", "killed")):
        assert [o.kind for o in _parse(text + "\n").outcomes] == [kind], text
    # A worker that exited with an error of its own (exit code 1) was not ended by a signal.
    assert _parse("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0\n").outcomes == []
    assert _parse("  exitcode  : 1 (pid: 1186)\n").outcomes == []


def test_torch_neurons_report_of_the_compilers_exit_status_is_an_exit_status():
    log = _parse("INFO:Neuron:Compile command returned: -9\n")
    assert [(e.tool, e.code) for e in log.exits] == [("neuron-cc", -9)]
    assert _top_family("INFO:Neuron:Compile command returned: -9\n") == "host-oom-kill"


def test_a_quoted_line_that_is_not_json_is_kept_as_written():
    assert _parse('"unterminated quote: Segmentation fault (core dumped)\n').outcomes  # still read: the outcome is found


def test_torchrun_rank_tags_are_stripped_like_other_prefixes():
    tagged = "".join(f"[rank3]: {line}\n" for line in LOG.splitlines())
    assert [e.component for e in _parse(tagged).events] == [e.component for e in _parse(LOG).events]


CACHE_LOCK_TRACEBACK = """\
Traceback (most recent call last):
  File "/usr/local/lib/python3.9/dist-packages/libneuronxla/neuron_cc_cache.py", line 118, in __enter__
    self.lock_fd = open(self.lock_path, 'w')
OSError: [Errno 30] Read-only file system: '/opt/ml/model/neuron_cache/lock'
"""


def test_a_serving_front_end_relaying_its_workers_lines_is_a_prefix():
    # DJL Serving and TorchServe relay a worker's stderr line by line under a level of their own.
    djl = "".join(f"[WARN ] PyProcess - W-100-model-stderr: {line}\n" for line in CACHE_LOCK_TRACEBACK.splitlines())
    torchserve = "".join(f"2021-11-08 22:21:25,025 [WARN ] W-9003-bert_1.0-stderr MODEL_LOG - {line}\n"
                         for line in CACHE_LOCK_TRACEBACK.splitlines())
    for relayed in (djl, torchserve):
        traceback = _parse(relayed).tracebacks[0]
        assert traceback.exception == "OSError" and traceback.frames[0].file.endswith("neuron_cc_cache.py")
    assert _top_family(djl) == "compile-cache-access"
    # A bracketed level that relays no worker stream is not stripped.
    assert _parse("[WARN ] cache folder is read-only\n").tracebacks == []


def test_the_level_a_loggers_prefix_gives_a_line_is_its_level():
    log = _parse("WARNING 11-26 10:00:06 [utils.py:2262] Methods add_lora not implemented in NeuronWorker\n"
                 "ERROR 12-10 20:13:47 [engine.py:366] EngineCore failed to start\n"
                 "2024-01-01 10:00:00,123::WARNING:root: compile cache lock failed, retrying\n"
                 "[WARN ] PyProcess - W-100-model-stderr: Traceback (most recent call last):\n")
    assert log.below_error_lines() == {1, 3} and log.error_lines() == {2}
    # A relay's level is its own (it reads every stderr line as WARN), not the line's.
    assert 4 not in log.below_error_lines()


def test_a_frames_source_line_behind_a_wrapper_keeps_its_indentation():
    """Ray, vLLM and torchrun put one space after their prefix; the traceback's own indentation says which
    line is a frame's source line."""
    lines = ('  File "train.py", line 538, in train_llama', '    optimizer.load_state_dict(state_dict["optimizer"])',
             "KeyError: 'optimizer'")
    for prefix in ("(RayTrainWorker pid=68013, ip=10.0.248.104) ", "[rank3]: ", "ERROR 12-10 20:13:47 [engine.py:366] "):
        [traceback] = _parse("Traceback (most recent call last):\n" + "".join(prefix + line + "\n" for line in lines)).tracebacks
        assert traceback.frames[0].code == 'optimizer.load_state_dict(state_dict["optimizer"])', prefix


def test_words_are_read_in_the_line_not_in_the_prefix_a_wrapper_put_on_it():
    """vLLM relays a worker's traceback with `ERROR ... [worker_base.py:619]` on every line: that ERROR is no
    word of what the line says (here: a compile that succeeded)."""
    prefix = "(EngineCore_0 pid=50594) ERROR 07-02 08:32:25 [worker_base.py:619] "
    log = prefix + "compiling the context encoding model for bucket 4096\n"
    assert _top_family(log) != "framework-compile-failure"
    assert _top_family(prefix + "neuronx-cc compilation failed with exit code 70\n") == "framework-compile-failure"


def _top_signature(text: str) -> str | None:
    findings = analyze_text(text).findings
    return findings[0].signature if findings else None


@pytest.mark.parametrize("relay", ["tgi-3-1  | ", "[pod/train-0/main] ", "Jan 08 21:53:19 ip-10-0-0-31 python3[4154]: ",
                                   "[1,mpirank:0,algo-1]<stderr>:", " 3: ", "2024-05-01T10:00:07.123Z\t"])
def test_a_relays_tag_on_every_line_leaves_where_each_message_starts(relay):
    """A message still starts where its producer started it behind a collector's tag: a pattern anchored at
    the start of the message holds, and the next line that starts a record still ends the message before it."""
    assertion = ("SG-ERROR: File /src/TongaCodegen/tensortensor.cpp:207, Assertion 'deltaElems >= min' failed\n"
                 "Aborted (core dumped)\n")
    assert _top_signature(assertion) == "backend-codegen-assertion"
    assert _top_signature("".join(relay + line + "\n" for line in assertion.splitlines())) == "backend-codegen-assertion"
    cause = ("2024-Sep-03 11:02:18.0046 27:27 ERROR   NRT:nrt_init                 No neuron device available\n"
             "Traceback (most recent call last):\n  File \"/workspace/serve.py\", line 41, in <module>\n"
             "RuntimeError: The PyTorch Neuron Runtime could not be initialized. Neuron Driver issues are logged\n")
    tagged = "".join(relay + line + "\n" for line in cause.splitlines())
    assert _top_signature(cause) == _top_signature(tagged) == "nrt-no-neuron-device-available"  # the cause first
    # Inside a line, the same words after other text are no message start.
    assert _top_signature("see the SG-ERROR: File /x.cpp:207, Assertion 'a' failed\n") != "backend-codegen-assertion"


@pytest.mark.parametrize("relay", ["", "tgi-3-1  | ", "[1,mpirank:0,algo-1]<stderr>:"])
def test_progress_dots_and_two_ranks_glued_together_are_undone_behind_a_relays_tag_too(relay):
    killed = _parse(relay + "Compiling HLO: /tmp/MODULE_1.hlo.pb\n" + relay + "..........................Killed\n")
    assert [o.kind for o in killed.outcomes] == ["killed"]
    glued = _parse(relay + "Traceback (most recent call last):\n" + relay + "KeyboardInterruptKeyboardInterrupt\n")
    assert [t.exception for t in glued.tracebacks] == ["KeyboardInterrupt"]


def test_a_collectives_warning_pasted_without_its_timestamp_is_still_a_warning():
    warned = "437596:439671 [0] net_plugin.cc:97 CCOM WARN OFI plugin initNet() failed is EFA enabled?\n"
    [event] = _parse(warned).events
    assert (event.producer, event.level, event.component) == ("runtime", "WARN", "CCOM")
    failed = "437596:440020 ERROR  TDRV:exec_process_custom_notification  Received notification generated by DGE\n"
    assert analyze_text(warned + failed).findings[0].signature != "efa-not-available"


def test_a_traceback_behind_an_error_prefix_is_one_record_not_an_error_a_line():
    prefix = "ERROR 12-10 20:13:47 [engine.py:366] "
    log = _parse("".join(prefix + line + "\n" for line in (
        "Traceback (most recent call last):", '  File "/x/engine.py", line 9, in run', "    out = self.execute(x)", "")))
    assert len(log.tracebacks) == 1 and log.error_lines() == set()


def test_pytest_failure_lines_read_as_the_exception_they_show():
    text = "E   ImportError: cannot import name 'export_models' from 'optimum.exporters.neuron.convert'\n"
    assert _parse(text).tracebacks[0].exception == "ImportError"
    assert _parse("E: Unable to locate package foo\n").tracebacks == []  # apt's `E:` is not pytest's



EXCEPTION_GROUP = """\
  + Exception Group Traceback (most recent call last):
  |   File "/srv/vllm/vllm/engine/async_llm_engine.py", line 498, in run_engine_loop
  |     done = await asyncio.wait_for(self.engine_step(), timeout)
  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/srv/vllm/vllm/worker/neuron_model_runner.py", line 172, in _prepare_prompt
    |     assert len(block_table) == 1
    | AssertionError
    +------------------------------------
"""


def test_an_exception_groups_members_are_tracebacks_behind_their_rails():
    """Python 3.11's exception groups draw each member's traceback behind `|` rails."""
    tracebacks = _parse(EXCEPTION_GROUP).tracebacks
    assert [t.exception for t in tracebacks] == ["ExceptionGroup", "AssertionError"]
    assert tracebacks[1].frames[-1].file.endswith("neuron_model_runner.py")
    assert _top_family(EXCEPTION_GROUP) == "model-library-error"
    # A markdown table row is not a traceback, rail or not.
    assert _parse("| File | line |\n| a.py | 3 |\n").tracebacks == []


def test_a_runtime_record_pasted_without_its_timestamp_is_still_a_runtime_record():
    timed = "2024-May-21 16:08:34.244955 58100:58100 ERROR  TDRV:tdrv_init_mla_phase1    Could not open the nd3\n"
    untimed = "ERROR  TDRV:tdrv_init_mla_phase1    Could not open the nd3\n"
    for text in (timed, untimed, "  " + untimed):
        [event] = _parse(text).events
        assert (event.producer, event.component, event.level) == ("runtime", "TDRV:tdrv_init_mla_phase1", "ERROR")
    assert _top_family(untimed) == _top_family(timed) == "device-not-visible"
    # Another tool's level and head, with no runtime function after it, is not a runtime record.
    assert [e.producer for e in _parse("ERROR HTTP:500 from the metadata service\n").events] != ["runtime"]


def test_a_wrapper_record_pasted_without_its_timestamp_keeps_its_level():
    # libneuronxla reports a cached failure it is about to retry at INFO: no replay, timed or not.
    timed = ("2026-08-06 09:18:00.000330:  46247  [INFO]: Got a cached failed neff at /c/neuronxcc-2.26.1.0+6f180f47/"
             "MODULE_84+fad94d7c/model.neff. With eror log: [Failed compilation with ['neuronx-cc']]. Retrying...\n")
    untimed = timed.split(":  ", 1)[1]
    for text in (timed, untimed):
        [event] = _parse(text).events
        assert (event.producer, event.level, event.pid) == ("framework", "INFO", 46247)
    assert _top_family(untimed) == _top_family(timed) != "compile-cache-replay"
    # Its ERROR form, timed or not, is the replay.
    assert _top_family(untimed.replace("[INFO]", "[ERROR]")) == "compile-cache-replay"


def test_an_ice_banner_pasted_without_its_title_rows_is_still_the_banner():
    prefix = "01/03/2023 01:12:05 PM ERROR 29231 [neuron-cc]: "
    fields = ["Error message:  ERROR: Failed in /venv/neuroncc/starfish/bin/hlo2penguin --input /tmp/x.pb",
              "Error class:    AssertionError", "Error location: Unknown"]
    [ice] = _parse("".join(prefix + field + "\n" for field in fields)).ice
    assert (ice.error_class, ice.line, ice.end_line) == ("AssertionError", 1, 3)
    assert _top_family("".join(prefix + field + "\n" for field in fields)) == "compiler-internal-crash"
    # The same words printed by anything but the compiler are not its banner.
    assert _parse("".join(field + "\n" for field in fields)).ice == []


def test_a_bir_block_pasted_from_below_its_header_is_still_the_verifiers():
    fields = "Instruction: I-3110-0\nOpcode: TensorCopy\nOutput index: 0\nAccess Pattern: [[406,36],[1,1],[1,203]]\n"
    [bir] = _parse(fields).bir
    assert (bir.instruction, bir.opcode, bir.line) == ("I-3110-0", "TensorCopy", 1)
    assert _top_family(fields) == "compiler-bir-verifier"
    # The driver naming the verifier pass that failed says the same.
    assert _top_family("2023-07-21T09:19:02Z ERROR 26613 [ModuleForkPass]: birverifier failed after 0.012 seconds\n") == "compiler-bir-verifier"
    # An instruction that is not a BIR instruction id, or a verifier that passed, is not.
    assert _parse("Instruction: read the manual first\nOpcode: none\n").bir == []
    assert _top_family("2023-12-12T17:28:24Z birverifier finished after 0.000 seconds\n") is None


def test_runtime_records_without_timestamps_are_each_their_own_message():
    """A wording pattern reads a record and the lines that continue it, never the next record: the cause on
    the first line keeps its own finding when the timestamps were stripped."""
    records = ("ERROR  TDRV:tdrv_init_mla_phase1   Could not open the nd1\n"
               "ERROR  TDRV:tdrv_destroy           TDRV not initialized\n"
               "ERROR   NRT:nrt_init               Failed to initialize devices, error:1\n")
    for text in (records, "".join("11802:11802 " + line + "\n" for line in records.splitlines())):
        assert _top_family(text) == "device-not-visible"


def test_compiler_frames_behind_a_driver_prefix_with_a_thread_id_are_the_compilers():
    prefix = "2023-10-25T08:32:15Z ERROR 50940 140579525248832 [neuronxcc.driver.CommandDriver]: "
    log = _parse(prefix + 'Traceback (most recent call last):\n' + prefix +
                 '  File "neuronxcc/starfish/penguin/DotTransform.py", line 478, in run\n')
    assert log.tracebacks and log.tracebacks[0].frames[0].file == "neuronxcc/starfish/penguin/DotTransform.py"

# --- shapes inside messages ------------------------------------------------------------------------------

def test_a_numeric_status_with_its_message_is_a_runtime_status():
    [status] = _parse("RuntimeError: Could not load the model status=2 message=Invalid\n").nrt_statuses
    assert (status.number, status.name) == (2, "NRT_INVALID")
    assert not _parse("HTTP response status=200 OK\n").nrt_statuses


def test_one_instruction_failing_a_backend_check_is_a_bir_record():
    [bir] = _parse("Instruction DMACopy inst.32: DMA Copy in/out shape must match\n").bir
    assert (bir.opcode, bir.instruction, bir.reason) == ("DMACopy", "inst.32", "DMA Copy in/out shape must match")
    assert not _parse("Instruction: DMACopy\n").bir  # a field of a BIR block, with no block open


def test_a_line_printed_at_an_error_level_is_a_failure_line_without_failure_words():
    text = "F external/xla/xla/parse_flags_from_env.cc:224] Unknown flags in XLA_FLAGS: --xla_foo=1\n"
    assert _top_family(text) == "version-skew"
    assert _top_family(text.replace("F external", "I external")) is None


# --- every record kind, filed from its shape -------------------------------------------------------------

BANNER = "*" * 60
# (record kind, input, what the record says, a near miss that files no record of that kind)
RECORD_KINDS = [
    ("events", "2024-Jun-26 00:32:47.943821 30294:32381 ERROR  TDRV:tdrv_init could not open",
     lambda log: [(e.producer, e.component, e.pid, e.message) for e in log.events],
     [("runtime", "TDRV:tdrv_init", 30294, "could not open")], "ERROR: TDRV could not open"),
    ("diagnostics", "[INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers\n  to match",
     lambda log: [(d.code, d.severity, d.message, d.end_line) for d in log.diagnostics],
     [("NCC_IXLV002", "INTERNAL_ERROR", "Expected core barriers to match", 2)], "[NCC_IXLV] Expected core barriers"),
    ("ice", f"{BANNER}\nAn Internal Compiler Error has occurred\nError class:    AssertionError\n{BANNER}",
     lambda log: [(i.error_class, i.line, i.end_line) for i in log.ice], [("AssertionError", 1, 4)],
     "Error class:    AssertionError"),  # a field with no banner open
    ("bir", "=== BIR verification failed ===\nReason: Expect int32\nOpcode: Activation",
     lambda log: [(b.reason, b.opcode, b.end_line) for b in log.bir], [("Expect int32", "Activation", 3)],
     "Reason: Expect int32"),
    ("invocations", "neuronx-cc compile --framework XLA model.hlo --target=trn1",
     lambda log: [(i.target, i.argv[0]) for i in log.invocations], [("trn1", "neuronx-cc")], "neuronx-cc --version"),
    ("exits", "RuntimeError: neuronx-cc failed with -9", lambda log: [(e.tool, e.code) for e in log.exits],
     [("neuronx-cc", -9)], "the compile exited early"),
    ("nrt_statuses", "NRTD response code 'NERR_RESOURCE' (4)",
     lambda log: [(s.number, s.name) for s in log.nrt_statuses], [(4, "NRT_RESOURCE")], "HTTP response status=200 OK"),
    ("tracebacks", 'Traceback (most recent call last):\n  File "a.py", line 3, in f\n    g()\nRuntimeError: boom',
     lambda log: [(t.exception, t.message, [(f.file, f.code) for f in t.frames]) for t in log.tracebacks],
     [("RuntimeError", "boom", [("a.py", "g()")])], "Please see the traceback above"),
    ("stacks", "#3  0x00007f3a1c in a::run() from /opt/x/libw.so\n#4  0x00007f3a1d in b::go() from /opt/x/libv.so",
     lambda log: [(s.syntax, [f.function for f in s.frames]) for s in log.stacks],
     [("native", ["a::run", "b::go"])], "#include <stdio.h>"),
    ("outcomes", "bash: line 1:  4242 Killed   neuronx-cc compile",
     lambda log: [(o.kind, o.process, o.signal) for o in log.outcomes], [("killed", "neuronx-cc", 9)],
     "the worker was killed"),
    ("api_calls", "NRT:nrt_load API:IN: (model=x)", lambda log: [(a.api, a.phase) for a in log.api_calls],
     [("nrt_load", "IN")], "nrt_load API: in progress"),
    ("packages", "neuronx-cc==2.14.213.0", lambda log: log.environment.packages, {"neuronx-cc": "2.14.213.0"},
     "numpy==1.26.4"),
    ("env_vars", 'export NEURON_CC_FLAGS="--auto-cast=none"', lambda log: log.environment.env_vars,
     {"NEURON_CC_FLAGS": "--auto-cast=none"}, "export PATH=/opt/bin"),
    # The second warning of one shape skips the parsers but reads as the first did (a warning, at its level).
    ("repeats", "2023-Dec-04 23:55:34.0909 492260:492606 [6] init.cc:138 CCOM WARN OFI plugin initNet() "
     "failed is EFA enabled?\n2023-Dec-04 23:55:35.0178 492261:492613 [0] init.cc:138 CCOM WARN OFI plugin initNet() "
     "failed is EFA enabled?", lambda log: (log.repeats, sorted(log.below_error_lines())) if log.repeats else None,
     ({2: 1}, [1, 2]),
     "2023-Dec-04 23:55:34.0909 492260:492606 [6] init.cc:138 CCOM WARN OFI plugin initNet() failed is EFA enabled?"
     "\n2023-Dec-04 23:55:35.0178 492261:492613 [0] init.cc:138 CCOM ERROR OFI plugin initNet() failed is EFA enabled?"),
    ("instance_type", "running on a trn1.32xlarge host", lambda log: log.environment.instance_type, "trn1.32xlarge",
     "running on a trn1 host"),
]


@pytest.mark.parametrize("kind,text,read,expected,near_miss", RECORD_KINDS, ids=[r[0] for r in RECORD_KINDS])
def test_every_record_kind_is_filed_and_a_near_miss_files_none(kind, text, read, expected, near_miss):
    assert read(_parse(text + "\n")) == expected
    assert not read(_parse(near_miss + "\n"))


def test_the_record_kinds_table_covers_every_record_a_parsed_log_holds():
    lists = {name for name, field in ParsedLog.model_fields.items() if typing.get_origin(field.annotation) is list}
    lists.discard("decoded_lines")  # the map back to physical lines, not records (test_explain_inputs.py)
    assert lists | {"packages", "env_vars", "instance_type", "repeats"} == {r[0] for r in RECORD_KINDS}


@pytest.mark.parametrize(("pasted", "line"), [
    ("> [NCC_IXLV002] Expected core barriers to have name A, but core barrier 6 has name B",
     "[NCC_IXLV002] Expected core barriers to have name A, but core barrier 6 has name B"),
    ("> > RuntimeError: neuronx-cc failed with 70", "RuntimeError: neuronx-cc failed with 70"),  # a quote in a quote
    ('  File &quot;/venv/lib/python3.10/site-packages/torch_neuronx/xla_impl/trace.py&quot;, line 592, in &lt;module&gt;',
     '  File "/venv/lib/python3.10/site-packages/torch_neuronx/xla_impl/trace.py", line 592, in <module>'),
    ("ERROR\u00a0 TDRV:tdrv_init\u00a0 Failed", "ERROR  TDRV:tdrv_init  Failed"),
])
def test_what_a_reply_or_a_web_page_did_to_a_line_is_undone(pasted, line):
    assert unescaped(pasted) == [line]


SHIPPED = "ERROR  TDRV:tdrv_init  Failed to open /dev/neuron0"


@pytest.mark.parametrize("record", [
    # Docker's json-file driver and Kubernetes' node logs: the line (with its newline) beside its metadata
    f'{{"log":"{SHIPPED}\\n","stream":"stderr","time":"2024-03-18T14:20:45.123456789Z"}}',
    # a JSON logger's record
    f'{{"time": "2024-03-18T14:20:45Z", "level": "error", "message": "{SHIPPED}"}}',
    # a notebook's stream, one string a line
    f'"{SHIPPED}\\n",',
])
def test_a_shipped_record_gives_its_line_alone(record):
    assert unescaped(record) == [SHIPPED]


@pytest.mark.parametrize(("record", "lines"), [
    ('{"log": "first\\nsecond\\n", "stream": "stderr"}', ["first", "second"]),  # its own newline ends it
    ('{"levelname": "ERROR", "message": "training failed", "exc_info": "Traceback (most recent call last):\\nKeyError: 4"}',
     ["training failed", "Traceback (most recent call last):", "KeyError: 4"]),  # the traceback beside the message
    ('{"log": {"level": "error"}, "message": "NRT:nrt_load failed"}', ["NRT:nrt_load failed"]),  # ECS: log is metadata
])
def test_a_shipped_record_keeps_its_line_and_the_error_beside_it(record, lines):
    assert unescaped(record) == lines


def test_a_log_shipped_as_json_records_is_read_as_the_log():
    log = ("2024-Jun-26 09:10:11.123456 4242:4242 ERROR  NRT:nrt_allocate_neuron_cores  "
           "NeuronCore(s) not available - Requested:1 Available:0\n")
    shipped = json.dumps({"log": log, "stream": "stderr", "time": "2024-06-26T09:10:11.1Z"}) + "\n"
    assert _top_family(shipped) == _top_family(log) == "neuroncores-in-use"


@pytest.mark.parametrize("line", [
    ">>> torch_neuronx.trace(model, example)",  # Python's prompt is no quote
    "=> [NCC_IXLV002] in the cache",
    "if a && b then echo '&&' fi",  # no entity
])
def test_lines_that_only_look_quoted_or_escaped_are_kept(line):
    assert unescaped(line) == [line]


def test_a_progress_dot_glued_before_a_records_date_is_not_part_of_the_record():
    glued = ".02/22/2022 12:27:28 PM ERROR 8902 [neuron-cc]: Failed to parse model /tmp/w/graph_def.pb\n"
    assert [(e.producer, e.component) for e in _parse(glued).events] == [("compiler", "neuron-cc")]
    assert _parse("..." + glued[1:]).events == _parse(glued).events  # a run of dots, as before
    # a dot before anything but a date is the line's own (a decimal): no record is made of what follows it
    assert not _parse(".02 seconds later ERROR 8902 [neuron-cc]: x\n").events


JVM_SERVER = """\
ai.djl.serving.wlm.WorkerInitializationException: Failed to initialize worker
\tat ai.djl.serving.wlm.WorkerPool.initWorkers(WorkerPool.java:214) ~[wlm-0.29.0.jar:?]
\t... 6 more
Caused by: java.util.concurrent.TimeoutException
\tat java.base/java.util.concurrent.CompletableFuture.timedGet(CompletableFuture.java:1960) ~[?:?]
\tat ai.djl.python.engine.PyProcess.startPythonProcess(PyProcess.java:195) ~[python-0.29.0.jar:?]
\tat java.lang.ClassLoader$NativeLibrary.load(Native Method)
"""


def test_a_jvm_servers_stack_trace_is_its_exceptions_and_frames():
    log = _parse(JVM_SERVER)
    assert [(t.exception, t.message) for t in log.tracebacks] == [
        ("ai.djl.serving.wlm.WorkerInitializationException", "Failed to initialize worker"),
        ("java.util.concurrent.TimeoutException", "")]  # the frame below it is no message of its
    frames = [(f.package_path, f.function, f.lineno) for stack in log.stacks for f in stack.frames]
    assert frames == [("ai/djl/serving/wlm/WorkerPool.java", "WorkerPool.initWorkers", 214),
                      ("java/util/concurrent/CompletableFuture.java", "CompletableFuture.timedGet", 1960),
                      ("ai/djl/python/engine/PyProcess.java", "PyProcess.startPythonProcess", 195),
                      ("java/lang/ClassLoader.java", "ClassLoader$NativeLibrary.load", None)]
    assert _top_family(JVM_SERVER) == "serving-timeout"  # a model server's worker that did not start in time
    # the same timeout in a program that is no model server is not a serving timeout
    plain = JVM_SERVER.replace("ai.djl.serving.wlm", "com.example.batch").replace("ai.djl.python.engine", "com.example.io")
    assert _top_family(plain) != "serving-timeout"


PY_SPY = """\
Process 854: VLLM::Worker_TP0
Python v3.12.11 (/opt/conda/bin/python3.12)

Thread 854 (active+gil): "MainThread"
    remove (torch/fx/graph.py:1169)
    _convert_inplace_ops (vllm_neuron/fx_passes/inplace_rewrite_pass.py:111)
    compile_subgraph (torch/_dynamo/output_graph.py:1700)
    compile_or_warm_up_model (vllm_neuron/vllm/worker/neuron_worker.py:845)
Thread 901 (idle): "Thread-3"
    wait (threading.py:359)
"""


def test_a_py_spy_dump_is_a_running_processs_stack_and_a_hang_in_the_operation_its_frames_name():
    log = _parse(PY_SPY)
    assert [(s.syntax, [f.function for f in s.frames]) for s in log.stacks] == [
        ("pyspy", ["remove", "_convert_inplace_ops", "compile_subgraph", "compile_or_warm_up_model"]),
        ("pyspy", ["wait"])]
    assert [(o.kind, o.operation, o.line) for o in log.outcomes] == [("hang", "compile", 4)]  # one hang, not one a thread
    assert _top_family(PY_SPY) == "process-hang"
    collective = PY_SPY.replace("compile_subgraph (torch/_dynamo/output_graph.py:1700)",
                                "all_reduce (torch/distributed/distributed_c10d.py:2050)")
    collective = collective.replace("remove (torch/fx/graph.py:1169)", "wait (torch/distributed/c10d.py:10)")
    assert [o.operation for o in _parse(collective).outcomes] == ["collectives"]
    # the same functions quoted in prose are no stack: nothing hangs
    assert not _parse("The error is raised in remove and compile_subgraph of torch/fx/graph.py.\n").outcomes


RICH_PANEL = """\
╭───────────────────── Traceback (most recent call last) ──────────────────────╮
│ /home/ubuntu/run.py:12 in <module>                                           │
│                                                                              │
│    11 model = NeuronModelForCausalLM.from_pretrained(MODEL)                  │
│ ❱  12 print(model.generate(**inputs))                                        │
│                                                                              │
│ /opt/venv/lib/python3.10/site-packages/neuronx_distributed_inference/models/m │
│ odel_base.py:410 in generate                                                 │
│                                                                              │
│ ❱ 410 │   │   bucket = self.buckets[input_len]                               │
╰──────────────────────────────────────────────────────────────────────────────╯
KeyError: 4096
"""


def test_rich_traceback_panel_gives_its_frames_and_their_failing_lines():
    [traceback] = _parse(RICH_PANEL).tracebacks
    assert [(f.package_path, f.lineno, f.syntax) for f in traceback.frames] == [
        ("run.py", 12, "rich"), ("neuronx_distributed_inference/models/model_base.py", 410, "rich")]
    assert traceback.frames[0].function == "<module>" and traceback.frames[0].code == "print(model.generate(**inputs))"
    assert traceback.exception == "KeyError"
    # Every row of the panel is exactly the terminal's width: a border ends it, however many rows are that long.
    assert len(_parse(RICH_PANEL).tracebacks) == 1 and _parse(RICH_PANEL).tracebacks[0].end_line == 12


def test_the_source_lines_a_rich_panel_quotes_are_code_not_failures():
    quoted = RICH_PANEL.replace("│ ❱ 410 │   │   bucket = self.buckets[input_len]                               │",
                                '│   409 │   │   raise RuntimeError("Failed to allocate device memory on the    │\n'
                                "│ ❱ 410 │   │   bucket = self.buckets[input_len]                               │")
    assert quoted != RICH_PANEL
    log = "INFO: compiled for Neuron (neuronx-cc 2.16.372.0)\n" + quoted
    assert _top_family(log) == "model-library-error"


@pytest.mark.parametrize("prefix", ["", "[rank0]: ", "app-1  | "])
def test_a_path_rich_folded_over_several_rows_is_joined_behind_any_prefix(prefix):
    folded = RICH_PANEL.replace(
        "│ /opt/venv/lib/python3.10/site-packages/neuronx_distributed_inference/models/m │",
        "│ /opt/venv/lib/python3.10/site-packages/neuronx_distrib │\n│ uted_inference/models/m │")
    log = "".join(prefix + line + "\n" for line in folded.splitlines())
    frames = _parse(log).tracebacks[0].frames
    assert frames[-1].package_path == "neuronx_distributed_inference/models/model_base.py"


def test_a_rich_traceback_through_a_model_librarys_frames_is_that_librarys():
    # (rich folds a path too long for its panel mid-word; the row above holds the path's start)
    log = "INFO: compiled for Neuron (neuronx-cc 2.16.372.0)\n" + RICH_PANEL
    assert _top_family(log) == "model-library-error"
    assert _top_family(log.replace("neuronx_distributed_inference/models/m", "acme_serving/models/m_")) != "model-library-error"
