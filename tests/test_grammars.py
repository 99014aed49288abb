"""The grammars themselves, as trees: every alternative of every grammar in grammars/ (each start alternative,
each `->` alias, each named sub-rule) parses a line of its shape into that alternative with the parts that
make it that shape, and a near miss of each does not parse as it. A new alternative without a case and a near
miss here fails the coverage tests, and one without a method in its transformer fails too.

What the transformers make of these trees is tests/test_transformers.py."""

from __future__ import annotations

from functools import cache

import pytest
from lark import Lark, Token, Tree

from nforensics.parse.grammars import TRANSFORMERS, build, grammar_dir, parse, parser

# (grammar, start rule or None, line, the alternative it is, (TERMINAL, text) parts the tree must hold)
CASES = [
    # compiler.lark
    ("compiler", None, "2024-08-15T14:51:41Z ERROR 3835 [sg0000/Tensorizer/BirCodeGenLoop]: tensorcopy failed",
     "driver_line", {("LEVEL", "ERROR"), ("PID", "3835"), ("COMPONENT", "sg0000/Tensorizer/BirCodeGenLoop")}),
    ("compiler", None, "2023-10-25T08:32:15Z ERROR 50940 140579525248832 [neuronxcc.driver.CommandDriver]: x",
     "driver_line", {("PID", "50940"), ("THREAD", "140579525248832")}),
    ("compiler", None, "2026-07-18T16:24:06Z ERROR [job.WalrusDriver.0]: Backend exited with code -6", "driver_line",
     {("LEVEL", "ERROR"), ("COMPONENT", "job.WalrusDriver.0")}),
    ("compiler", None, "ERROR 40712 [neuronx-cc]: Error class:    KeyError", "untimed_driver_line",
     {("LEVEL", "ERROR"), ("PID", "40712"), ("COMPONENT", "neuronx-cc")}),
    ("compiler", None, "2024-08-15T14:51:41Z FATAL 3468 (sg00) [ColoringAllocator::Rep]: out of memory", "driver_line",
     {("SUBGRAPH", "(sg00)"), ("COMPONENT", "ColoringAllocator::Rep")}),
    ("compiler", None, "06/16/2021 08:46:36 AM ERROR [neuron-cc]: compilation failed",
     "legacy_line", {("LEVEL", "ERROR"), ("COMPONENT", "neuron-cc"), ("US_TS", "06/16/2021 08:46:36 AM")}),
    ("compiler", None, "2023-12-12T17:28:24Z Running birverifier", "timing_line", {("MESSAGE", "Running birverifier")}),
    ("compiler", None, "*" * 60, "ice_border", set()),
    ("compiler", None, " An Internal Compiler Error has occurred", "ice_title", set()),
    ("compiler", None, "Error class:    AssertionError", "ice_field", {("ICE_KEY", "Error class")}),
    ("compiler", None, "  HWM version 2.10.0.5-7b1976adf", "ice_version", {("VERSION_ITEM", "HWM version 2.10.0.5-7b1976adf")}),
    ("compiler", None, "  MXNet not available", "ice_version", {("VERSION_ITEM", "MXNet not available")}),
    ("compiler", None, "Diagnostic logs stored in /tmp/w/log-neuron-cc.txt", "ice_logs", set()),
    ("compiler", None, "what(): === BIR verification failed ===", "bir_header", {("BIR_PREFIX", "what(): ")}),
    ("compiler", None, "Reason: Expect AP datatype to be int32", "bir_field", {("BIR_KEY", "Reason")}),
    ("compiler", None, "Instruction DMACopy inst.32: DMA Copy in/out shape must match", "bir_instruction",
     {("INSTRUCTION_HEAD", "Instruction DMACopy inst.32:")}),
    ("compiler", None, "SG-ERROR: File a.cpp:207, Assertion 'x' failed", "sg_error", set()),
    # runtime.lark
    ("runtime", None, "2024-Jun-26 00:32:47.943821 30294:32381 ERROR  TDRV:tdrv_init   could not open",
     "nrt_line", {("LEVEL", "ERROR"), ("MODULE", "TDRV"), ("FUNCTION", "tdrv_init"), ("TID", "32381")}),
    ("runtime", None, "2024-Oct-02 09:22:40.1 1186:1186 ERROR  NCCOM:ncclCommInitRank  bootstrap failed",  # a cut clock
     "nrt_line", {("LEVEL", "ERROR"), ("MODULE", "NCCOM")}),
    ("runtime", None, "NRT:  26638:26638 ERROR  TDRV:db_vtpb_get_mla_and_tpb failed", "syslog_line", {("MODULE", "TDRV")}),
    ("runtime", None, "30294:32381 ERROR  NRT:nrt_init failed", "bare_line", {("PID", "30294"), ("MODULE", "NRT")}),
    ("runtime", None, "ERROR  TDRV:tdrv_init_mla_phase1   Could not open the nd3", "untimed_line",
     {("LEVEL", "ERROR"), ("RUNTIME_MODULE", "TDRV"), ("RUNTIME_FUNCTION", "tdrv_init_mla_phase1")}),
    ("runtime", None, "[NMGR:kmgr_create_eg] Not enough free NCs to allocate", "daemon_line",
     {("DAEMON_HEAD", "NMGR:kmgr_create_eg")}),
    ("runtime", None, "2023-Aug-01 16:14:43.0210 332066:332508 [31] bootstrap.cc:89 CCOM WARN Timeout waiting",
     "ccom_line", {("LEVEL", "WARN"), ("SOURCE", "bootstrap.cc:89"), ("RANK", "[31]")}),
    ("runtime", None, "437596:439671 [0] net_plugin.cc:97 CCOM WARN OFI plugin initNet() failed", "ccom_line",
     {("LEVEL", "WARN"), ("PID", "437596")}),  # pasted without its timestamp
    ("runtime", None, "------------[ cut here ]------------", "cut_here", set()),
    ("runtime", None, "------------[ cut to here ]------------", "cut_to_here", set()),
    # framework.lark
    ("framework", None, "2024-04-12 07:01:02.000123: 4242 ERROR ||NEURON_CC_WRAPPER||: Compilation failed",
     "wrapper_line", {("LEVEL", "ERROR"), ("WRAPPER", "||NEURON_CC_WRAPPER||"), ("TS", "2024-04-12 07:01:02.000123")}),
    ("framework", None, "2026-03-30 13:32:48 [ERROR]: Failed compilation with [...]", "nxdi_line", {("LEVEL", "ERROR")}),
    # the same two pasted without their timestamps, from the pid on
    ("framework", None, "4242  ERROR ||NEURON_CC_WRAPPER||: Compilation failed", "wrapper_line",
     {("LEVEL", "ERROR"), ("PID", "4242")}),
    ("framework", None, "46247  [INFO]: Got a cached failed neff at /c/model.neff", "nxdi_line", {("LEVEL", "INFO"), ("PID", "46247")}),
    ("framework", None, "F external/xla/xla/parse_flags_from_env.cc:224] Unknown flags", "glog_line",
     {("GLOG_LEVEL", "F"), ("GLOG_SOURCE", "external/xla/xla/parse_flags_from_env.cc:224")}),
    ("framework", None, "F0501 10:00:00.123456    1234 parse_flags_from_env.cc:226] Unknown flags", "glog_header_line",
     {("GLOG_STAMP", "F0501 10:00:00.123456"), ("GLOG_SOURCE", "parse_flags_from_env.cc:226")}),
    ("framework", None, "/v/lib/python3.12/site-packages/nxd/moe/blockwise.py:102: UserWarning: Warning: Failed to import x",
     "python_warning", {("PY_WARNING", "UserWarning"), ("PY_LINE", "102")}),
    ("prefixes", None, "WARNING:root:NeuronConfig init: Unexpected keyword arguments", "start",
     {("PYLOG_BARE", "WARNING:root:")}),
    ("framework", None, "ERRO[0004] Processing failed, exiting", "logrus_line", {("LOGRUS_LEVEL", "ERRO[0004]")}),
    # environment.lark
    ("environment", None, "aws-neuronx-runtime-lib/unknown,now 2.21.41.0 amd64 [installed]", "apt_line",
     {("PACKAGE", "aws-neuronx-runtime-lib"), ("VERSION", "2.21.41.0")}),
    ("environment", None, "neuronx-cc                    2.14.213.0", "pip_line", {("VERSION", "2.14.213.0")}),
    ("environment", None, "torch-neuronx==2.1.2.2.2.0", "freeze_line", {("PACKAGE", "torch-neuronx")}),
    ("environment", None, "NeuronX Compiler version 2.23.6484.0+3b612583", "cc_version",
     {("VERSION", "2.23.6484.0+3b612583")}),
    ("environment", None, "export NEURON_CC_FLAGS=--auto-cast=none", "env_assign", {("ENV_NAME", "NEURON_CC_FLAGS")}),
    ("environment", None, "os.environ['XLA_USE_BF16'] = '1'", "setenv_call", {("SETENV_NAME", "'XLA_USE_BF16'")}),
    # traceback.lark
    ("traceback", None, "Traceback (most recent call last):", "python_header", set()),
    ("traceback", None, "StopIteration                             Traceback (most recent call last)", "ipython_header",
     {("IPY_HEADER", "StopIteration                             Traceback (most recent call last)")}),
    ("traceback", None, "Current thread 0x00007f3a1c2b5740 (most recent call first):", "faulthandler_header",
     {("FAULT_HEADER", "Current thread 0x00007f3a1c2b5740 (most recent call first):")}),
    ("traceback", None, "Stack (most recent call first):", "faulthandler_header",
     {("FAULT_HEADER", "Stack (most recent call first):")}),
    ("traceback", None, 'File "neuronxcc/driver/jobs/WalrusDriver.py", line 232, in run', "frame",
     {("PATH", '"neuronxcc/driver/jobs/WalrusDriver.py"'), ("LINENO", "232"), ("FUNC", "run")}),
    ("traceback", None, "File /opt/x/trace.py:309, in trace(model)", "ipython_frame", {("IPY_PATH", "/opt/x/trace.py")}),
    ("traceback", None, "Cell In[12], line 4", "ipython_cell", {("CELL", "[12]"), ("LINENO", "4")}),
    ("traceback", None, "│ /opt/venv/site-packages/optimum/neuron/training_args.py:82 in __post_init__      │", "rich_frame",
     {("RICH_PATH", "/opt/venv/site-packages/optimum/neuron/training_args.py"), ("LINENO", "82"), ("RICH_FUNC", "__post_init__")}),
    ("traceback", None, "│ /home/u/run_glue.py:622                                                         │", "rich_frame",
     {("RICH_PATH", "/home/u/run_glue.py"), ("LINENO", "622")}),  # `in <module>` pushed onto the next line
    ("traceback", None, "╭──────── Traceback (most recent call last) ────────╮", "python_header",
     {("RICH_HEADER", "╭──────── Traceback (most recent call last) ────────╮")}),
    ("traceback", None, ".../site-packages/optimum/modeling_base.py in from_pretrained(cls, model_id, export)",
     "ipython_legacy_frame", {("IPY_LEGACY_PATH", ".../site-packages/optimum/modeling_base.py")}),
    ("traceback", None, "<ipython-input-8-6a82917494e1> in <cell line: 2>()", "ipython_legacy_frame",
     {("IPY_LEGACY_PATH", "<ipython-input-8-6a82917494e1>"), ("IPY_LEGACY_CALL", "<cell line: 2>()")}),
    ("traceback", None, "<ipython-input-5-8575e7c3fa62> in <module>", "ipython_legacy_frame",
     {("IPY_LEGACY_CALL", "<module>")}),
    ("traceback", None, "#3  0x00007f3a1c in neuronxcc::Foo::run() from /opt/x/libwalrus.so", "native_frame",
     {("NATIVE_INDEX", "#3")}),
    ("traceback", None, "/home/u/model.py(118): forward", "torchscript_frame", {("TS_PATH", "/home/u/model.py")}),
    ("traceback", None, "/build/src/cmd/k8s-neuron-scheduler/routes.go:44 +0x825", "go_frame",
     {("GO_PATH", "/build/src/cmd/k8s-neuron-scheduler/routes.go"), ("LINENO", "44")}),
    ("traceback", None, "root = neuronxcc/starfish/penguin/targets/transforms/InlineNKIKernels.py", "root_frame",
     {("ROOT_PATH", "neuronxcc/starfish/penguin/targets/transforms/InlineNKIKernels.py")}),
    ("traceback", None, "RuntimeError: neuronx-cc failed with -9", "exception", {("EXC_NAME", "RuntimeError")}),
    # prefixes.lark (wrappers in front of the producer's line; the tree is the line)
    ("prefixes", None, "(RayTrainWorker pid=4242, ip=10.0.0.1) [rank3]: Traceback (most recent call last):", "start",
     {("RAY", "(RayTrainWorker pid=4242, ip=10.0.0.1) "), ("TORCHRUN", "[rank3]: ")}),
    ("prefixes", None, "| 1679087716684 | terminate called after throwing an instance of 'c10::Error'", "start",
     {("LOG_TABLE", "| 1679087716684 | ")}),
    ("prefixes", None, "2023-12-04T23:54:58,772 [INFO ] W-9000-m_1.0-stdout MODEL_LOG - Starting", "start",
     {("RELAYED", "2023-12-04T23:54:58,772 [INFO ] W-9000-m_1.0-stdout MODEL_LOG - ")}),
    ("prefixes", None, "INFO  PyProcess W-108-llama3-stdout: WARNING 07-09 11:38:18 utils.py:465] Pin memory", "start",
     {("RELAYED", "INFO  PyProcess W-108-llama3-stdout: ")}),
    ("prefixes", None, "nrtd[17]: [NRTD:nrtd_main] Failed to initialize devices", "start", {("SYSLOG_TAG", "nrtd[17]: ")}),
    ("prefixes", None, "[1,mpirank:0,algo-1]<stderr>:Traceback (most recent call last):", "start",
     {("MPI_TAG", "[1,mpirank:0,algo-1]<stderr>:")}),
    ("prefixes", None, "2024-05-01T10:00:07.123Z\tRuntimeError: x", "start", {("CLOUDWATCH", "2024-05-01T10:00:07.123Z\t")}),
    ("prefixes", None, " 12: RuntimeError: x", "start", {("SRUN_LABEL", " 12: ")}),
    ("prefixes", None, "[W707 10:30:24.516310831 NeuronLogging.h:103] Warning: [Neuron] lock timed out", "start",
     {("C10_LOG", "[W707 10:30:24.516310831 NeuronLogging.h:103] Warning: ")}),
    ("prefixes", None, "[    9.892601] neuron:fw_io_execute_request: seq: 2, cmd: 1 timed out", "start",
     {("DMESG", "[    9.892601] ")}),
    ("prefixes", None, "[Tue Jul  8 23:25:50 2025] neuron: loading out-of-tree module", "start",
     {("DMESG", "[Tue Jul  8 23:25:50 2025] ")}),
    ("prefixes", None, "E       RuntimeError: x", "start", {("PYTEST", "E       ")}),
    ("prefixes", None, "2024-05-01 10:00:07,123 - train - ERROR - boom", "start",
     {("PYLOG_DASHED", "2024-05-01 10:00:07,123 - train - ERROR - ")}),
    ("prefixes", None, "WARNING  vllm_neuron.platform:platform.py:280 Pin memory is not supported on Neuron.", "start",
     {("PYLOG_PADDED", "WARNING  vllm_neuron.platform:platform.py:280 ")}),
    ("prefixes", None, "[2026-07-01 06:55:12] WARNING platform.py:430: Pin memory is not supported on Neuron.", "start",
     {("STAMPED_LOGGER", "[2026-07-01 06:55:12] WARNING platform.py:430: ")}),
    # messages.lark (one start rule per shape found inside a message)
    ("messages", "diagnostic", "[INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers", "coded",
     {("SEVERITY_TAG", "[INTERNAL_ERROR]"), ("CODE", "NCC_IXLV002")}),
    ("messages", "diagnostic", "loc(fused[1]): error: [NCC_EVRF029] Operation sort is not supported", "mlir_coded",
     {("LOC", "fused[1]"), ("CODE", "NCC_EVRF029")}),
    ("messages", "diagnostic", "[ERROR] [IXLV002] Expected core barriers", "coded", {("CODE", "IXLV002")}),
    ("messages", "bare_diagnostic", "RuntimeError: NCC_EVRF029: Operation sort", "bare_diagnostic",
     {("BARE_CODE", "NCC_EVRF029"), ("TEXT", ": Operation sort")}),
    ("messages", "named_status", "the run returned NRT_TIMEOUT again", "named_status", {("STATUS_NAME", "NRT_TIMEOUT")}),
    ("messages", "exit_status", "neuronx-cc failed with 70 (see the log)", "exit_status", {("TEXT", " (see the log)")}),
    ("messages", "exit_status", "RuntimeError: neuronx-cc failed with -9", "failed_with", {("INT", "-9")}),
    ("messages", "exit_status", "Subcommand returned with exitcode=70", "exitcode", {("INT", "70")}),
    ("messages", "exit_status", "Command '['neuronx-cc']' died with <Signals.SIGKILL: 9>.", "died_with",
     {("SIGNAL", "SIGKILL")}),
    ("messages", "exit_status", "returned non-zero exit status 70.", "nonzero", {("INT", "70")}),
    ("messages", "exit_status", "Non-zero exit status (137) for command: /venv/neuroncc/starfish/bin/pre_sched",
     "stage_nonzero", {("INT", "137")}),
    ("messages", "exit_status", "INFO:Neuron:Compile command returned: -9", "command_returned", {("INT", "-9")}),
    ("messages", "outcome", "^Csignal: interrupt", "interrupted", {("INTERRUPTED", "^C")}),
    ("messages", "outcome", "Shard process was signaled to shutdown with signal 9 rank=0", "signalled",
     {("SIGNALLED", "signaled to shutdown with signal 9")}),
    # a shell's, container's or pool's exit code of 128 + the signal
    ("messages", "outcome", "INFO ||PARALLEL||: worker 3 exited with exit code 137", "signalled",
     {("SIGNALLED", "exited with exit code 137")}),
    # vLLM's engine: the processes it started that died, a signal's exit code negative
    ("messages", "outcome", "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): "
     "{'EngineCore_DP0': -9}", "signalled", {("SIGNALLED", "Failed core proc(s): {'EngineCore_DP0': -9")}),
    ("messages", "nrt_status", "err: 1006 (NRT_EXEC_OOB)", "nrt_status", {("TEXT", " (NRT_EXEC_OOB)")}),
    ("messages", "nrt_status", "Inference completed with err: 1006", "err_number", {("INT", "1006")}),
    ("messages", "nrt_status", 'nrt_load status=1, error message="x"', "api_status", {("API", "nrt_load")}),
    ("messages", "nrt_status", "load failed with status 4", "with_status", {("INT", "4")}),
    ("messages", "nrt_status", "Failed load model with Neuron-RTD Error. Neuron-RTD Status Code: 9", "daemon_number",
     {("INT", "9")}),
    ("messages", "nrt_status", 'grpc status code 0, error message ""; nrt status code 1004, details ""', "daemon_number",
     {("INT", "1004")}),
    ("messages", "nrt_status", "Failure: NRT_EXEC_OOB in nrt_execute()", "failure_name",
     {("STATUS_NAME", "NRT_EXEC_OOB"), ("API", "nrt_execute")}),
    ("messages", "nrt_status", "NRTD response code 'NERR_RESOURCE' (4)", "legacy_name", {("LEGACY_STATUS", "NERR_RESOURCE")}),
    ("messages", "nrt_status", "Could not load the model status=2 message=Invalid", "status_message", {("INT", "2")}),
    ("messages", "outcome", "Killed python train.py", "outcome", {("TEXT", " python train.py")}),
    ("messages", "outcome", "bash: line 1:  4242 Killed   neuronx-cc compile", "killed", {("KILLED_WORD", "Killed")}),
    ("messages", "outcome", "Out of memory: Killed process 4242 (neuronx-cc)", "oom_killed", set()),
    ("messages", "outcome", "Segmentation fault (core dumped)", "crash_signal", {("CRASH_SIGNAL", "Segmentation fault")}),
    ("messages", "api_call", "nrt_load API:IN: (model=x)", "api_call", {("API", "nrt_load"), ("API_PHASE", "IN")}),
    ("messages", "env_setting", "running with XLA_USE_BF16=1 set", "env_setting", {("ENV_NAME", "XLA_USE_BF16")}),
    ("messages", "instance_type", "on a trn1.32xlarge host", "instance_type", {("INSTANCE", "trn1.32xlarge")}),
    ("traceback", None, "\tat ai.djl.serving.wlm.WorkerThread$Builder.build(WorkerThread.java:344) ~[wlm-0.29.0.jar:?]",
     "java_frame", {("JAVA_CALL", "ai.djl.serving.wlm.WorkerThread$Builder.build"), ("JAVA_SOURCE", "WorkerThread.java:344")}),
    ("traceback", None, "python: /opt/KaenaRuntime/tdrv/tensor.c:185: tensor_set_slice: Assertion `size >= n' failed.",
     "assert_frame", {("ASSERT_SITE", "python: /opt/KaenaRuntime/tdrv/tensor.c:185: ")}),
    ("traceback", None, "Assertion failure: bad_use.empty()  [inst_visitor.cpp:632]", "check_frame",
     {("CHECK_SITE", "  [inst_visitor.cpp:632]")}),
    ("traceback", None, 'Thread 854 (active+gil): "MainThread"', "live_thread", {("LIVE_THREAD", "Thread 854 (active+gil):")}),
    ("traceback", None, "    remove (torch/fx/graph.py:1169)", "pyspy_frame",
     {("PYSPY_FUNC", "remove"), ("PYSPY_PATH", "torch/fx/graph.py"), ("LINENO", "1169")}),
    ("traceback", None, "neuronxcc/nki/_torch_xla.py:129: in neuronxcc.nki._torch_xla.PyTorchXLAKernel.__call__",
     "pytest_frame", {("PYTEST_PATH", "neuronxcc/nki/_torch_xla.py"), ("LINENO", "129")}),
    ("traceback", None, "Caused by: java.util.concurrent.TimeoutException", "exception",
     {("JAVA_CAUSE", "Caused by: "), ("EXC_NAME", "java.util.concurrent.TimeoutException")}),
    ("messages", "package_version", "nki==0.3.0 and more", "package_version", {("TEXT", " and more")}),
    ("messages", "package_version", "Neuron SDK 2.29 (neuronx-cc 2.24.5133.0)", "named_version",
     {("PKG_NAME", "Neuron SDK"), ("VERSION", "2.29")}),
    ("messages", "package_version", "cache/neuronxcc-2.23.6484.0+3b612583/MODULE_1", "cache_dir",
     {("VERSION", "2.23.6484.0+3b612583")}),
]

