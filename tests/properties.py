"""Generators of hostile and log-like input for the property suite (tests/test_properties.py) and its long run
(bench/fuzz.py): SYNTHETIC data. Lines are glued from the heads real producers print (compiler, runtime,
daemon, tracebacks, wrappers' prefixes, codes, statuses) and arbitrary text, so the generator reaches the
parsers' paths instead of bouncing off the first gate."""

from __future__ import annotations

from hypothesis import strategies as st

from nforensics.redact import Redactor

from planted_secrets import SECRETS, planted_log

# The starts and pieces of lines that decide which parser owns a line (see nforensics/parse/gates.py).
HEADS = (
    "2024-08-15T14:51:41Z ERROR 1234 [neuronx-cc]: ", "2024-08-15T14:51:41Z USER 1234 [neuronxcc.driver.CommandDriver]: ",
    "09/11/2024 09:18:21 AM DEBUG [WalrusDriver.0]: ", "03/01/2023 01:28:13 PM ERROR 59059 [Tensorizer]: ",
    "2025-Mar-01 10:00:00.000100 77:77 ERROR  NRT:nrt_load  ", "2025-Mar-01 10:00:00.000100 77:77 INFO  NRT:nrt_init  API:IN",
    "May 04 02:18:56 ip-10-0-1-8 nrtd[20664]: [NMGR:kmgr_create_eg] ", "[NRTD:nrtd_main] ", "nrtd[1]: [hal] ",
    "Traceback (most recent call last):", '  File "/opt/venv/lib/python3.10/site-packages/torch_neuronx/xla_impl/trace.py", line 9, in trace',
    '  File "neuroncc/driver/Job.py", line 25, in neuroncc.driver.Job.run', "    raise RuntimeError(msg)",
    "RuntimeError: ", "KeyError: ", "ModuleNotFoundError: No module named 'a.b'", "----> 3 ", "Cell In[5], line 35",
    "#0 0x00007f in nrt::load(char const*) (/opt/aws/neuron/lib/libnrt.so.1)", "goroutine 1 [running]:",
    "***************************************************************", " An Internal Compiler Error has occurred",
    "Error message:  ", "Error class:    AssertionError", "=== BIR verification failed ===", "Reason: ", "Instruction: I-1-0",
    "Access Pattern: [[1,128],", "[NCC_IXLV002] ", "[TEN404] ", "[F134] ", "NCC_EVRF009 ", "err: 1006", "status=4 ",
    "Failure: NRT_EXEC_OOB in nrt_execute()", "neuronx-cc failed with 70", "exit status 137", "Killed", "cut here",
    "(RayWorker pid=123, ip=10.0.0.1) ", "[rank3]: ", "[default0]:", "WARNING 11-26 10:00:06 [utils.py:2262] ",
    "2023-11-04 15:42:35.665809: I tensorflow/x.cc:456] ", "F0000 00:00:1 parse_flags.cc:1] ", "ERRO[0000] ",
    "[WARN ] PyProcess - W-100-model-stderr: ", "E   ", "**", "\x1b[31m", "\x1b]52;c;aGk=\x07", '{"traceback": ["', '"text": "',
    "\\n", "NEURON_CC_FLAGS=--model-type=transformer", "XLA_USE_BF16=1", "neuronx-cc 2.14.213.0+013d129b", "inf2.48xlarge",
    "......", "Compiler status PASS", "Compiling function _NeuronGraph$1 with neuron-cc", "API:OUT",
)
# Text that stresses what follows a head: long runs, digits past any field's size, unicode, controls.
_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)
_HOSTILE = st.sampled_from(["a" * 3000 + "b", " " * 4000, "9" * 5000, "(" * 500, "[" * 300 + "]", "\t\r\x00\x0b", "é" * 100])


@st.composite
def log_line(draw) -> str:
    pieces = draw(st.lists(st.one_of(st.sampled_from(HEADS), _TEXT, _HOSTILE), min_size=1, max_size=4))
    return "".join(pieces)


log_lines = st.lists(log_line(), min_size=0, max_size=40)

# Each planted secret in the line the planted log carries it in (its key name, URL or header around it), where
# that line alone hides it: a PEM body line or a wrapped key's second half is found through the lines before
# it, which the planted-log test covers (tests/test_redact_outputs.py).
_PLANTED_LINES = planted_log().splitlines()
_SECRET_LINES = sorted({(value, line) for values in SECRETS.values() for value in values if len(value) >= 8
                        for line in _PLANTED_LINES if value in line and value not in Redactor().redact(line)})


@st.composite
def line_with_secret(draw) -> tuple[str, str]:
    """(secret, a line that carries it where a real log would, behind a producer's head and before other text)."""
    secret, line = draw(st.sampled_from(_SECRET_LINES))
    head = draw(st.one_of(st.just(""), st.sampled_from(HEADS).map(lambda h: h if h[-1:].isspace() else h + " ")))
    # A value ends where a separator starts: text glued onto it would be another value.
    tail = draw(st.one_of(st.just(""), st.builds(str.__add__, st.sampled_from([" ", ", ", "; ", "\t"]),
                                                 st.text(alphabet=" .,;:-_abcXYZ019", max_size=20))))
    return secret, head + line + tail
