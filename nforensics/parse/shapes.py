"""What one line says, as the grammars' transformers (nforensics/parse/transformers.py) read it off its tree.

A shape is typed and has its parts named and converted (numbers are ints, quotes and padding are gone),
but it knows no line number: the assembler gives it one (`at(line)`) when it files the record, and keeps
the multi-line state (an open ICE banner, BIR block or traceback) that decides where the record goes.

Shapes are NamedTuples: about 50 us each to define at start-up, where a frozen dataclass costs 300 us.
Being tuples, two shapes of different kinds with equal parts compare equal: tell kinds apart with
`isinstance` or `match`, never with `==`.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from nforensics.records import ApiCall, Diagnostic, ExitStatus, LogEvent, NrtStatus, OutcomeKind, ProcessOutcome

Producer = Literal["compiler", "runtime", "framework"]


# ---------------------------------------------------------------- producer lines (compiler, runtime, framework)


class Unwrapped(NamedTuple):
    """A line behind the wrappers other tools put in front of it (grammars/prefixes.lark): the producer's own
    line, and the level a logger's prefix gave it (vLLM's `ERROR 12-10 20:13:47 [engine.py:366]`, Python
    logging's `...,123::WARNING:`); a relay's level (stderr read as WARN) is not the line's."""

    line: str
    level: str | None = None


class ProducerLine(NamedTuple):
    """A record line of a producer's log: a neuronx-cc driver line (or its bare timing line, which has no
    level), an NRT or CCOM line, a framework wrapper, glog or logrus line."""

    producer: Producer
    message: str
    level: str | None = None
    component: str | None = None  # compiler logger path, NRT `MODULE:function`, daemon head, wrapper name
    pid: int | None = None
    timestamp: str | None = None
    function: str | None = None  # NRT `MODULE:function`'s function: the API trace names its API there

    def event(self, line: int) -> LogEvent:
        return LogEvent.model_construct(producer=self.producer, line=line, level=self.level, component=self.component,
                                        pid=self.pid, message=self.message, timestamp=self.timestamp)


class IceMark(NamedTuple):
    """A row of stars around the Internal Compiler Error banner, or its title line
    (`An Internal Compiler Error has occurred`)."""

    title: bool


class IceField(NamedTuple):
    """`Error class:    AssertionError`: one field of the ICE banner (its value may go on over more lines)."""

    key: str
    value: str


class BirHeader(NamedTuple):
    """`=== BIR verification failed ===`: opens a BIR block."""

    title: str


class BirField(NamedTuple):
    """`Reason: ...`, `Instruction: ...`: one field of an open BIR block."""

    key: str
    value: str


class BirInstruction(NamedTuple):
    """`Instruction DMACopy inst.32: DMA Copy in/out shape must match`: one instruction failed a backend check."""

    opcode: str
    instruction: str
    reason: str


class SgError(NamedTuple):
    """`SG-ERROR: File ...cpp:207, Assertion '...' failed`."""

    message: str


class CutMark(NamedTuple):
    """The NRT infodump's `[ cut here ]` (opens) and `[ cut to here ]` (closes)."""

    opens: bool


# ---------------------------------------------------------------- stack traces (frames are records: nforensics.records.Frame)


class TracebackHeader(NamedTuple):
    """`Traceback (most recent call last):`, or IPython's, which names the exception first, or faulthandler's
    `Current thread 0x... (most recent call first):`, whose frames come innermost first."""

    exception: str | None
    innermost_first: bool = False
    other_thread: bool = False  # faulthandler's `Thread 0x...`: a thread that was not the one that crashed


class LiveThread(NamedTuple):
    """py-spy's `Thread 854 (active+gil): "MainThread"`: the stack of a process still running follows."""


class ExceptionLine(NamedTuple):
    """`RuntimeError: neuronx-cc failed with -9`: the final line of a traceback (or one pasted alone)."""

    name: str
    message: str


# ---------------------------------------------------------------- environment listings, and settings or versions in prose


class PackageVersion(NamedTuple):
    name: str
    version: str
    rest: str = ""  # the text after it, in a message, where the next one may be


class EnvSetting(NamedTuple):
    name: str
    value: str  # without its quotes
    rest: str = ""  # the text after it, in a message, where the next one may be


# ---------------------------------------------------------------- shapes inside a message (grammars/messages.lark)


class CodedMessage(NamedTuple):
    """`[INTERNAL_ERROR] [NCC_IXLV002] text`, `[TEN404] (op) text`, MLIR's `loc(...): error: [NCC_X] text`."""

    code: str
    message: str
    severity: str | None = None
    op: str | None = None
    location: str | None = None
    rest: str = ""  # the text after the code, where another code may follow
    unprefixed: bool = False  # printed without its NCC_ ([IXLV002]): plausible only where the compiler speaks

    def at(self, line: int) -> Diagnostic:
        return Diagnostic.model_construct(code=self.code, severity=self.severity, message=self.message, op=self.op,
                                          location=self.location, line=line, end_line=line)


class ExitCode(NamedTuple):
    """`neuronx-cc failed with 70`, `returned with exitcode=70`, `died with <Signals.SIGKILL: 9>` (code -9)."""

    tool: str
    code: int

    def at(self, line: int) -> ExitStatus:
        return ExitStatus.model_construct(line=line, tool=self.tool, code=self.code)


class StatusMention(NamedTuple):
    """A runtime status by number, name or both: `err: 1006`, `Failure: NRT_EXEC_OOB in nrt_execute()`."""

    number: int | None
    name: str | None
    api: str | None = None

    def at(self, line: int) -> NrtStatus:
        return NrtStatus.model_construct(line=line, number=self.number, name=self.name, api=self.api)


class ProcessEnd(NamedTuple):
    """How a process ended, when the line says only that: `Killed`, the OOM killer, a crash signal."""

    kind: OutcomeKind
    signal: int
    process: str | None = None

    def at(self, line: int, text: str) -> ProcessOutcome:
        return ProcessOutcome.model_construct(line=line, kind=self.kind, text=text, process=self.process,
                                              signal=self.signal)


class ApiTrace(NamedTuple):
    """`nrt_load API:IN: (...)`: the NRT API trace."""

    api: str
    phase: Literal["IN", "OUT"]

    def at(self, line: int) -> ApiCall:
        return ApiCall.model_construct(line=line, api=self.api, phase=self.phase)


class InstanceType(NamedTuple):
    name: str  # trn1.32xlarge