# (grammar, start rule or None, line, the alternative it must not be read as)
NEAR_MISSES = [
    ("compiler", None, "2024-08-15T14:51:41Z Running birverifier", "driver_line"),  # a timing line: no level
    ("compiler", None, "2024-08-15T14:51:41Z ERROR: [x]: failed", "driver_line"),  # a level word, not a level field
    ("compiler", None, "ERROR [main]: connection refused", "untimed_driver_line"),  # another tool's: no pid
    ("compiler", None, "06/16/2021 08:46:36 ERROR [neuron-cc]: x", "legacy_line"),  # no AM/PM
    ("compiler", None, "2024-08-15T14:51:41Z ERROR 3835 [x]: failed", "timing_line"),  # a level makes it a driver line
    ("traceback", None, "at least one worker(s) failed", "java_frame"),  # prose: no Class.method(Source)
    ("traceback", None, "Caused by: a full disk", "exception"),  # no exception class follows
    ("traceback", None, "Thread 3 finished (see below)", "live_thread"),  # no (active|idle) state
    ("traceback", None, "error in module (foo.py:12)", "pyspy_frame"),  # prose before the location
    ("traceback", None, "see tests/test_x.py:12: in the fixture", "pytest_frame"),  # prose before the file
    ("traceback", None, "tests/test_x.py:12: indentation is off", "pytest_frame"),  # a linter's remark, no call
    ("traceback", None, "loops.c.src:202:20: internal compiler error: in convert_move", "assert_frame"),  # no assertion
    ("traceback", None, "Assertion failure: bad_use.empty()  [see the notes]", "check_frame"),  # no source file
    ("traceback", None, "Assertion failure: a [x.cpp:1] was seen", "check_frame"),  # the site does not end the line
    ("compiler", None, "*" * 12, "ice_border"),  # too short for the banner's border
    ("compiler", None, "An Internal Compiler Error has occurred in pass X", "ice_title"),
    ("compiler", None, "Error classes: A, B", "ice_field"),
    ("compiler", None, "  HWM version 2.10 was installed by the image", "ice_version"),  # prose after the item
    ("compiler", None, "NeuronX Compiler version 2.23.6484.0 Python version 3.12.3 HWM version 2.23", "ice_version"),
    ("compiler", None, "Diagnostic logs stored in", "ice_logs"),  # no path
    ("compiler", None, "=== BIR verification passed ===", "bir_header"),
    ("compiler", None, "Reasons: none", "bir_field"),
    ("compiler", None, "Instruction: DMACopy", "bir_instruction"),  # a BIR block's field, not an instruction error
    ("compiler", None, "SG-WARNING: File a.cpp:207", "sg_error"),
    ("runtime", None, "2024-06-26 00:32:47.943821 30294:32381 ERROR  TDRV:tdrv_init x", "nrt_line"),  # numeric month
    ("runtime", None, "NRT: 26638 ERROR TDRV:db failed", "syslog_line"),  # no thread id
    ("runtime", None, "30294:32381 ERROR  tdrv init failed", "bare_line"),  # no MODULE:function head
    ("runtime", None, "ERROR HTTP:500 from the metadata service", "untimed_line"),  # not a snake_case function
    ("runtime", None, "ERROR  DB:connect_pool  could not connect", "untimed_line"),  # not a module of the runtime
    ("runtime", None, "[INFO] compiling the model", "daemon_line"),  # a bracketed level word, not MODULE:function
    ("runtime", None, "[NCC_IXLV002] Expected core barriers", "daemon_line"),  # a code, not a daemon head
    ("runtime", None, "2023-Aug-01 16:14:43.0210 332066:332508 [31] bootstrap.cc:89 NCCL WARN x", "ccom_line"),
    ("runtime", None, "437596:439671 net_plugin.cc:97 CCOM WARN x", "ccom_line"),  # no rank: another tool's pid:tid
    ("runtime", None, "cut here", "cut_here"),  # the mark is bracketed
    ("runtime", None, "[ cut here ]", "cut_to_here"),
    ("framework", None, "2024-04-12 07:01:02.000123: 4242 ERROR NEURON_CC_WRAPPER: failed", "wrapper_line"),
    ("framework", None, "2026-03-30 13:32:48 ERROR: Failed", "nxdi_line"),  # the level is bracketed
    ("framework", None, "46247 items [INFO]: done", "nxdi_line"),  # a count in prose, not a pid before the level
    ("framework", None, "Fatal: something", "glog_line"),  # not a glog letter-and-space head
    ("framework", None, "see train.py:12: the Warning: about batch size", "python_warning"),  # no category before the colon
    ("framework", None, "F0501 released 1234 a.cc:2] x", "glog_header_line"),  # no clock after the month and day
    ("framework", None, "ERROR[0004] Processing failed", "logrus_line"),  # logrus cuts the level to four letters
    ("environment", None, "numpy/unknown,now 1.26.4 amd64", "apt_line"),  # not a Neuron-side package
    ("environment", None, "numpy 1.26.4", "pip_line"),
    ("environment", None, "torch-neuronx>=2.1", "freeze_line"),  # a requirement, not a pinned install
    ("environment", None, "NeuronX Compiler version unknown", "cc_version"),
    ("environment", None, "export PATH=/opt/bin", "env_assign"),  # not a Neuron-side variable
    ("environment", None, "os.environ.get('XLA_USE_BF16')", "setenv_call"),
    ("traceback", None, "Please see the traceback above", "python_header"),
    ("traceback", None, "Traceback (most recent call last):", "ipython_header"),  # Python's: no exception before it
    ("traceback", None, "Current thread 0x00007f3a (most recent call last):", "faulthandler_header"),
    ("traceback", None, "Thread 854 (idle): \"MainThread\"", "faulthandler_header"),  # py-spy's, innermost first too
    ("traceback", None, 'File "a.py" was not found', "frame"),
    ("traceback", None, "File /opt/x/trace.py, in trace", "ipython_frame"),  # no :line
    ("traceback", None, "Cell In twelve", "ipython_cell"),
    ("traceback", None, "│ Sub-Pass  │ Illegal Instructions Detected │ New Instructions Generated │", "rich_frame"),  # a table
    ("traceback", None, "│ see run_glue.py:622 in the script   │", "rich_frame"),  # prose before the path
    ("traceback", None, "│ step:10                     │", "rich_frame"),  # a table's row: no Python file
    ("traceback", None, "model.py in the folder is old", "ipython_legacy_frame"),  # prose: no call after `in`
    ("traceback", None, "model.py in main", "ipython_legacy_frame"),  # a function is called: parentheses
    ("traceback", None, "#include <stdio.h>", "native_frame"),
    ("traceback", None, "/home/u/model.py: forward", "torchscript_frame"),
    ("traceback", None, "/usr/lib/go/doc.go is missing", "go_frame"),  # a .go path without :line
    ("traceback", None, "root = True", "root_frame"),  # an assignment, no path
    ("traceback", None, "Please see the traceback above", "exception"),
    ("prefixes", None, "RuntimeError: (pid 4242) failed", "start"),  # a wrapper's words inside a line, not in front
    ("prefixes", None, "10:00:07 started", "start"),  # a clock is no task label
    ("prefixes", None, "[W707 10:30:24] NeuronLogging.h:103 x", "start"),  # PyTorch's logger stamps fractions of a second
    ("prefixes", None, "ERROR  in train:step.py, line 3", "start"),  # pytest's format names file.py:LINE after the logger
    ("prefixes", None, "[9.89] neuron: x", "start"),  # dmesg prints six decimals
    ("prefixes", None, "2024-05-01 10:00:07,123 - train - boom", "start"),  # no level: not the logger's format
    ("prefixes", None, "2024-05-01T10:00:07.123Z RuntimeError: x", "start"),  # a space, not the export's tab
    ("messages", "diagnostic", "[NCC_IXLV] Expected core barriers", "coded"),  # no digits: not a code
    ("messages", "diagnostic", "loc(fused[1]): warning: [NCC_EVRF029] x", "mlir_coded"),
    ("messages", "exit_status", "the compile exited with 70", "exit_status"),
    ("messages", "exit_status", "neuronx-cc failed with an error", "failed_with"),
    ("messages", "exit_status", "returned with exitcode 70", "exitcode"),  # no `=`
    ("messages", "exit_status", "died with SIGKILL", "died_with"),
    ("messages", "diagnostic", "[ERROR] [XLV0002] five digits after no class letter", "coded"),
    ("messages", "bare_diagnostic", "see [NCC_IXLV002] above", "bare_diagnostic"),  # bracketed: `diagnostic`'s
    ("messages", "bare_diagnostic", "NCC_IXLV02 and MYNCC_IXLV002", "bare_diagnostic"),  # two digits; inside a word
    ("messages", "named_status", "nrt_execute returned an error", "named_status"),  # an API name, not a status
    ("messages", "exit_status", "the compile exited early", "nonzero"),
    ("messages", "exit_status", "Non-zero exit status is expected from this probe", "stage_nonzero"),
    ("messages", "nrt_status", "the status of the model is unknown", "nrt_status"),
    ("messages", "nrt_status", "err: none", "err_number"),
    ("messages", "nrt_status", "grpc status code 14, unavailable", "daemon_number"),  # gRPC's own code is no NRT status
    ("messages", "nrt_status", "libnrt status code 4 from the loader", "daemon_number"),  # nrt inside another word
    ("messages", "nrt_status", "neuron-rtdx status code 4", "daemon_number"),  # another name that starts like it
    ("messages", "nrt_status", "HTTP response status=200 OK", "api_status"),
    ("messages", "nrt_status", "exit status 1", "with_status"),  # an exit status, not a runtime status
    ("messages", "nrt_status", "Failure: timeout in nrt_execute()", "failure_name"),
    ("messages", "nrt_status", "NERROR_RESOURCE (4)", "legacy_name"),
    ("messages", "nrt_status", "status=2 msg=Invalid", "status_message"),
    ("messages", "outcome", "the worker was killed", "outcome"),  # lower case: prose, not the shell's report
    ("messages", "outcome", "Killed process 4242 after a timeout", "killed"),  # the OOM killer's words, no killer
    ("messages", "outcome", "Out of memory: retrying with a smaller batch", "oom_killed"),
    ("messages", "outcome", "Segmentation of the graph failed", "crash_signal"),
    ("messages", "exit_status", "the command returned: nothing", "command_returned"),  # no status after it
    ("messages", "outcome", "the process handles signal 9 by flushing its logs", "signalled"),  # not ended by it
    ("messages", "outcome", "the handler for an interrupt by the timer fired", "interrupted"),  # not a user's interrupt
    ("messages", "outcome", "Process 4242 got signal: 150 updates from its peers", "interrupted"),  # a count, not SIGTERM
    ("messages", "outcome", "Process finished with exit code 1370", "signalled"),  # not 128 + a signal
    ("messages", "outcome", "Process finished with exit code 1", "signalled"),  # a failure, not a signal
    ("messages", "outcome", "Failed core proc(s): {'EngineCore_DP0': 1}", "signalled"),  # an exit code, not a signal
    ("messages", "outcome", "Failed core proc(s): {'EngineCore_DP0': -90}", "signalled"),  # no signal ends with -90
    ("messages", "api_call", "nrt_load API: in progress", "api_call"),
    ("messages", "env_setting", "set XLA_USE_BF16 to 1", "env_setting"),
    ("messages", "instance_type", "on a trn1 host", "instance_type"),
    ("messages", "package_version", "torch 2.1.0 and numpy 1.26", "package_version"),  # not a Neuron-side package
    ("messages", "package_version", "neuronx-cc compile --target trn1", "named_version"),
    ("messages", "package_version", "neuronxcc-beta/MODULE_1", "cache_dir"),
]

