"""The shared vocabulary: every room speaks these types. Types only, no behaviour beyond trivial helpers.

Parse produces the *input records* (what a log says); diagnose produces *findings* (what it means).
Field names here are a public contract (JSON output, other tools): add, never rename.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from nforensics.defaults import new_dict, new_list
from nforensics.fact_records import FactRecord


SCHEMA_VERSION = "2.0"  # 1.1 tier, family, confidence, wrapped_by; 1.2 similar_reports, workaround hypotheses; 1.3
# record; 1.4 artifacts and an evidence's artifact; 2.0 one top-level shape (AnalysisSet) for any number of inputs

Component = Literal["compiler", "runtime", "framework", "nki", "environment"]
Severity = Literal["error", "warning", "note"]
# How a finding was recognised, most certain first: a catalogue signature, a family recognised by structure
# or by a code's component letters, a resemblance to known cases only, or a fallback that explains the parts.
Tier = Literal["exact", "family", "similar", "generic"]
TIER_RANK: dict[str, int] = {"exact": 0, "family": 1, "similar": 2, "generic": 3}
FrameSyntax = Literal["python", "ipython", "rich", "native", "torchscript", "go", "java", "pyspy", "root"]
OutcomeKind = Literal["killed", "segfault", "abort", "signal", "hang", "interrupted", "cut"]
SEVERITY_RANK: dict[str, int] = {"error": 0, "warning": 1, "note": 2}  # most severe first
# Error levels as each producer spells them: compiler/NRT words, glog letters, logrus (neuron-profile) stems.
ERROR_LEVELS = frozenset({"ERROR", "FATAL", "CRITICAL", "E", "F", "ERRO", "FATA"})


class Record(BaseModel):
    # Validators are built on first validation, not at import. parse and diagnose build records from
    # values they produced themselves with `model_construct` (no validation), so `explain` never pays for
    # building validators; JSON output and records read from outside still go through the full models.
    model_config = ConfigDict(extra="forbid", defer_build=True)


# ---------------------------------------------------------------- input records (parse output)


class SourceLine(Record):
    """One physical line of the input (1-based), as it was after decoding."""

    line: int
    text: str
    body: str | None = None  # its producer's own line, when a relay or a logger put a prefix in front of it


class LogEvent(Record):
    """A levelled line from any producer: neuronx-cc driver, legacy neuron-cc, NRT, wrapper, NxDI."""

    producer: Literal["compiler", "runtime", "framework", "other"]
    line: int
    level: str | None = None
    component: str | None = None  # compiler logger path, NRT "MODULE:function", wrapper name
    pid: int | None = None
    message: str
    timestamp: str | None = None


class Diagnostic(Record):
    """A coded compiler diagnostic, e.g. `[INTERNAL_ERROR] [NCC_IXLV002] ...` or legacy `[TEN404] ...`.
    `message` joins continuation lines with single spaces; `line`/`end_line` span them."""

    code: str
    severity: str | None = None  # INTERNAL_ERROR | ERROR | WARNING | None
    message: str
    op: str | None = None  # legacy `[TEN404] (aten__add_add.31237) ...`
    location: str | None = None  # MLIR `loc(...)`
    line: int
    end_line: int


class IceReport(Record):
    """The 'An Internal Compiler Error has occurred' banner and its fields."""

    line: int
    end_line: int
    error_message: str | None = None
    error_class: str | None = None
    error_location: str | None = None
    command_line: str | None = None
    internal_details: list[str] = Field(default_factory=new_list)
    version_information: list[str] = Field(default_factory=new_list)


class BirVerification(Record):
    """A `=== BIR verification failed ===` block."""

    line: int
    end_line: int
    reason: str | None = None
    instruction: str | None = None
    opcode: str | None = None
    fields: dict[str, str] = Field(default_factory=new_dict)


class CompilerInvocation(Record):
    """A neuronx-cc command line quoted by a wrapper, an ICE banner or a log."""

    line: int
    argv: list[str]
    target: str | None = None
    flags: list[str] = Field(default_factory=new_list)


class ExitStatus(Record):
    """`neuronx-cc failed with 70`, `Subcommand returned with exitcode=70`, `died with <Signals.SIGKILL: 9>`."""

    line: int
    tool: str
    code: int


class NrtStatus(Record):
    """A runtime status number (`err: 1006`, `status=4`, `Failure: NRT_EXEC_OOB in nrt_execute()`)."""

    line: int
    number: int | None = None
    name: str | None = None
    api: str | None = None


class Frame(Record):
    file: str
    lineno: int | None = None
    function: str | None = None
    syntax: FrameSyntax = "python"
    line: int | None = None  # input line of the frame
    code: str | None = None  # the source line printed under it: the call that failed

    @property
    def package_path(self) -> str:
        """The file inside its installed package (`transformers_neuronx/decoder.py`), else its last folders:
        where a failure sits, without the machine's own folders or a user's home."""
        path = self.file.replace("\\", "/")
        parts = [p for p in path.split("/") if p]
        for root in ("site-packages", "dist-packages"):
            if root in parts:
                return "/".join(parts[len(parts) - parts[::-1].index(root):])
        if not path.startswith(("/", "~")) and ":" not in path[:3]:
            return path  # already relative to its package (`neuroncc/starfish/penguin/DotTransform.py`)
        if parts and parts[0].endswith(":"):
            parts = parts[1:]  # a Windows drive
        if len(parts) > 2 and parts[0] in ("home", "Users"):
            parts = parts[2:]  # /home/<user>/...: the user's name says nothing about the failure
        return "/".join(parts[-4:])


class StackTrace(Record):
    """Frames outside a Python traceback: a native `#N 0x.. in symbol (/path/x.so)` backtrace, TorchScript
    `path(line): fn` frames or a Go panic's `/path/x.go:N +0x..` frames, one stack per run of nearby frames."""

    line: int
    end_line: int
    syntax: FrameSyntax
    frames: list[Frame] = Field(default_factory=new_list)


