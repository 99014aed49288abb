"""The grammars' transformers (nforensics/parse/transformers.py, message_transformer.py): what each
alternative's tree becomes. Every shape of nforensics/parse/shapes.py (and every syntax of frame) is built
from a line of its kind with its parts typed and cleaned, and a near miss of each does not become it. The
trees themselves are tests/test_grammars.py."""

from __future__ import annotations

import typing

import pytest

from nforensics.parse import shapes
from nforensics.parse.grammars import parse
from nforensics.parse.shapes import (
    ApiTrace,
    BirField,
    BirHeader,
    BirInstruction,
    CodedMessage,
    CutMark,
    EnvSetting,
    ExceptionLine,
    ExitCode,
    IceField,
    IceMark,
    InstanceType,
    LiveThread,
    PackageVersion,
    ProcessEnd,
    ProducerLine,
    SgError,
    StatusMention,
    TracebackHeader,
    Unwrapped,
)
from nforensics.records import Frame, FrameSyntax


def frame(file: str, lineno: int | None, function: str | None, syntax: str = "python") -> Frame:
    return Frame.model_construct(file=file, lineno=lineno, function=function, syntax=syntax)


# (grammar, start rule or None, line, what the transformer makes of it)
CASES = [
    # compiler.lark: the driver's message keeps its own indentation past the one space after `]:`
    ("compiler", None, "2024-08-15T14:51:41Z ERROR 3835 [sg0000/Tensorizer/BirCodeGenLoop]:   tensorcopy failed",
     ProducerLine("compiler", "  tensorcopy failed", "ERROR", "sg0000/Tensorizer/BirCodeGenLoop", 3835,
                  "2024-08-15T14:51:41Z")),
    ("compiler", None, "USER 48240 [sg0000/Tensorizer/TensorCopyElim]: Running TensorCopyElim",
     ProducerLine("compiler", "Running TensorCopyElim", "USER", "sg0000/Tensorizer/TensorCopyElim", 48240, None)),
    ("compiler", None, "06/16/2021 08:46:36 AM ERROR [neuron-cc]: compilation failed",
     ProducerLine("compiler", "compilation failed", "ERROR", "neuron-cc", None, "06/16/2021 08:46:36 AM")),
    ("compiler", None, "2023-12-12T17:28:24Z Running birverifier",
     ProducerLine("compiler", "Running birverifier", timestamp="2023-12-12T17:28:24Z")),
    ("compiler", None, "*" * 60, IceMark(title=False)),
    ("compiler", None, " An Internal Compiler Error has occurred", IceMark(title=True)),
    ("compiler", None, "Error class:    AssertionError  ", IceField("Error class", "AssertionError")),
    ("compiler", None, "Internal details:", IceField("Internal details", "")),
    ("compiler", None, "  Running on AMI ami-01257e71ecb2f431c", IceField("Version information", "Running on AMI ami-01257e71ecb2f431c")),
    ("compiler", None, "Diagnostic logs stored in /tmp/w/log-neuron-cc.txt ", IceField("Diagnostic logs", "/tmp/w/log-neuron-cc.txt")),
    ("compiler", None, "what(): === BIR error ===", BirHeader("=== BIR error ===")),
    ("compiler", None, "Reason: Expect AP datatype to be int32", BirField("Reason", "Expect AP datatype to be int32")),
    ("compiler", None, "Instruction DMACopy inst.32: DMA Copy in/out shape must match",
     BirInstruction("DMACopy", "inst.32", "DMA Copy in/out shape must match")),
    ("compiler", None, "SG-ERROR: File a.cpp:207, Assertion 'x' failed", SgError("File a.cpp:207, Assertion 'x' failed")),
    # runtime.lark
    ("runtime", None, "2024-Jun-26 00:32:47.943821 30294:32381 ERROR  TDRV:tdrv_init   could not open",
     ProducerLine("runtime", "could not open", "ERROR", "TDRV:tdrv_init", 30294, "2024-Jun-26 00:32:47.943821",
                  "tdrv_init")),
    ("runtime", None, "NRT:  26638:26638 ERROR  NRT:nrt_load API:IN: (model=x)",
     ProducerLine("runtime", "API:IN: (model=x)", "ERROR", "NRT:nrt_load", 26638, None, "nrt_load")),
    ("runtime", None, "30294:32381 WARN  NRT:nrt_init", ProducerLine("runtime", "", "WARN", "NRT:nrt_init", 30294,
                                                                      None, "nrt_init")),
    ("runtime", None, "[NMGR:kmgr_create_eg] Not enough free NCs", ProducerLine("runtime", "Not enough free NCs",
                                                                             component="NMGR:kmgr_create_eg")),
    ("runtime", None, "2023-Aug-01 16:14:43.0210 332066:332508 [31] bootstrap.cc:89 CCOM WARN Timeout waiting",
     ProducerLine("runtime", "Timeout waiting", "WARN", "CCOM", 332066, "2023-Aug-01 16:14:43.0210")),
    ("runtime", None, "332066:332508 [31] bootstrap.cc:89 CCOM WARN Timeout waiting",
     ProducerLine("runtime", "Timeout waiting", "WARN", "CCOM", 332066, None)),
    ("runtime", None, "------------[ cut here ]------------", CutMark(opens=True)),
    ("runtime", None, "------------[ cut to here ]------------", CutMark(opens=False)),
    # framework.lark
    ("framework", None, "2024-04-12 07:01:02.000123: 4242 ERROR ||NEURON_CC_WRAPPER||: Compilation failed ",
     ProducerLine("framework", "Compilation failed", "ERROR", "NEURON_CC_WRAPPER", 4242, "2024-04-12 07:01:02.000123")),
    ("framework", None, "2026-03-30 13:32:48 [ERROR]: Failed compilation",
     ProducerLine("framework", "Failed compilation", "ERROR", None, None, "2026-03-30 13:32:48")),
    ("framework", None, "F external/xla/parse_flags_from_env.cc:224] Unknown flags",
     ProducerLine("framework", "Unknown flags", "F", "external/xla/parse_flags_from_env.cc:224")),
    ("framework", None, "E0501 10:00:00.123456  77 pjrt_plugin.cc:9] Init failed",
     ProducerLine("framework", "Init failed", "E", "pjrt_plugin.cc:9")),
    ("framework", None, "ERRO[0004] Processing failed", ProducerLine("framework", "Processing failed", "ERRO")),
    # environment.lark
    ("environment", None, "aws-neuronx-runtime-lib/unknown,now 2.21.41.0 amd64 [installed]",
     PackageVersion("aws-neuronx-runtime-lib", "2.21.41.0")),
    ("environment", None, "neuronx-cc                    2.14.213.0", PackageVersion("neuronx-cc", "2.14.213.0")),
    ("environment", None, "torch-neuronx==2.1.2.2.2.0", PackageVersion("torch-neuronx", "2.1.2.2.2.0")),
    ("environment", None, "NeuronX Compiler version 2.23.6484.0+3b612583", PackageVersion("neuronx-cc", "2.23.6484.0+3b612583")),
    ("environment", None, 'export NEURON_CC_FLAGS="--auto-cast=none" ', EnvSetting("NEURON_CC_FLAGS", "--auto-cast=none")),
    ("environment", None, "XLA_USE_BF16=", EnvSetting("XLA_USE_BF16", "")),
    ("environment", None, "os.environ['XLA_USE_BF16'] = '1'", EnvSetting("XLA_USE_BF16", "1")),
    # traceback.lark
    ("traceback", None, "Traceback (most recent call last):", TracebackHeader(None)),
    ("traceback", None, "StopIteration                             Traceback (most recent call last)",
     TracebackHeader("StopIteration")),
    ("traceback", None, "Thread 0x00007f11 (most recent call first):",
     TracebackHeader(None, innermost_first=True, other_thread=True)),
    ("traceback", None, "Current thread 0x00007f11 (most recent call first):", TracebackHeader(None, innermost_first=True)),
    ("traceback", None, '  File "neuronxcc/driver/jobs/WalrusDriver.py", line 232, in run',
     frame("neuronxcc/driver/jobs/WalrusDriver.py", 232, "run")),
    ("traceback", None, 'File "x.py", line 7', frame("x.py", 7, None)),
    ("traceback", None, "File /opt/x/trace.py:309, in trace(model)", frame("/opt/x/trace.py", 309, "trace(model)", "ipython")),
    ("traceback", None, "Cell In[12], line 4", frame("Cell In[12]", 4, None, "ipython")),
    ("traceback", None, "│ /opt/x/optimum/neuron/training_args.py:82 in __post_init__   │",
     frame("/opt/x/optimum/neuron/training_args.py", 82, "__post_init__", "rich")),
    ("traceback", None, "/opt/x/optimum/modeling_base.py in from_pretrained(cls, model_id)",
     frame("/opt/x/optimum/modeling_base.py", None, "from_pretrained(cls, model_id)", "ipython")),
    ("traceback", None, "#3  0x00007f3a1c in neuronxcc::Foo::run() from /opt/x/libwalrus.so",
     frame("/opt/x/libwalrus.so", None, "neuronxcc::Foo::run", "native")),
    ("traceback", None, "/home/u/model.py(118): forward", frame("/home/u/model.py", 118, "forward", "torchscript")),
    ("traceback", None, "/build/src/routes.go:44 +0x825", frame("/build/src/routes.go", 44, None, "go")),
    ("traceback", None, "\tat java.base/java.util.concurrent.CompletableFuture.timedGet(CompletableFuture.java:1960) ~[?:?]",
     frame("java/util/concurrent/CompletableFuture.java", 1960, "CompletableFuture.timedGet", "java")),
    ("traceback", None, "\tat java.lang.ClassLoader$NativeLibrary.load(Native Method)",
     frame("java/lang/ClassLoader.java", None, "ClassLoader$NativeLibrary.load", "java")),
    ("traceback", None, "Caused by: java.util.concurrent.TimeoutException",
     ExceptionLine("java.util.concurrent.TimeoutException", "")),
    ("traceback", None, "    remove (torch/fx/graph.py:1169)", frame("torch/fx/graph.py", 1169, "remove", "pyspy")),
    ("traceback", None, "trnfft/nki/dispatch.py:272: in _complex_mul_kernel",
     frame("trnfft/nki/dispatch.py", 272, "_complex_mul_kernel", "python")),
    ("traceback", None, 'Thread 0x7F3A1C (idle): "Thread-2"', LiveThread()),
    ("traceback", None, "python: /opt/KaenaRuntime/tdrv/tensor.c:185: tensor_set_slice: Assertion `n >= 1' failed.",
     frame("/opt/KaenaRuntime/tdrv/tensor.c", 185, "tensor_set_slice", "native")),
    ("traceback", None, "Assertion failure: bad_use.empty()  [inst_visitor.cpp:632]",
     frame("inst_visitor.cpp", 632, None, "native")),
    # neuronx-cc names the file of the pass that failed, a progress dot glued in front
    ("traceback", None, ".root = neuronxcc/starfish/penguin/targets/sunda/passes/SundaSizeTiling.py",
     frame("neuronxcc/starfish/penguin/targets/sunda/passes/SundaSizeTiling.py", None, None, "root")),
    ("traceback", None, "RuntimeError: neuronx-cc failed with -9 ", ExceptionLine("RuntimeError", "neuronx-cc failed with -9")),
    ("traceback", None, "StopIteration", ExceptionLine("StopIteration", "")),
    # prefixes.lark: the producer's own line behind every wrapper, and the level a logger's prefix gave it
    ("prefixes", None, "(RayTrainWorker pid=4242) [rank3]: Traceback (most recent call last):",
     Unwrapped("Traceback (most recent call last):")),
    ("prefixes", None, "[rank3]: ", Unwrapped("")),
    ("prefixes", None, "ERROR 12-10 20:13:47 [engine.py:366] RuntimeError: x", Unwrapped("RuntimeError: x", "ERROR")),
    ("prefixes", None, "2024-01-01 10:00:00,123::WARNING: lock failed", Unwrapped("lock failed", "WARNING")),
    ("prefixes", None, "[E1203 08:01:02.123456 ProcessGroupNCCL.cpp:42] boom", Unwrapped("boom", "ERROR")),
    ("prefixes", None, "[W707 10:30:24.516310831 NeuronLogging.h:103] Warning: x", Unwrapped("x", "WARNING")),
    ("prefixes", None, "[WARN ] PyProcess - W-1-model-stderr: RuntimeError: x", Unwrapped("RuntimeError: x")),
    ("prefixes", None, "2024-05-01 10:00:07,123 - train - ERROR - boom", Unwrapped("boom", "ERROR")),
    ("prefixes", None, "INFO     Neuron:model_builder.py:678 Done compilation", Unwrapped("Done compilation", "INFO")),
    # pytest's marker is of fixed width: a frame behind it keeps its own two spaces, no more
    ("prefixes", None, 'E         File "a.py", line 3, in f', Unwrapped('  File "a.py", line 3, in f')),
    # messages.lark
    ("messages", "diagnostic", "x [INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers [NCC_EOOM001] too",
     CodedMessage("NCC_IXLV002", "Expected core barriers [NCC_EOOM001] too", "INTERNAL_ERROR",
                  rest="Expected core barriers [NCC_EOOM001] too")),
    ("messages", "diagnostic", "[TEN404] (aten__add.1) Internal tensorizer error",
     CodedMessage("TEN404", "Internal tensorizer error", op="aten__add.1", rest=" Internal tensorizer error")),
    ("messages", "diagnostic", "loc(fused[1]): error: [NCC_EVRF029] Operation sort",
     CodedMessage("NCC_EVRF029", "Operation sort", location="fused[1]", rest="Operation sort")),
    ("messages", "exit_status", "RuntimeError: neuronx-cc failed with -9", ExitCode("neuronx-cc", -9)),
    ("messages", "exit_status", "Compiler compilation failed with 70", ExitCode("Compiler", 70)),
    ("messages", "exit_status", "Subcommand returned with exitcode=70", ExitCode("neuronx-cc", 70)),
    ("messages", "exit_status", "Command '...' died with <Signals.SIGKILL: 9>.", ExitCode("neuronx-cc", -9)),
    ("messages", "exit_status", "returned non-zero exit status 70.", ExitCode("neuronx-cc", 70)),
    ("messages", "nrt_status", "Inference completed with err: 1006", StatusMention(1006, "NRT_EXEC_OOB")),
    ("messages", "nrt_status", 'nrt_load status=4, error message="x"', StatusMention(4, "NRT_RESOURCE", "nrt_load")),
    ("messages", "nrt_status", "load failed with status 1006", StatusMention(1006, "NRT_EXEC_OOB")),
    # tensorflow-neuron on inf1 prints the runtime daemon's number: NRT's name only where the numberings agree
    ("messages", "nrt_status", 'nrt::infer_wait failed with grpc status code 0; nrt status code 4, details ""',
     StatusMention(4, "NRT_RESOURCE")),
    ("messages", "nrt_status", 'shard error code 13; nrt status code 7, details ""', StatusMention(7, None)),
    ("messages", "nrt_status", 'nrt::infer_wait failed with grpc status code 0; nrt status code 1004, details ""',
     StatusMention(1004, "NRT_EXEC_COMPLETED_WITH_ERR")),
    ("messages", "nrt_status", "Failure: NRT_EXEC_OOB in nrt_execute()", StatusMention(1006, "NRT_EXEC_OOB", "nrt_execute")),
    ("messages", "nrt_status", "model status=2 message=Invalid", StatusMention(2, "NRT_INVALID")),
    # a pre-2.x daemon name: its NRT namesake, else the status its number names, else the name as printed
    ("messages", "nrt_status", "NRTD response code 'NERR_RESOURCE' (4)", StatusMention(4, "NRT_RESOURCE")),
    ("messages", "nrt_status", "NERR_FOO (5)", StatusMention(5, "NRT_TIMEOUT")),
    # the daemon's NERR_RESOURCE_NC is 9, as NRT_LOAD_NOT_ENOUGH_NC is (aws-neuron-sdk#493)
    ("messages", "nrt_status", "NRTD response code 'NERR_RESOURCE_NC' (9) There were insufficent NCs",
     StatusMention(9, "NRT_LOAD_NOT_ENOUGH_NC")),
    # mxnet-neuron and tensorflow-neuron quote the daemon's number: 9 is known, 7 and 8 are its own
    ("messages", "nrt_status", 'Failed load model with Neuron-RTD Error. Neuron-RTD Status Code: 9, details: ""',
     StatusMention(9, "NRT_LOAD_NOT_ENOUGH_NC")),
    ("messages", "nrt_status", "Neuron-RTD Status Code: 7", StatusMention(7, None)),
    ("messages", "nrt_status", "NERR_FOO (7)", StatusMention(None, "NERR_FOO")),
    ("messages", "nrt_status", "got NERR_FOO", StatusMention(None, "NERR_FOO")),
    ("messages", "outcome", "bash: line 1:  4242 Killed   /opt/bin/neuronx-cc compile x",
     ProcessEnd("killed", 9, "neuronx-cc")),
    ("messages", "outcome", "Out of memory: Killed process 4242 (neuronx-cc)", ProcessEnd("killed", 9, "neuronx-cc")),
    ("messages", "outcome", "Segmentation fault (core dumped)", ProcessEnd("segfault", 11)),
    ("messages", "outcome", "Last State: Terminated Reason: OOMKilled Exit Code: 137", ProcessEnd("killed", 9)),
    ("messages", "outcome", "container exited with code 139", ProcessEnd("segfault", 11)),
    ("messages", "outcome", "Aborted (core dumped) python", ProcessEnd("abort", 6)),
    ("messages", "outcome", "Failed core proc(s): {'EngineCore_DP0': -9}", ProcessEnd("killed", 9)),
    ("messages", "outcome", "Failed core proc(s): {'EngineCore_DP0': -11, 'EngineCore_DP1': -9}", ProcessEnd("segfault", 11)),
    ("messages", "outcome", "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down",
     ProcessEnd("interrupted", 15)),
    ("messages", "outcome", "torch.distributed.elastic.multiprocessing.api.SignalException: Process 44570 got signal: 15",
     ProcessEnd("interrupted", 15)),
    ("messages", "api_call", "NRT:nrt_execute API:OUT", ApiTrace("nrt_execute", "OUT")),
    ("messages", "env_setting", "with XLA_USE_BF16=1, NEURON_CC_FLAGS='-O1'",
     EnvSetting("XLA_USE_BF16", "1", ", NEURON_CC_FLAGS='-O1'")),
    ("messages", "instance_type", "on a trn1.32xlarge host", InstanceType("trn1.32xlarge")),
    ("messages", "package_version", "Neuron SDK 2.29 (neuronx-cc 2.24.5133.0)",
     PackageVersion("Neuron-SDK", "2.29", " (neuronx-cc 2.24.5133.0)")),
    ("messages", "package_version", "cache/neuronxcc-2.23.6484.0+3b612583/MODULE_1",
     PackageVersion("neuronx-cc", "2.23.6484.0+3b612583", "/MODULE_1")),
]