GRAMMARS = sorted(path.stem for path in grammar_dir().glob("*.lark"))


@cache
def tree_parser(grammar: str) -> Lark:
    """The grammar without its transformer: it hands back the tree."""
    return build(grammar, (grammar_dir() / f"{grammar}.lark").read_text(encoding="utf-8"))


def tree_of(grammar: str, line: str, start: str | None) -> Tree | None:
    try:
        return tree_parser(grammar).parse(line, start=start)
    except Exception:  # lark's parse errors: the line has another shape
        return None


def alternatives_in(tree: Tree) -> set[str]:
    return {str(node.data) for node in tree.iter_subtrees()}


def tokens_in(tree: Tree) -> set[tuple[str, str]]:
    return {(token.type, str(token)) for token in tree.scan_values(lambda v: isinstance(v, Token))}


def alternatives(grammar: str) -> set[str]:
    """Every alternative a tree can name: rules and `->` aliases, less inlined ones (`?rule`, `_rule`)."""
    rules = tree_parser(grammar).rules
    return {str(rule.alias or rule.origin.name) for rule in rules
            if not rule.options.expand1 and not str(rule.alias or rule.origin.name).startswith("_")}


@pytest.mark.parametrize("grammar,start,line,alternative,parts", CASES, ids=[c[3] for c in CASES])
def test_each_alternative_parses_its_shape(grammar, start, line, alternative, parts):
    tree = tree_of(grammar, line, start)
    assert tree is not None, f"{grammar}: {line!r} did not parse"
    assert alternative in alternatives_in(tree), tree.pretty()
    assert parts <= tokens_in(tree), tree.pretty()


