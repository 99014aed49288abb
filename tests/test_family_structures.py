"""Family rules that read a log's structure rather than one phrase: an exception's message that goes on
under its class, the compiler stage a record's component names, a library refusing the XLA device, and the
loader, file-format and installer failures of a mixed environment. Each with the shapes it must not take."""

from __future__ import annotations

import pytest

from nforensics.knowledge import build, builtin_kb
from nforensics.pipeline import analyze_lines, analyze_text


def _top(log: str) -> tuple[str | None, str]:
    findings = analyze_text(log).findings
    return (findings[0].family, findings[0].tier) if findings else (None, "nothing")


def _families(log: str) -> set[str | None]:
    return {f.family for f in analyze_text(log).findings if f.tier != "generic"}


@pytest.mark.parametrize("indent", ["    ", "\t", "             "])
def test_an_exception_message_that_goes_on_indented_below_its_class_is_read_whole(indent):
    log = (f"ValueError: SparseMixer is only supported on CUDA, CPU or HPU devices.\n"
           f"{indent}Found input tensors on xla device.\n")
    assert _top(log) == ("framework-unsupported-op", "family")
    # The device list names HPU as supported: the run was not on a Gaudi.
    assert _top(log.replace("HPU", "MPS")) == ("framework-unsupported-op", "family")


def test_a_line_under_an_exception_that_is_not_indented_is_not_its_message():
    log = ("ValueError: SparseMixer is only supported on CUDA, CPU or HPU devices.\n"
           "Found input tensors on xla device.\n")
    assert _top(log) != ("framework-unsupported-op", "family")


def test_a_frame_under_an_exception_does_not_go_on_its_message():
    log = ("ValueError: SparseMixer is only supported on CUDA, CPU or HPU devices.\n"
           '  File "/opt/app/xla device.py", line 3, in run\n')
    assert "framework-unsupported-op" not in _families(log)


def test_a_run_on_a_gaudi_device_is_still_another_accelerators():
    log = ("ValueError: SparseMixer is only supported on CUDA, CPU or HPU devices.\n"
           "    Found input tensors on xla device.\nmoved the model to hpu:0\n")
    assert "framework-unsupported-op" not in _families(log)


STAGE_RECORD = "2024-06-02T10:00:00Z ERROR 4242 [{component}]: {message}\n"


@pytest.mark.parametrize("component", ["WalrusDriver", "job.WalrusDriver.0"])
@pytest.mark.parametrize("level", ["CRITICAL", "FATAL"])
def test_a_compiler_stage_that_aborts_is_placed_by_its_component(component, level):
    log = STAGE_RECORD.format(component=component, message="  I-197244-243").replace("ERROR", level)
    assert _top(log) == ("compiler-codegen", "family")


@pytest.mark.parametrize("level", ["INFO", "ERROR"])
def test_a_stage_record_below_an_abort_places_nothing(level):
    # (At ERROR a stage also relays how its process ended: "Backend exited with code -6 and stderr:".)
    log = STAGE_RECORD.format(component="WalrusDriver", message="  I-197244-243").replace("ERROR", level)
    assert "compiler-codegen" not in _families(log)


SOURCE = "/local/workspace/src/KaenaCompiler/neuronxcc/{}/src/linearize.cpp:174"


def test_a_failed_assertion_of_the_compilers_source_is_placed_by_its_file():
    log = STAGE_RECORD.format(component=SOURCE.format("walrus/coloring_allocator"), message="Assertion failure: false")
    assert _top(log) == ("compiler-codegen", "family")
    # The same check in the verifier's tree is the verifier's; another record at that location is no assertion.
    assert _top(log.replace("walrus/coloring_allocator", "walrus/verifier")) == ("compiler-bir-verifier", "family")
    assert "compiler-codegen" not in _families(log.replace("Assertion failure: false", "1 memlocs were undefined"))


def test_the_backends_sg_error_assertion_is_placed_by_its_file():
    # (with the signature that knows SG-ERROR assertions left out: its family must still place it)
    kb = builtin_kb()
    kb = build([s for s in kb.signatures if s.family != "compiler-codegen"], families=kb.families)
    log = ("SG-ERROR: File /opt/pkg/KaenaCompiler/src/neuroncc/compiler/be/tongacodegen/src/tensor.cpp:207, Assertion "
           "'deltaElems <= max' failed: op I-48211-0 has more elements than the engine allows\n")

    def families(text: str) -> list[str | None]:
        return [f.family for f in analyze_lines("x", enumerate(text.splitlines(), 1), kb=kb).findings]

    assert families(log)[:1] == ["compiler-codegen"]
    assert "compiler-codegen" not in families(log.replace("be/tongacodegen", "fe/hilo"))


def test_words_that_say_what_failed_at_a_stage_outrank_where_it_was():
    log = STAGE_RECORD.format(component="WalrusDriver", message="The number of instructions generated (11843392) "
                              "exceeds the maximum allowed per NEFF (5000000).").replace("ERROR", "FATAL")
    assert _top(log) == ("compiler-resource-limit", "family")


def test_a_stage_record_in_a_run_that_was_killed_reports_the_kill():
    log = (STAGE_RECORD.format(component="job.WalrusDriver.0", message="Backend exited with code -9 and stderr:")
           .replace("ERROR", "CRITICAL") + "neuronx-cc failed with -9\n")
    assert "compiler-codegen" not in _families(log)