class ProcessOutcome(Record):
    """How a process ended, read from the shape of the log rather than a message: a bare `Killed`, a
    dmesg OOM-kill line, a signal, or (kind "hang") a log that ends inside an operation it opened (kind "cut": at
    the very line that opened it, where nothing shows it ran)."""

    line: int
    kind: OutcomeKind
    text: str
    process: str | None = None  # the process named (neuronx-cc, python), when the line names one
    signal: int | None = None
    operation: str | None = None  # for hangs: compile | load | collectives | execute | resolve | wait (a polling
    # loop) | cache (a loop waiting for the compile cache's lock)


class ApiCall(Record):
    """One record of the NRT API trace (`NRT:nrt_load API:IN: (...)` / `API:OUT`)."""

    line: int
    api: str
    phase: Literal["IN", "OUT"]


class PythonTraceback(Record):
    line: int
    end_line: int
    frames: list[Frame] = Field(default_factory=new_list)
    exception: str | None = None  # e.g. RuntimeError
    message: str | None = None
    printed_by: str | None = None  # "compiler": its lines were the compiler's own log records (its own crash)


class Environment(Record):
    """Everything the input says about the machine and the job: versions, flags, env vars, target."""

    packages: dict[str, str] = Field(default_factory=new_dict)  # normalised name -> version
    env_vars: dict[str, str] = Field(default_factory=new_dict)
    compiler_flags: list[str] = Field(default_factory=new_list)
    target: str | None = None
    instance_type: str | None = None
    lines: dict[str, int] = Field(default_factory=new_dict)  # "env:XLA_USE_BF16" / "pkg:neuronx-cc" -> line


