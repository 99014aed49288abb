"""The grammars themselves: every start alternative of every grammar in grammars/ parses a line of its shape
into that shape with the parts the assembler reads, and a near miss of each does not parse as it. A new
alternative without a case here fails the coverage test."""

from __future__ import annotations

import re

import pytest

from forensics.parse.grammars import flatten, grammar_dir, parse

# (grammar, start rule or None, line, expected shape, parts that must be read as given)
CASES = [
    # compiler.lark
    ("compiler", None, "2024-08-15T14:51:41Z ERROR 3835 [sg0000/Tensorizer/BirCodeGenLoop]: tensorcopy failed",
     "driver_line", {"LEVEL": "ERROR", "COMPONENT": "sg0000/Tensorizer/BirCodeGenLoop"}),
    ("compiler", None, "06/16/2021 08:46:36 AM ERROR [neuron-cc]: compilation failed",
     "legacy_line", {"LEVEL": "ERROR", "COMPONENT": "neuron-cc"}),
    ("compiler", None, "2023-12-12T17:28:24Z Running birverifier", "timing_line", {}),
    ("compiler", None, "*" * 60, "ice_border", {}),
    ("compiler", None, " An Internal Compiler Error has occurred", "ice_title", {}),
    ("compiler", None, "Error class:    AssertionError", "ice_field", {"ICE_KEY": "Error class"}),
    ("compiler", None, "=== BIR verification failed ===", "bir_header", {}),
    ("compiler", None, "Reason: Expect AP datatype to be int32", "bir_field", {"BIR_KEY": "Reason"}),
    ("compiler", None, "Instruction DMACopy inst.32: DMA Copy in/out shape must match", "bir_instruction",
     {"INSTRUCTION_HEAD": "Instruction DMACopy inst.32:"}),
    ("compiler", None, "SG-ERROR: File a.cpp:207, Assertion 'x' failed", "sg_error", {}),
    # runtime.lark
    ("runtime", None, "2024-Jun-26 00:32:47.943821 30294:32381 ERROR  TDRV:tdrv_init   could not open",
     "nrt_line", {"LEVEL": "ERROR", "MODULE": "TDRV", "FUNCTION": "tdrv_init"}),
    ("runtime", None, "NRT:  26638:26638 ERROR  TDRV:db_vtpb_get_mla_and_tpb failed", "syslog_line", {"MODULE": "TDRV"}),
    ("runtime", None, "30294:32381 ERROR  NRT:nrt_init failed", "bare_line", {"PID": "30294", "MODULE": "NRT"}),
    ("runtime", None, "[NMGR:kmgr_create_eg] Not enough free NCs to allocate", "daemon_line",
     {"DAEMON_HEAD": "NMGR:kmgr_create_eg"}),
    ("runtime", None, "2023-Aug-01 16:14:43.0210 332066:332508 [31] bootstrap.cc:89 CCOM WARN Timeout waiting",
     "ccom_line", {"LEVEL": "WARN", "SOURCE": "bootstrap.cc:89"}),
    ("runtime", None, "------------[ cut here ]------------", "cut_here", {}),
    ("runtime", None, "------------[ cut to here ]------------", "cut_to_here", {}),
    # framework.lark
    ("framework", None, "2024-04-12 07:01:02.000123: 4242 ERROR ||NEURON_CC_WRAPPER||: Compilation failed",
     "wrapper_line", {"LEVEL": "ERROR", "WRAPPER": "||NEURON_CC_WRAPPER||"}),
    ("framework", None, "2024-04-12 07:01:02.000123: 4242 [ERROR]: config invalid", "nxdi_line", {"LEVEL": "ERROR"}),
    ("framework", None, "F external/xla/xla/parse_flags_from_env.cc:224] Unknown flags", "glog_line",
     {"GLOG_LEVEL": "F", "GLOG_SOURCE": "external/xla/xla/parse_flags_from_env.cc:224"}),
    ("framework", None, "ERRO[0004] Processing failed, exiting", "logrus_line", {"LOGRUS_LEVEL": "ERRO[0004]"}),
    # environment.lark
    ("environment", None, "aws-neuronx-runtime-lib/unknown,now 2.21.41.0 amd64 [installed]", "apt_line",
     {"PACKAGE": "aws-neuronx-runtime-lib", "VERSION": "2.21.41.0"}),
    ("environment", None, "neuronx-cc                    2.14.213.0", "pip_line", {"VERSION": "2.14.213.0"}),
    ("environment", None, "torch-neuronx==2.1.2.2.2.0", "freeze_line", {"PACKAGE": "torch-neuronx"}),
    ("environment", None, "NeuronX Compiler version 2.23.6484.0+3b612583", "cc_version", {"VERSION": "2.23.6484.0+3b612583"}),
    ("environment", None, "export NEURON_CC_FLAGS=--auto-cast=none", "env_assign", {"ENV_NAME": "NEURON_CC_FLAGS"}),
    ("environment", None, "os.environ['XLA_USE_BF16'] = '1'", "setenv_call", {"SETENV_NAME": "'XLA_USE_BF16'"}),
    # traceback.lark
    ("traceback", None, "Traceback (most recent call last):", "header", {}),
    ("traceback", None, "StopIteration                             Traceback (most recent call last)", "header",
     {"IPY_HEADER": "StopIteration                             Traceback (most recent call last)"}),
    ("traceback", None, 'File "neuronxcc/driver/jobs/WalrusDriver.py", line 232, in run', "frame",
     {"PATH": '"neuronxcc/driver/jobs/WalrusDriver.py"', "LINENO": "232", "FUNC": "run"}),
    ("traceback", None, "File /opt/x/trace.py:309, in trace(model)", "ipython_frame", {"IPY_PATH": "/opt/x/trace.py"}),
    ("traceback", None, "Cell In[12], line 4", "ipython_cell", {"CELL": "[12]", "LINENO": "4"}),
    ("traceback", None, "#3  0x00007f3a1c in neuronxcc::Foo::run() from /opt/x/libwalrus.so", "native_frame",
     {"NATIVE_INDEX": "#3"}),
    ("traceback", None, "/home/u/model.py(118): forward", "torchscript_frame", {"TS_PATH": "/home/u/model.py"}),
    ("traceback", None, "/build/src/cmd/k8s-neuron-scheduler/routes.go:44 +0x825", "go_frame",
     {"GO_PATH": "/build/src/cmd/k8s-neuron-scheduler/routes.go", "LINENO": "44"}),
    ("traceback", None, "RuntimeError: neuronx-cc failed with -9", "exception", {"EXC_NAME": "RuntimeError"}),
    # prefixes.lark (a wrapper in front of the producer's line)
    ("prefixes", None, "(RayTrainWorker pid=4242, ip=10.0.0.1) ERROR x", "prefix", {"RAY": "(RayTrainWorker pid=4242, ip=10.0.0.1) "}),
    ("prefixes", None, "[rank3]: Traceback (most recent call last):", "prefix", {"TORCHRUN": "[rank3]: "}),
    # messages.lark (one start rule per shape found inside a message)
    ("messages", "diagnostic", "[INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers", "coded", {"CODE": "NCC_IXLV002"}),
    ("messages", "diagnostic", "loc(fused[1]): error: [NCC_EVRF029] Operation sort is not supported", "mlir_coded",
     {"CODE": "NCC_EVRF029"}),
    ("messages", "exit_status", "RuntimeError: neuronx-cc failed with -9", "exit_status", {"INT": "-9"}),
    ("messages", "nrt_status", "Inference completed with err: 1006", "nrt_status", {"INT": "1006"}),
    ("messages", "nrt_status", "Could not load the model status=2 message=Invalid", "nrt_status", {"INT": "2"}),
    ("messages", "outcome", "bash: line 1:  4242 Killed   neuronx-cc compile", "outcome", {}),
    ("messages", "api_call", "nrt_load API:IN: (model=x)", "api_call", {"API": "nrt_load", "API_PHASE": "IN"}),
    ("messages", "env_setting", "running with XLA_USE_BF16=1 set", "env_setting", {"ENV_NAME": "XLA_USE_BF16"}),
    ("messages", "instance_type", "on a trn1.32xlarge host", "instance_type", {"INSTANCE": "trn1.32xlarge"}),
    ("messages", "package_version", "Neuron SDK 2.29 (neuronx-cc 2.24.5133.0)", "package_version", {}),
]