@pytest.mark.parametrize("grammar,start,line,alternative", NEAR_MISSES, ids=[m[3] for m in NEAR_MISSES])
def test_a_near_miss_is_not_read_as_that_shape(grammar, start, line, alternative):
    tree = tree_of(grammar, line, start)
    assert tree is None or alternative not in alternatives_in(tree), tree.pretty()


@pytest.mark.parametrize("grammar", GRAMMARS)
def test_every_alternative_has_a_case_and_a_near_miss(grammar):
    names = alternatives(grammar)
    assert names, f"{grammar}: no alternatives found"
    assert not names - {c[3] for c in CASES if c[0] == grammar}, "alternatives without a case"
    assert not names - {m[3] for m in NEAR_MISSES if m[0] == grammar}, "alternatives without a near miss"


@pytest.mark.parametrize("grammar", GRAMMARS)
def test_every_alternative_has_its_transformer_method(grammar):
    """An alternative the transformer does not know would come back as a bare lark Tree."""
    transformer = TRANSFORMERS[grammar]
    assert not {name for name in alternatives(grammar) if not hasattr(transformer, name)}


def test_the_shared_terminals_are_imported_not_redefined():
    shared = (grammar_dir() / "shared" / "terminals.lark").read_text(encoding="utf-8")
    names = [line.split(":")[0] for line in shared.splitlines() if line[:1].isupper() or line.startswith("_")]
    for grammar in GRAMMARS:
        text = (grammar_dir() / f"{grammar}.lark").read_text(encoding="utf-8")
        redefined = [name for name in names if f"\n{name}:" in text or f"\n{name}." in text]
        assert not redefined, f"{grammar}.lark defines {redefined} again: %import them from shared.terminals"


@pytest.mark.parametrize("grammar", GRAMMARS)
def test_a_line_of_another_shape_fails_without_a_scanner_of_the_whole_grammar(grammar):
    """parse() drops lark's error, so lark's nicer message (which builds a scanner of every terminal of the
    grammar first, half the scanners of a cold run) is never asked for; every case and near miss reads as
    lark's own contextual lexer reads it."""
    from lark.exceptions import LarkError

    from nforensics.parse.grammars import _START_RULES, grammar_text

    own = Lark(grammar_text(grammar), parser="lalr", lexer="contextual", start=_START_RULES.get(grammar, "start"),
               import_paths=[str(grammar_dir())], transformer=TRANSFORMERS[grammar]())
    for _, start, line, *_ in (c for c in [*CASES, *NEAR_MISSES] if c[0] == grammar):
        try:
            expected = own.parse(line, start=start)
        except LarkError:
            expected = None
        assert parse(grammar, line, start) == expected, line
    assert parser(grammar).parser.lexer.root_lexer._scanner is None