@pytest.mark.parametrize("binary", ["/opt/conda/lib/python3.12/site-packages/_XLAC.cpython-312-x86_64-linux-gnu.so",
                                    "/opt/aws/neuron/bin/neuron-top",
                                    "/venv/lib/python3.10/site-packages/libneuronxla/libneuronpjrt.so"])
@pytest.mark.parametrize("symbol", ["GLIBC_2.35", "GLIBCXX_3.4.30"])
def test_a_stack_binary_built_for_a_newer_c_library_is_version_skew(binary, symbol):
    log = f"ImportError: /usr/lib64/libm.so.6: version `{symbol}' not found (required by {binary})\n"
    assert _top(log) == ("version-skew", "family")


def test_another_programs_c_library_mismatch_is_no_neuron_skew():
    log = "node: /lib64/libc.so.6: version `GLIBC_2.28' not found (required by node)\n"
    assert "version-skew" not in _families(log)


@pytest.mark.parametrize("message", [
    "Attempted to read a PyTorch file with version 10, but the maximum supported version for reading is 6. "
    "Your PyTorch installation may be too old.",
    "RuntimeError: this checkpoint was saved with a newer release of the library (format 5)",
])
def test_a_file_from_a_newer_release_than_its_reader_is_version_skew(message):
    assert _top(f"RuntimeError: {message}\n") == ("version-skew", "family")


def test_an_old_file_read_by_a_newer_reader_says_nothing_of_skew():
    assert "version-skew" not in _families("RuntimeError: the file format version 3 is supported; converting it\n")


@pytest.mark.parametrize("reason", [
    "It is a distutils installed project and thus we cannot accurately determine which files belong to it",
    "no RECORD file was found for wrapt.",
])
def test_pip_unable_to_remove_the_installed_release_is_an_install_failure(reason):
    log = f"$ pip install tensorflow-neuron==1.15.5.2.8.9.0\nERROR: Cannot uninstall 'wrapt'. {reason}\n"
    assert _top(log) == ("pip-resolution", "family")


def test_a_package_pip_uninstalled_is_no_failure():
    assert _top("  Attempting uninstall: wrapt\n    Found existing installation: wrapt 1.12.1\n"
                "    Uninstalling wrapt-1.12.1:\n      Successfully uninstalled wrapt-1.12.1\n") == (None, "nothing")


def test_a_partitioner_failure_says_the_model_holds_operators_it_cannot_compile():
    log = "ValueError: The partitioner has found 5 subgraphs which exceeds the specified max subgraph count of 2.\n"
    assert _top(log) == ("framework-unsupported-op", "family")


def test_the_partitioners_progress_is_no_failure():
    assert _top("INFO:Neuron:The neuron partitioner created 3 sub-graphs\n") == (None, "nothing")


CACHE_LOCK = ("[E707 10:30:24.516310831 NeuronLogging.h:103] [Neuron] [ERROR] "
              "[torch_neuronx/csrc/core/cache/FileLock.cpp:182] {said} path= /tmp/local_cache/locks/{entry}.lock "
              "elapsed_seconds= 1200 timeout_seconds= 1200\n")


@pytest.mark.parametrize("said", ["Lock acquisition timed out, breaking stale lock", "Failed to acquire lock"])
def test_a_cache_entry_lock_not_taken_in_time_is_the_cache_and_a_lock_left_behind(said):
    # (At error level: the warning a finished run went past is no failure, test_a_warning_a_finished_run_...)
    findings = analyze_text(CACHE_LOCK.format(said=said, entry="b666845a7aea2944843cb854c72195de")).findings
    assert (findings[0].family, findings[0].hypotheses[0].id) == ("compile-cache-access", "stale-lock-or-partial-entry")


def test_a_lock_of_something_other_than_the_neuron_cache_is_not_the_caches():
    log = "ERROR: Lock acquisition timed out for /var/cache/apt/archives/lock\n"
    assert "compile-cache-access" not in _families(log)


def test_a_network_time_out_reaching_the_cache_is_still_a_remote_cache():
    log = "ERROR: neuron compile cache: Connect timeout on endpoint URL: connection timed out reading s3 bucket\n"
    findings = analyze_text(log).findings
    assert (findings[0].family, findings[0].hypotheses[0].id) == ("compile-cache-access", "remote-cache-unreachable")


VLLM_RELAY = "(EngineCore_0 pid=81034) ERROR 06-10 17:31:04 [core.py:700] {line}\n"


def test_a_relayed_line_keeps_its_producers_own_level():
    # vLLM's engine relays a worker's lines at ERROR; the worker's own `INFO:Neuron:` says it is progress.
    info = "INFO:Neuron:There are 9 ops of 3 different types in the TorchScript that are not compiled by neuron-cc: aten::mv"
    assert "framework-unsupported-op" not in _families(VLLM_RELAY.format(line=info))
    assert "framework-unsupported-op" in _families(VLLM_RELAY.format(line=info.replace("INFO:", "ERROR:", 1)))