# (grammar, start rule or None, line, the kind of shape it must not become)
NEAR_MISSES = [
    ("compiler", None, "2024-08-15 14:51:41 ERROR 3835 [x]: failed", "ProducerLine/compiler"),  # a framework timestamp
    ("compiler", None, "*" * 12, "IceMark"),  # too short for the banner's border
    ("compiler", None, "An Internal Compiler Error has occurred in pass X", "IceMark"),
    ("compiler", None, "Error classes: A, B", "IceField"),
    ("compiler", None, "=== BIR verification passed ===", "BirHeader"),
    ("compiler", None, "Reasons: none", "BirField"),
    ("compiler", None, "Instruction: DMACopy", "BirInstruction"),
    ("compiler", None, "SG-WARNING: File a.cpp:207", "SgError"),
    ("runtime", None, "2024-06-26 00:32:47.943821 30294:32381 ERROR  TDRV:tdrv_init x", "ProducerLine/runtime"),
    ("runtime", None, "cut here", "CutMark"),
    ("framework", None, "Fatal: something", "ProducerLine/framework"),
    ("environment", None, "numpy 1.26.4", "PackageVersion"),
    ("environment", None, "export PATH=/opt/bin", "EnvSetting"),
    ("traceback", None, "Please see the traceback above", "TracebackHeader"),
    ("traceback", None, "Please see the traceback above", "ExceptionLine"),
    ("traceback", None, 'File "a.py" was not found', "Frame/python"),
    ("traceback", None, "Cell In twelve", "Frame/ipython"),
    ("traceback", None, "│ neuron-cc:2.14 in use │", "Frame/rich"),  # a version in a table, not a .py path's line
    ("traceback", None, "model.py in the folder is old", "Frame/ipython"),
    ("traceback", None, "#include <stdio.h>", "Frame/native"),
    ("traceback", None, "/home/u/model.py: forward", "Frame/torchscript"),
    ("traceback", None, "/usr/lib/go/doc.go is missing", "Frame/go"),
    ("traceback", None, "at least one worker failed (see above)", "Frame/java"),  # prose, no Class.method(Source)
    ("traceback", None, "see the notes (README.py:3) first", "Frame/pyspy"),  # prose before the location
    ("traceback", None, "Thread 2 (started): worker", "LiveThread"),
    ("traceback", None, "root = True", "Frame/root"),  # an assignment, no path
    ("prefixes", None, "RuntimeError: (pid 4242) failed", "Unwrapped"),
    ("messages", "diagnostic", "[NCC_IXLV] Expected core barriers", "CodedMessage"),
    ("messages", "exit_status", "the compile exited early", "ExitCode"),
    ("messages", "nrt_status", "HTTP response status=200 OK", "StatusMention"),
    ("messages", "outcome", "Killed process 4242 after a timeout", "ProcessEnd"),  # the OOM killer's words, no killer
    ("messages", "outcome", "Fatal Python error: Aborted", "ProcessEnd"),  # not `Aborted (core dumped)`
    ("messages", "api_call", "nrt_load API: in progress", "ApiTrace"),
    ("messages", "env_setting", "set XLA_USE_BF16 to 1", "EnvSetting"),
    ("messages", "instance_type", "on a trn1 host", "InstanceType"),
    ("messages", "package_version", "torch 2.1.0 and numpy 1.26", "PackageVersion"),
]