class ParsedLog(Record):
    """All records parse found in one input."""

    source: str
    total_lines: int = 0
    events: list[LogEvent] = Field(default_factory=new_list)
    diagnostics: list[Diagnostic] = Field(default_factory=new_list)
    ice: list[IceReport] = Field(default_factory=new_list)
    bir: list[BirVerification] = Field(default_factory=new_list)
    invocations: list[CompilerInvocation] = Field(default_factory=new_list)
    exits: list[ExitStatus] = Field(default_factory=new_list)
    nrt_statuses: list[NrtStatus] = Field(default_factory=new_list)
    tracebacks: list[PythonTraceback] = Field(default_factory=new_list)
    stacks: list[StackTrace] = Field(default_factory=new_list)
    outcomes: list[ProcessOutcome] = Field(default_factory=new_list)
    api_calls: list[ApiCall] = Field(default_factory=new_list)
    environment: Environment = Field(default_factory=Environment)
    truncated: bool = False  # record caps were hit on a huge input
    # A line of the shape of an earlier one that yielded no record is not parsed again (a flood of one warning):
    # line -> that earlier line, whose reading it shares.
    repeats: dict[int, int] = Field(default_factory=new_dict)
    decoded_lines: list[tuple[int, int]] = Field(default_factory=new_list)  # nforensics/line_numbers.py

    def with_repeats(self, lines: set[int]) -> set[int]:
        """`lines` and the later lines of their shapes."""
        return lines | {line for line, first in self.repeats.items() if first in lines}

    def error_lines(self) -> set[int]:
        """Lines whose producer printed them at an error level."""
        return self.with_repeats({e.line for e in self.events if (e.level or "").upper() in ERROR_LEVELS})

    def below_error_lines(self) -> set[int]:
        """Lines whose producer printed them at a level below error (WARN, INFO...)."""
        return self.with_repeats({e.line for e in self.events if e.level and e.level.upper() not in ERROR_LEVELS})

    def python_warning_lines(self) -> set[int]:
        """Lines of Python's warnings module (`x.py:102: UserWarning: ...`) and the source lines it echoes."""
        return self.with_repeats({e.line for e in self.events if e.producer == "framework"
                                  and (e.component or "").endswith("Warning")})


# ---------------------------------------------------------------- findings (diagnose output)


class Evidence(Record):
    line: int | None = None  # 1-based input line; None for facts that come from artifacts or fields
    text: str
    note: str | None = None
    artifact: str | None = None  # the file the fact was read from (an HLO module), when it came from one


class Hypothesis(Record):
    id: str
    title: str
    score: float  # higher ranks first; prior plus the weights of the evidence present
    explanation: str | None = None
    evidence: list[Evidence] = Field(default_factory=new_list)
    check: str | None = None  # what to look at when the evidence is absent


class Workaround(Record):
    title: str
    description: str | None = None
    code: str | None = None
    language: str | None = None
    hypotheses: list[str] = Field(default_factory=new_list)  # the hypotheses it acts on; ordered by their rank


class Reference(Record):
    title: str
    url: str


class FixedIn(Record):
    component: str  # package name, e.g. neuronx-cc
    version: str
    sdk: str | None = None
    seen_version: str | None = None  # version found in the input
    upgrade: bool = False  # the input shows an older version than the fix
    summary: str | None = None  # "fixed in neuronx-cc X (Neuron SDK Y): upgrade (the input shows ...)"


class SimilarReport(Record):
    """A public issue thread whose error resembles a finding's (nforensics/knowledge/cases/)."""

    repo: str  # owner/name
    number: int
    url: str
    title: str
    state: Literal["open", "closed"] | None = None
    family: str
    signature: str | None = None
    fixed_in: str | None = None
    answer: str | None = None  # what the maintainers (or the thread's resolution) said, in one line
    workaround: str | None = None
    closeness: float  # 0-1: the share of the report's error tokens (anchor-weighted) the finding shows