@pytest.mark.parametrize("own", ["[INFO]", "[INFO]:", "[DEBUG]"])
def test_a_relayed_line_keeps_its_producers_level_written_in_brackets(own):
    # (tensorflow-neuron and torch-neuron print their partitioner's progress as `[INFO] ...`)
    line = f"{own} The neuron partitioner created 32 sub-graphs, max subgraph count 8"
    assert "framework-unsupported-op" not in _families(VLLM_RELAY.format(line=line))
    assert "framework-unsupported-op" in _families(VLLM_RELAY.format(line=line.replace(own, "[ERROR]", 1)))


@pytest.mark.parametrize("letter,failed", [("I", False), ("W", False), ("E", True)])
def test_a_relayed_tensorflow_line_keeps_its_own_level_letter(letter, failed):
    line = (f"2021-03-25 21:23:32.557779: {letter} tensorflow/neuron/grappler/convert/segment.cc:456] There are 3 ops "
            "of 2 different types in the graph that are not compiled by neuron-cc: Placeholder, NoOp")
    assert ("framework-unsupported-op" in _families(VLLM_RELAY.format(line=line))) is failed


def test_a_producers_own_level_keeps_the_lines_own_indentation_behind_a_wrapper():
    from nforensics.parse.normalise import unwrap

    assert unwrap("(RayWorker pid=1)     [INFO] indented").line == "    [INFO] indented"
    assert unwrap("(RayWorker pid=1) [INFO] flush left") == ("[INFO] flush left", "INFO")


def test_a_relayed_line_with_no_level_of_its_own_is_at_the_relays_level():
    line = "There are 9 ops of 3 different types in the TorchScript that are not compiled by neuron-cc: aten::mv"
    assert "framework-unsupported-op" in _families(VLLM_RELAY.format(line=line))


@pytest.mark.parametrize("said", ["[ERROR] [NCC_OPT001] Unknown HLO pass: identity.",
                                  "neuronx-cc: error: unknown pass 'fuse-everything' in --internal-passes"])
def test_a_pass_the_compiler_does_not_have_is_its_arguments(said):
    assert _top(f"2026-04-25 19:54:58.105773: E hilo/tools/hlo_opt_main.cc:71] {said}\n") == ("compiler-arguments", "family")


def test_an_unknown_pass_of_another_tool_is_not_the_compilers_arguments():
    assert "compiler-arguments" not in _families("ERROR: unknown pass 'lint' for the eslint hlo-style plugin\n")


@pytest.mark.parametrize("said", [
    "[W neuron_op_v2.cpp:133] Warning: Neuron runtime could not be initialized. Model was not sent to NeuronCore",
    "ERROR: failed to initialize NRT: the model stays on the CPU",
])
def test_a_framework_saying_the_runtime_did_not_come_up_is_runtime_init(said):
    assert _top(said + "\n") == ("runtime-init-failure", "family")


@pytest.mark.parametrize("said", ["INFO: Neuron runtime initialized with 2 NeuronCores",
                                  "RuntimeError: CUDA could not be initialized: no driver"])
def test_a_runtime_that_came_up_or_another_runtime_is_not_neurons_init_failure(said):
    assert "runtime-init-failure" not in _families(said + "\n")