def kind(value: object) -> str:
    if isinstance(value, Frame):
        return f"Frame/{value.syntax}"
    if isinstance(value, ProducerLine):
        return f"ProducerLine/{value.producer}"
    return type(value).__name__


def every_kind() -> set[str]:
    classes = {name for name, value in vars(shapes).items()
               if isinstance(value, type) and issubclass(value, tuple) and value.__module__ == shapes.__name__}
    producers = {f"ProducerLine/{p}" for p in typing.get_args(shapes.Producer)}
    return classes - {"ProducerLine"} | producers | {f"Frame/{s}" for s in typing.get_args(FrameSyntax)}


@pytest.mark.parametrize("grammar,start,line,expected", CASES, ids=[f"{c[0]}-{kind(c[3])}" for c in CASES])
def test_each_line_becomes_its_shape(grammar, start, line, expected):
    found = parse(grammar, line, start)
    assert (kind(found), found) == (kind(expected), expected)  # shapes are tuples: equal parts are not enough


@pytest.mark.parametrize("grammar,start,line,shape", NEAR_MISSES, ids=[m[3] for m in NEAR_MISSES])
def test_a_near_miss_does_not_become_that_shape(grammar, start, line, shape):
    found = parse(grammar, line, start)
    assert found is None or kind(found) != shape, found