class Finding(Record):
    code: str | None
    signature: str
    title: str
    component: Component
    severity: Severity = "error"
    summary: str
    meaning: str | None = None
    fields: dict[str, Any] = Field(default_factory=new_dict)
    generic: bool = False
    fingerprint: str
    fingerprint_version: int = 1
    hypotheses: list[Hypothesis] = Field(default_factory=new_list)
    workarounds: list[Workaround] = Field(default_factory=new_list)
    references: list[Reference] = Field(default_factory=new_list)
    evidence: list[Evidence] = Field(default_factory=new_list)
    fixed_in: FixedIn | None = None
    envelope: bool = False  # wraps a root cause reported by another finding ([F134], exit 70)
    tier: Tier = "exact"
    family: str | None = None  # the family id (knowledge/families/) this finding belongs to
    confidence: float = 0.9  # how sure the recognition is (0-1), from how it matched: not a probability of the cause
    wrapped_by: list[Evidence] = Field(default_factory=new_list)  # envelopes folded into this finding (exit 70, ...)
    hypotheses_undetermined: bool = False  # no evidence in the input favours one hypothesis over another
    similar_reports: list[SimilarReport] = Field(default_factory=new_list)  # closest public threads, best first
    record: FactRecord | None = None  # the typed facts of its kind (nforensics/fact_records.py), beside `fields`


class ArtifactRead(Record):
    """A file beside the log whose facts fed the hypotheses: named on the command line (explain --hlo, --neff,
    --source) or an HLO module the log names (a compile workdir or cache entry on this machine). `facts`: what
    a NEFF or a kernel source said (neff.*, nki.*), shown whether or not a hypothesis used them."""
    kind: Literal["hlo", "neff", "source"]
    path: str
    line: int | None = None  # the input line that named it; None when given on the command line
    read: bool = True  # False: it was there but not read (too big, damaged): `note` says why
    note: str | None = None
    facts: dict[str, str | int | float | bool | list[str]] = Field(default_factory=new_dict)


class Analysis(Record):
    """The result of `explain` for one input: the JSON contract of design.md."""
    schema_version: str = SCHEMA_VERSION
    source: str
    findings: list[Finding] = Field(default_factory=new_list)
    environment: Environment = Field(default_factory=Environment)
    total_lines: int = 0
    truncated: bool = False
    artifacts: list[ArtifactRead] = Field(default_factory=new_list)  # files whose facts fed the hypotheses

    def failures(self) -> list[Finding]:
        """Findings of severity error: a warning (noise a signature recognised, such as nrt_close at exit) is none."""
        return [f for f in self.findings if f.severity == "error"]


class SourcedFinding(Finding):
    source: str  # the input it was found in


class GroupOccurrence(Record):
    source: str
    line: int | None = None  # first evidence line in that input


class FailureGroupRecord(Record):
    """Identical failures across inputs: one per fingerprint, with how often and where."""
    fingerprint: str
    signature: str
    code: str | None
    title: str
    severity: Severity
    count: int
    inputs: list[GroupOccurrence]


class AnalysisSet(Record):
    """`explain --format json` of any number of inputs: each analysis, all findings, and the groups."""
    schema_version: str = SCHEMA_VERSION
    inputs: list[Analysis]
    findings: list[SourcedFinding]
    groups: list[FailureGroupRecord]


# ---------------------------------------------------------------- machine probe (`nforensics env`)


class MachineProbe(Record):
    """What `nforensics env` found on the machine it ran on. A probe that failed has no value and a
    `not_collected[probe]` reason instead ("could not collect: neuronx-cc not on PATH")."""
    os: str | None = None
    python: str | None = None
    compiler_version: str | None = None  # `neuronx-cc --version` output
    neuron_ls: str | None = None
    instance_type: str | None = None
    apt_packages: dict[str, str] = Field(default_factory=new_dict)
    pip_packages: dict[str, str] = Field(default_factory=new_dict)
    env_vars: dict[str, str] = Field(default_factory=new_dict)
    not_collected: dict[str, str] = Field(default_factory=new_dict)
    neuron_software: bool = False  # any Neuron compiler, tool, apt or pip package found