TORCHRUN_STOPPED = ("WARNING:torch.distributed.elastic.agent.server.api:Received {signal} death signal, shutting down workers\n"
                    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3721028 closing signal SIG{name}\n")


def test_the_launcher_sent_sigterm_with_no_error_of_its_own_is_host_memory_as_nxd_documents():
    findings = analyze_text(TORCHRUN_STOPPED.format(signal=15, name="TERM")).findings
    assert findings[0].family == "host-oom-kill" and findings[0].confidence < 0.5  # said by the signal alone
    said = "torch.distributed.elastic.multiprocessing.api.SignalException: Process 44570 got signal: 15\n"
    assert _top(said)[0] == "host-oom-kill"


def test_a_launcher_stopped_by_hand_is_no_memory_kill():
    assert _top(TORCHRUN_STOPPED.format(signal=2, name="INT"))[0] == "process-hang"


def test_a_sigterm_the_scheduler_says_it_sent_ranks_the_scheduler_first():
    log = "slurmstepd: error: *** JOB 4242 ON trn1-st-1 CANCELLED AT 2025-01-01T00:00:00 DUE TO TIME LIMIT ***\n"
    findings = analyze_text(log + TORCHRUN_STOPPED.format(signal=15, name="TERM")).findings
    oom = next(f for f in findings if f.family == "host-oom-kill")
    assert oom.hypotheses[0].id == "stopped-from-outside"


@pytest.mark.parametrize("log", [
    # a warning a finished run went past: the lock was broken and the run went on
    "[W707 10:30:24.516310831 NeuronLogging.h:103] Warning: [Neuron] [WARNING] [torch_neuronx/csrc/core/cache/"
    "FileLock.cpp:182] Lock acquisition timed out, breaking stale lock path= /tmp/local_cache/locks/ab.lock\n"
    "Compiler status PASS\nTraining completed successfully.\n",
    "WARNING:root:pin_memory is not supported on xla device; setting pin_memory=False\nepoch 1 done\n",
])
def test_a_warning_a_finished_run_went_past_is_no_failure(log):
    assert analyze_text(log).failures() == []


@pytest.mark.parametrize(("log", "family"), [
    ("ERROR: Timed out waiting for lock /root/.cache/huggingface/hub/.locks/models--x/ab.lock\n", "compile-cache-access"),
    ("E graph_partitioner.cc:199 Partition] failed to partition the subgraph for TensorrtExecutionProvider\n",
     "framework-unsupported-op"),
    ("ERROR: Unknown HLO pass: my-custom-pass while compiling on CUDA device 0\n", "compiler-arguments"),
    ("onnxruntime.capi.Fail: model opset 21 is newer than the maximum supported version 20\n", "version-skew"),
    ("/home/u/app/node_modules/.bin/esbuild: /lib64/libc.so.6: version `GLIBC_2.34' not found "
     "(required by /home/u/app/node_modules/esbuild/bin/esbuild)\n", "version-skew"),
    ("ERROR: Cannot uninstall 'PyYAML'. It is a distutils installed project and thus we cannot accurately "
     "determine which files belong to it\n", "pip-resolution"),
])
def test_another_tools_words_are_not_the_neuron_family(log, family):
    assert family not in _families(log)


@pytest.mark.parametrize("ending", ["Backend exited with code -9 and stderr:", "killed by signal 9"])
def test_a_stage_record_that_reports_how_its_process_ended_places_nothing(ending):
    log = STAGE_RECORD.format(component="job.WalrusDriver.0", message=ending).replace("ERROR", "CRITICAL")
    assert "compiler-codegen" not in _families(log)
    killed = log + "[F137] neuronx-cc was forcibly killed - This most commonly occurs due to insufficient system memory.\n"
    assert [f.family for f in analyze_text(killed).failures()] == ["host-oom-kill"]


VLLM_FRAMES = ('INFO 07-02 10:00:01 config.py:500] Using the Neuron platform (neuronx-cc 2.16.372.0)\n'
               'Traceback (most recent call last):\n'
               '  File "/opt/venv/lib/python3.10/site-packages/vllm/engine/llm_engine.py", line 20, in step\n'
               '    outputs = self.model_executor.execute_model(req)\n'
               '  File "/opt/venv/lib/python3.10/site-packages/vllm/worker/model_runner.py", line 88, in execute_model\n'
               '    return self.model_runner.execute_model(batch)\n')


def test_an_exception_raised_through_a_model_librarys_frames_is_that_librarys():
    log = VLLM_FRAMES + "KeyError: 'local_world_size'\n"
    assert _top(log) == ("model-library-error", "family")


def test_an_exception_and_a_librarys_frames_in_two_tracebacks_are_not_one_failure():
    # The vLLM traceback ended in an error the rule does not name; the KeyError was raised in a user's script.
    log = (VLLM_FRAMES + "SystemExit: 1\n"
           'Traceback (most recent call last):\n  File "/home/ubuntu/run.py", line 4, in <module>\n'
           "    cfg = settings['local_world_size']\nKeyError: 'local_world_size'\n")
    assert "model-library-error" not in _families(log)


def test_a_jvm_exception_is_paired_with_the_frames_printed_under_it():
    log = ("Caused by: java.util.concurrent.TimeoutException\n"
           "\tat java.base/java.util.concurrent.CompletableFuture.timedGet(CompletableFuture.java:1960) ~[?:?]\n"
           "\tat ai.djl.python.engine.PyProcess.startPythonProcess(PyProcess.java:195) ~[python-0.29.0.jar:?]\n"
           "\tat ai.djl.serving.wlm.WorkerPool.initWorkers(WorkerPool.java:214) ~[wlm-0.29.0.jar:?]\n")
    assert _top(log) == ("serving-timeout", "family")
    # The same exception with another program's frames under it is no model server's time-out.
    assert "serving-timeout" not in _families(log.replace("ai.djl.", "org.acme.").replace("djl", "acme"))


TORCHSCRIPT_UNKNOWN_OP = ("Could not find any similar ops to neuron::forward_1. This op may not exist or may not be "
                          "currently supported in TorchScript.")


@pytest.mark.parametrize("said", [f"RuntimeError: \nUnknown builtin op: neuron::forward_1.\n{TORCHSCRIPT_UNKNOWN_OP}",
                                  TORCHSCRIPT_UNKNOWN_OP])  # (a paste may keep only its second line)
def test_torchscript_not_knowing_the_neuron_operator_is_the_framework_package_not_loaded(said):
    assert _top(said + "\n") == ("framework-plugin-setup", "family")


@pytest.mark.parametrize("said", ["RuntimeError: No such operator neuron::forward_v2_0",
                                  "Could not find any similar ops to aten::my_custom_gelu."])
def test_an_operator_torch_neuron_asked_for_or_of_another_namespace_is_not_the_package_missing(said):
    assert "framework-plugin-setup" not in _families(said + "\n")


NXDI_FRAMES = ('INFO: compiling for Neuron (neuronx-cc 2.16.372.0)\n'
               'Traceback (most recent call last):\n'
               '  File "/opt/venv/lib/python3.10/site-packages/optimum/neuron/trainers.py", line 88, in __init__\n'
               '    super().__init__(model, args=args, **kwargs)\n')


@pytest.mark.parametrize("error", ["TypeError: __init__() got an unexpected keyword argument 'max_seq_length'",
                                   "AttributeError: 'NeuronTrainingArguments' object has no attribute 'ddp_backend'",
                                   "TypeError: infer_schema() takes 1 positional argument but 2 were given"])
def test_a_library_calling_an_api_its_neighbours_release_lacks_is_ranked_a_version_mismatch(error):
    top = analyze_text(NXDI_FRAMES + error + "\n").findings[0]
    assert (top.family, top.hypotheses[0].id) == ("model-library-error", "library-api-mismatch")


def test_a_value_that_is_none_is_not_ranked_a_version_mismatch():
    top = analyze_text(NXDI_FRAMES + "AttributeError: 'NoneType' object has no attribute 'shape'\n").findings[0]
    assert top.family == "model-library-error" and top.hypotheses[0].id != "library-api-mismatch"


def test_a_library_refusing_a_setting_is_not_ranked_a_version_mismatch():
    top = analyze_text(NXDI_FRAMES + "ValueError: seq_len 8192 is larger than the largest bucket 4096\n").findings[0]
    assert top.family == "model-library-error" and top.hypotheses[0].id != "library-api-mismatch"


@pytest.mark.parametrize("said", ["RuntimeError: neuronxcc.nki.baremetal failed to run kernel add_kernel",
                                  "RuntimeError: nki_flash_attn_func failed: head_dim 256 not supported"])
def test_nki_named_by_its_modules_or_a_kernels_name_is_an_nki_failure(said):
    assert _top(said + "\n") == ("nki-kernel-error", "family")


def test_the_runtime_failing_to_load_an_operation_named_nki_something_is_the_runtimes():
    log = ("  with_all_reduce single-rank: FAIL: RuntimeError: NRT Execution error occurred on Neuron for "
           "operation=nki_kernel_global\n"
           'error message="NRT EXECUTION FAILED: Failed to load model, Invalid NEFF, instruction, or input"\n')
    assert _top(log) == ("runtime-neff-load", "family")


@pytest.mark.parametrize("said", ["optimum-cli export: error: invalid choice: 'neuron' (choose from 'onnx', 'tflite')",
                                  "optimum-cli export: error: argument {onnx,tflite}: invalid choice: 'neuron' "
                                  "(choose from 'onnx', 'tflite')"])
def test_a_command_line_without_neuron_among_its_choices_lacks_the_neuron_package(said):
    assert _top(said + "\n") == ("pip-resolution", "family")


def test_a_neuron_subcommand_refusing_an_option_is_a_release_mismatch():
    said = ("optimum-cli neuron cache: error: argument {create,set,add,list}: invalid choice: 'lookup' "
            "(choose from 'create', 'set', 'add', 'list')")
    assert _top(said + "\n") == ("version-skew", "family")


TRACE_SUMMARY = ("INFO:Neuron:The following operations are currently supported in torch-neuron for this model:\n"
                 "INFO:Neuron: => aten::Int: 96 [supported]\n"
                 "INFO:Neuron: => aten::embedding: 3 [not supported]\n"
                 "INFO:Neuron: => aten::linear: 73 [supported]\n"
                 "INFO:Neuron:Number of arithmetic operators (post-compilation) before = 565, compiled = 562, percent compiled = 99.47%\n")


def test_a_frameworks_operator_summary_is_no_failure():
    # torch-neuron prints it for every trace, those that succeed too: some operators stay on CPU
    assert _top(TRACE_SUMMARY) == (None, "nothing")


def test_an_operator_the_framework_says_it_cannot_run_is_still_one():
    assert _top(TRACE_SUMMARY + "RuntimeError: aten::embedding is not supported on the Neuron device\n") == (
        "framework-unsupported-op", "family")


DAEMON_TIMEOUT = ("Nov 13 00:24:00 ip-10-1-255-226 nrtd[32446]: [hal] request seq: 3, cmd: 1 timed out\n"
                  "Nov 13 00:24:01 ip-10-1-255-226 nrtd[32446]: [hal] request seq: 3, cmd: 1 timed out\n")
DAEMON_UP = ("Nov 13 00:24:25 ip-10-1-255-226 nrtd[32446]: [TDRV:tdrv_init_one_mla_phase2] Initialized Inferentia: 0000:00:1f.0\n"
             "Nov 13 00:24:25 ip-10-1-255-226 nrtd[32446]: [NRTD:RunServer] Server listening on unix:/run/neuron.sock0\n")


def test_a_runtime_failure_the_runtime_then_came_up_from_was_passed():
    assert _top(DAEMON_TIMEOUT) == ("runtime-init-failure", "family")
    assert "runtime-init-failure" not in _families(DAEMON_TIMEOUT + DAEMON_UP)


def test_a_runtime_that_came_up_before_it_failed_still_failed():
    assert _top(DAEMON_UP + DAEMON_TIMEOUT) == ("runtime-init-failure", "family")


TENSORBOARD = ('Traceback (most recent call last):\n'
               '  File "/home/ubuntu/anaconda3/envs/{env}/bin/tensorboard", line 7, in <module>\n'
               '    from tensorflow.tensorboard.tensorboard import main\n'
               "ModuleNotFoundError: No module named 'tensorflow.tensorboard'\n")


def test_the_tensorboard_program_failing_in_a_neuron_environment_is_the_profiler_tooling():
    assert _top(TENSORBOARD.format(env="aws_neuron_tensorflow_p36")) == ("profiler-tools", "family")


def test_tensorboard_failing_where_nothing_says_neuron_is_not_neurons_tooling():
    assert "profiler-tools" not in _families(TENSORBOARD.format(env="tf2_gpu"))


def test_another_process_or_device_coming_up_or_a_failure_after_it_overcomes_nothing():
    other_device = DAEMON_UP.replace("0000:00:1f.0", "0000:00:1e.0")
    failed_device = DAEMON_TIMEOUT.replace("timed out", "timed out on 0000:00:1f.0")
    assert "runtime-init-failure" in _families(failed_device + other_device)
    other_process = DAEMON_UP.replace("nrtd[32446]", "nrtd[32447]")
    assert "runtime-init-failure" in _families(DAEMON_TIMEOUT + other_process)
    failed_again = DAEMON_TIMEOUT + DAEMON_UP + DAEMON_TIMEOUT.replace("00:24:0", "00:25:0")
    assert "runtime-init-failure" in _families(failed_again)


def test_a_typo_among_choices_that_include_neuron_is_no_missing_package():
    said = "optimum-cli export: error: invalid choice: 'nuron' (choose from 'onnx', 'tflite', 'neuron')"
    assert "pip-resolution" not in _families(said + "\n")


def test_a_failure_that_ends_like_a_summary_row_is_still_a_failure():
    assert _top("neuron-cc: compilation failed => aten::_convolution: 1 [not supported]\n") == ("framework-unsupported-op", "family")


_CORE_MAP = ("2026-Jul-07 10:06:38.131386 {pid}:{pid} {level}  TDRV:tdrv_init    "
             "Unable to find a physical core for logical core {core} (max cores {most}).\n")
_INIT_FAILED = "2026-Jul-07 10:06:38.134055 {pid}:{pid} ERROR   NRT:nrt_init      Failed to initialize devices, error:2\n"


@pytest.mark.parametrize("core,most", [(16, 8), (42, 8), (130, 128)])
@pytest.mark.parametrize("prefix", ["", "(RayWorker pid=8812) "])
def test_a_core_number_the_driver_cannot_map_is_the_cause_of_the_failed_init(core, most, prefix):
    log = (prefix + _CORE_MAP.format(pid=8812, level="ERROR", core=core, most=most)
           + prefix + _INIT_FAILED.format(pid=8812))
    findings = analyze_text(log).findings
    assert (findings[0].family, findings[0].tier) == ("neuroncores-in-use", "family")
    assert findings[0].hypotheses[0].id == "core-numbers-beyond-the-instance"
    assert findings[0].workarounds[0].hypotheses == ["core-numbers-beyond-the-instance"]


def test_a_core_number_out_of_the_drivers_range_in_other_words_is_the_same_cause():
    log = ("2026-Jul-07 10:06:38.131386 8812:8812 ERROR  TDRV:tdrv_init    logical nc id 16 out of range (max 8)\n"
           + _INIT_FAILED.format(pid=8812))
    findings = analyze_text(log).findings
    assert findings[0].family == "neuroncores-in-use"
    assert findings[0].hypotheses[0].id == "core-numbers-beyond-the-instance"


def test_a_logical_cores_memory_request_beyond_the_device_is_no_core_number_beyond_it():
    memory = ("2026-Jul-07 10:06:38.131386 8812:8812 ERROR  TDRV:tdrv_init    logical nc 0: device memory request of "
              "34359738368 bytes exceeds the 25769803776 available\n")
    assert _top(memory + _INIT_FAILED.format(pid=8812))[0] != "neuroncores-in-use"


def test_the_driver_failing_otherwise_names_no_core_numbers():
    device = ("2026-Jul-07 10:06:38.131386 8812:8812 ERROR  TDRV:tdrv_init    Failed to open /dev/neuron0 for logical "
              "cores 0-7: no such device\n")
    assert "neuroncores-in-use" not in _families(device + _INIT_FAILED.format(pid=8812))
    other = _CORE_MAP.format(pid=8812, level="ERROR", core=16, most=8).replace(
        "Unable to find a physical core for logical core 16 (max cores 8)", "Unable to open the device: no such file")
    findings = analyze_text(other + _INIT_FAILED.format(pid=8812)).findings
    assert findings[0].family != "neuroncores-in-use"


def test_a_compiled_graph_that_failed_at_run_time_is_no_failed_compile():
    ran = ("INFO:Neuron: torch_neuronx.trace done\n"
           "inference FAILED: RuntimeError: NaN probabilities from the compiled graph (export_path=neuron_trace)\n")
    assert "framework-compile-failure" not in _families(ran)
    assert "framework-compile-failure" not in _families(ran.replace("the compiled graph", "the model compiled with "
                                                                     "--auto-cast=all"))
    compiled = ran.replace("inference FAILED: RuntimeError: NaN probabilities from the compiled graph",
                           "RuntimeError: compilation failed for the graph")
    assert "framework-compile-failure" in _families(compiled)


_DRA_EVENT = ("  Warning  FailedPrepareDynamicResources  kubelet  Failed to prepare dynamic resources: error applying "
              "config: {reason}\n"
              '"Opaque device configs" configs=[{{"Config":{{"kind":"{kind}","apiVersion":"{group}/v1"}}}}]\n')


@pytest.mark.parametrize("reason", ["LNC value is not configurable for instance type trn1.2xlarge",
                                    "invalid logicalNeuronCore value 3: must be 1 or 2"])
def test_the_neuron_dra_driver_refusing_a_claims_setting_is_a_kubernetes_component(reason):
    findings = analyze_text(_DRA_EVENT.format(reason=reason, kind="NeuronConfig", group="neuron.aws.com")).findings
    assert (findings[0].family, findings[0].tier) == ("kubernetes-components", "family")
    assert findings[0].hypotheses[0].id == "claim-config-not-for-this-node"


def test_another_vendors_dra_driver_failing_is_not_neurons():
    gpu = _DRA_EVENT.format(reason="MIG profile 1g.5gb is not supported on this GPU", kind="GpuConfig",
                            group="resource.nvidia.com")
    assert "kubernetes-components" not in _families(gpu)
    # (also in a cluster that has Neuron nodes too, or a run that printed NxD Inference's NeuronConfig)
    for beside in ("Node: ip-10-0-1-7 (trn1.32xlarge)  Allocatable: aws.amazon.com/neuron: 16\n",
                   "INFO: loaded NeuronConfig(tp_degree=8, batch_size=1)\n"):
        assert "kubernetes-components" not in _families(gpu + beside), beside


_VERIFIER_LOCATION = ("[INTERNAL_ERROR] [NCC_INLA001] Unhandled exception with message: Error from "
                      "./neuronxcc/walrus/verifier/src/inst_visitor.cpp:{line} in function '{check}':\n"
                      '(DMACopy: I-54_inst__I-203-0)Source Kernel "nkilib.core.attention.attention_cte" Instruction '
                      "DMACopy I-54_inst__I-203-0: {what}\n")


@pytest.mark.parametrize("line,check,what", [(1884, "checkDMATranspose", "transpose only supported for HBM->SB"),
                                             (902, "checkAccessPattern", "partition step must be 1")])
def test_the_verifiers_own_source_named_in_a_message_is_the_verifiers_finding(line, check, what):
    findings = analyze_text(_VERIFIER_LOCATION.format(line=line, check=check, what=what)).findings
    assert findings[0].family == "compiler-bir-verifier"


@pytest.mark.parametrize("elsewhere", ["/home/me/myproj/verifier/src/check.cpp:12:3: error: expected ';'",
                                       "inst_visitor.cpp:40:1: error: unknown type name 'Visitor'"])
def test_another_programs_verifier_source_failing_is_not_neurons(elsewhere):
    assert "compiler-bir-verifier" not in _families(elsewhere + "\n")


def test_an_access_pattern_rule_broken_with_nothing_naming_neuron_is_no_neuron_verifier():
    # (AccessPattern is a word of other tools too: "INFO: AccessPattern cache mismatch: recomputing 12 patterns")
    assert "compiler-bir-verifier" not in _families("INFO: AccessPattern cache mismatch: recomputing 12 patterns\n")
    assert "compiler-bir-verifier" not in _families("output AccessPatterns must MATCH, but got in=17776640 and out=128\n")


@pytest.mark.parametrize("operator,backend", [("aten::unfold", "xla:0"), ("aten::as_strided", "xla:1")])
def test_a_view_operator_with_no_kernel_for_the_xla_device_cannot_be_lowered(operator, backend):
    log = (f'RuntimeError: The operator {operator} appears to be a view operator, but it has no implementation for '
           f'the backend "{backend}". View operators don\'t support since the tensor\'s storage cannot be shared.\n')
    assert _top(log) == ("framework-unsupported-op", "family")


@pytest.mark.parametrize("construct", ["inner function definitions", "while loops with a break", "try/except blocks"])
def test_nki_naming_a_construct_it_does_not_support_is_the_kernels(construct):
    findings = analyze_text(f"RuntimeError: NKI does not support {construct};\nmove it outside this function\n").findings
    assert (findings[0].family, findings[0].tier) == ("nki-kernel-error", "family")
    assert findings[0].hypotheses[0].id == "kernel-semantics"


def test_a_library_falling_back_from_an_nki_kernel_is_no_kernel_failure():
    for said in ("NKI flash attention is not supported with sliding window", "NKI does not support sliding window here"):
        warning = f"WARNING 07-01 10:00:00 [attn.py:12] {said}; falling back to the default attention backend.\n"
        assert "nki-kernel-error" not in _families(warning), said


_COMPILER_TRACEBACK = ("Traceback (most recent call last):\n"
                       '  File "neuronxcc/driver/commands/CompileCommand.py", line 1215, in '
                       "neuronxcc.driver.commands.CompileCommand.CompileCommand.runPipeline.print_dots\n"
                       "{exception}\n")


def test_a_compiler_that_failed_writing_to_a_closed_output_says_its_parent_went_away():
    findings = analyze_text(_COMPILER_TRACEBACK.format(exception="BrokenPipeError: [Errno 32] Broken pipe")).findings
    assert findings[0].family == "compiler-internal-crash"
    assert findings[0].hypotheses[0].id == "compiler-output-closed"
    assert findings[0].workarounds[0].hypotheses == ["compiler-output-closed"]
    assertion = _COMPILER_TRACEBACK.format(exception="AssertionError: tile size mismatch")
    assert analyze_text(assertion).findings[0].hypotheses[0].id != "compiler-output-closed"
    # (the pipe of the Python program's own output, closed at its exit after the crash, is not the compiler's)
    own_pipe = ("Exception ignored in: <_io.TextIOWrapper name='<stdout>' mode='w' encoding='utf-8'>\n"
                "BrokenPipeError: [Errno 32] Broken pipe\n")
    assert analyze_text(assertion + own_pipe).findings[0].hypotheses[0].id != "compiler-output-closed"


@pytest.mark.parametrize("code, family", [(2, "compiler-arguments"), (1, None), (70, None)])
def test_the_compiler_ending_with_its_usage_status_refused_its_command_line(code, family):
    log = ("2026-08-06T06:02:50Z INFO 3970 [root]: /opt/conda/bin/neuronx-cc compile python -m train -n yolox-s\n"
           f"2026-08-06T06:02:50Z INFO 3970 [root]: Subcommand returned with exitcode={code}\n")
    assert ("compiler-arguments" in _families(log)) == (family is not None)


def test_another_commands_usage_status_is_not_the_compilers():
    log = ('  File "/home/u/setup_env.py", line 12, in <module>\n    subprocess.check_call(["make", "-C", "ext"])\n'
           "subprocess.CalledProcessError: Command '['make', '-C', 'ext']' returned non-zero exit status 2.\n")
    assert "compiler-arguments" not in _families(log)
    assert "compiler-arguments" in _families(log.replace("'make', '-C', 'ext'", "'neuronx-cc', 'compile', 'x.py'"))


def test_a_status_says_less_than_the_words_that_say_what_was_refused():
    log = ("neuronx-cc compile: error: argument --auto-cast-type: invalid choice: 'fp8_e4m3fn'\n"
           "RuntimeError: neuronx-cc failed with 2\n")
    assert _top(log)[0] == "compiler-arguments"


ICE_HEAD = "".join(f"03/14/2022 09:41:27 AM ERROR 23117 [neuron-cc]: {row}\n" for row in (
    "*" * 63, " An Internal Compiler Error has occurred", "*" * 63, "", "Error message:  {message}", "",
    "Error class:    CompilerInternalError", "Error location: job.Scheduler.3"))


def _without(family: str) -> object:
    kb = builtin_kb()
    return build([s for s in kb.signatures if s.family != family], families=kb.families)


@pytest.mark.parametrize("message, leads", [
    ("Non-zero exit status (134) for command: /venv/lib/python3.7/site-packages/neuroncc/starfish/bin/list_sch --hhir x",
     True),
    ("Non-zero exit status (-11) for command: /venv/neuroncc/starfish/bin/walrus_driver --bir x", True),
    ("A process in the process pool was terminated abruptly while the future was running or pending.", True),
    # A stage that reported an error and exited 1, or one killed from outside (137): not a signal's death of its own.
    ("Non-zero exit status (1) for command: /venv/lib/python3.7/site-packages/neuroncc/starfish/bin/list_sch --hhir x",
     False),
    ("Non-zero exit status (137) for command: /venv/lib/python3.7/site-packages/neuroncc/starfish/bin/list_sch", False),
])
def test_a_compiler_stage_a_signal_ended_leads_the_crash_report_it_brought_about(message, leads):
    # (with the signatures that know these shapes left out: the family must lead by itself)
    log = ICE_HEAD.replace("{message}", message)
    without = _without("compiler-abnormal-termination")
    findings = analyze_lines("x", enumerate(log.splitlines(), 1), kb=without).findings
    assert (findings[0].family == "compiler-abnormal-termination") == leads
    assert "compiler-internal-crash" in {f.family for f in findings}  # the crash report stays, beside it
    # ... also where the driver's own line that the compiler aborted (a wrapper's report) holds as well.
    log += "03/14/2022 09:41:28 AM ERROR 23110 [neuron-cc]: neuron-cc terminated abnormally - process aborted (SIG_ABORT)\n"
    findings = analyze_lines("x", enumerate(log.splitlines(), 1), kb=without).findings
    assert (findings[0].family == "compiler-abnormal-termination") == leads


@pytest.mark.parametrize("log", [
    "ERROR: Non-zero exit status (134) for command: /usr/bin/python train.py\n",  # not a stage of the compiler
    "03/14/2022 09:41:27 AM INFO 23117 [neuron-cc]: attempt 1: Non-zero exit status (134) for command: /venv/lib/"
    "python3.7/site-packages/neuroncc/starfish/bin/list_sch --hhir x; retrying\n"
    "03/14/2022 09:42:10 AM INFO 23117 [neuron-cc]: Compilation successful\n",  # a retry the driver notes in passing
    "2024-05-01 10:00:00 INFO Loading compiled model from /models/bert/model.neff\n2024-05-01 10:00:09 ERROR "
    "preprocess: tokenizer worker crashed: A process in the process pool was terminated abruptly while the future "
    "was running or pending.\n",  # a pool of the application's own, in a run that loads a NEFF
])
def test_a_signal_death_or_a_lost_worker_that_is_not_the_compilers_is_no_compiler_termination(log):
    findings = analyze_lines("x", enumerate(log.splitlines(), 1), kb=_without("compiler-abnormal-termination")).findings
    assert "compiler-abnormal-termination" not in {f.family for f in findings}