def test_every_shape_has_a_case_and_a_near_miss():
    kinds = every_kind()
    assert not kinds - {kind(c[3]) for c in CASES}, "shapes without a case"
    assert not kinds - {m[3] for m in NEAR_MISSES}, "shapes without a near miss"


def test_shapes_become_records_at_their_line():
    assert CodedMessage("TEN404", "x", op="a.1").at(7).model_dump() == {
        "code": "TEN404", "severity": None, "message": "x", "op": "a.1", "location": None, "line": 7, "end_line": 7}
    assert StatusMention(1006, "NRT_EXEC_OOB", "nrt_execute").at(3).model_dump() == {
        "line": 3, "number": 1006, "name": "NRT_EXEC_OOB", "api": "nrt_execute"}
    assert ExitCode("neuronx-cc", 70).at(2).model_dump() == {"line": 2, "tool": "neuronx-cc", "code": 70}
    assert ApiTrace("nrt_load", "IN").at(4).model_dump() == {"line": 4, "api": "nrt_load", "phase": "IN"}
    assert ProcessEnd("killed", 9, "python").at(5, "Killed python").model_dump() == {
        "line": 5, "kind": "killed", "text": "Killed python", "process": "python", "signal": 9, "operation": None}
    event = ProducerLine("runtime", "m", "ERROR", "NRT:nrt_init", 12, "2024-Jun-26 00:32:47.943821").event(9)
    assert (event.producer, event.line, event.level, event.component, event.pid, event.message) == (
        "runtime", 9, "ERROR", "NRT:nrt_init", 12, "m")


def test_a_number_too_long_for_a_pid_is_not_read_as_one():
    assert parse("runtime", "1234567890123:1 ERROR  NRT:nrt_init failed") is None