# (grammar, start rule, line, the shape it must not be read as)
NEAR_MISSES = [
    ("compiler", None, "Instruction: DMACopy", "bir_instruction"),  # a BIR block's field, not an instruction error
    ("runtime", None, "[INFO] compiling the model", "daemon_line"),  # a bracketed level word, not MODULE:function
    ("runtime", None, "[NCC_IXLV002] Expected core barriers", "daemon_line"),  # a code, not a daemon head
    ("framework", None, "Fatal: something", "glog_line"),  # not a glog letter-and-space head
    ("traceback", None, "Please see the traceback above", "exception"),
    ("traceback", None, "/usr/lib/go/doc.go is missing", "go_frame"),  # a .go path without :line
    ("messages", "nrt_status", "HTTP response status=200 OK", "nrt_status"),
    ("messages", "exit_status", "the compile exited early", "exit_status"),
    ("environment", None, "numpy 1.26.4", "pip_line"),  # not a Neuron-side package
]


@pytest.mark.parametrize("grammar,start,line,shape,parts", CASES, ids=lambda v: v if isinstance(v, str) and len(v) < 30 else None)
def test_each_alternative_parses_its_shape(grammar, start, line, shape, parts):
    tree = parse(grammar, line, start)
    assert tree is not None, f"{grammar}: {line!r} did not parse"
    got_shape, got_parts = flatten(tree)
    if grammar != "messages" or shape in ("coded", "mlir_coded"):
        assert got_shape == shape
    for name, value in parts.items():
        assert got_parts.get(name) == value, f"{name}: {got_parts.get(name)!r}"


@pytest.mark.parametrize("grammar,start,line,shape", NEAR_MISSES, ids=lambda v: v if isinstance(v, str) and len(v) < 30 else None)
def test_a_near_miss_is_not_read_as_that_shape(grammar, start, line, shape):
    tree = parse(grammar, line, start)
    assert tree is None or flatten(tree)[0] != shape


def test_every_alternative_of_every_grammar_has_a_case():
    """Each `start:` alternative (and each start rule of messages.lark's sub-shapes) is exercised above."""
    covered = {(g, shape) for g, _, _, shape, _ in CASES}
    missing = []
    for path in sorted(grammar_dir().glob("*.lark")):
        text = path.read_text(encoding="utf-8")
        start = re.search(r"^start:\s*(.+)$", text, re.M)
        if start is None or path.stem == "prefixes":
            continue
        for alternative in (a.strip() for a in start.group(1).split("|")):
            if (path.stem, alternative) not in covered:
                missing.append(f"{path.stem}: {alternative}")
    assert not missing, "alternatives without a test case: " + ", ".join(missing)
