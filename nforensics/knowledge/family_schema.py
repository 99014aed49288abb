"""The shape of one family file (nforensics/knowledge/families/*.toml): what a whole class of failures means
and the structural rules that recognise it when no specific signature of it matched."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from nforensics.defaults import new_dict, new_list
from nforensics.fact_records import RecordKind
from nforensics.knowledge.schema import (
    HypothesisSpec,
    ReferenceSpec,
    Signature,
    Strict,
    WorkaroundSpec,
    valid_regex,
    check_workaround_hypotheses,
)
from nforensics.knowledge.vocabulary import expand
from nforensics.records import Component, Severity

Outcome = Literal["killed", "segfault", "abort", "signal", "hang", "interrupted"]
Operation = Literal["compile", "load", "collectives", "execute", "wait", "resolve", "cache"]
Structure = Literal["ice_banner", "bir_block", "compiler_assertion", "compiler_pass_trace", "cache_replay",
                    "own_module_missing", "kubernetes_not_ready", "usage_exit", "stage_died"]


class Detect(Strict):
    """One structural rule of a family. Every selector given must hold somewhere in the input (AND); a
    family is recognised when any one of its rules holds (OR). Selectors read records, not wording, except
    `words`, whose groups must co-occur on one failure line (a line that reads like an error).

    - `code_components`: the component letters of a printed code, NCC_<class><COMPONENT><index> or the
      legacy bare form (BIR243, TEN404), `*` for any; `code_classes` narrows to class letters (I, E, W).
    - `nrt_statuses`: NRT status names as printed or aliased (NRT_EXEC_OOB, NERR_RESOURCE -> NRT_RESOURCE).
    - `runtime_heads`: regexes on an error-level runtime record head `MODULE:function` (`^ENC:`, `^TDRV:.*mem`).
    - `compiler_heads`: regexes on the component an error-level compiler record names (`[Tensorizer]: ...`).
    - `frame_paths`: regexes on stack-frame file paths of any syntax (Python, IPython, native `.so`, TorchScript).
    - `stages`: the compiler stage (knowledge/stages.toml) of the deepest frame any traceback or stack places in
      the compiler: where in the compiler a crash happened, whatever it printed (`tensorizer`, `backend`); with
      no such frame, the stage a CRITICAL/FATAL compiler record's component names (`[WalrusDriver]`), or the
      source file of a failed assertion's record (`[.../walrus/coloring_allocator/src/x.cpp:174]`), weaker.
    - `frame_code`: regexes on the source line printed under one of those frames, the call that failed
      (`load_state_dict(`).
    - `exceptions`: regexes on the exception class that ended a traceback (`^ModuleNotFoundError$`).
    - `raised_in`: regexes on the file of that traceback's innermost frame: where it was raised, not what the
      stack passed through (`torch/jit/_trace`: PyTorch's tracer itself refused the model).
    - `outcomes` (with `operations` for hangs): how the process ended, read from the shape of the log's end;
      `signals` narrows them to the signal that ended or stopped it (15: sent from outside, not typed by hand).
    - `structures`: named multi-line shapes the parser assembles (the ICE banner, a BIR verifier block, a
      compiler assertion, neuronx-cc's `root = ` chain naming where a pass failed, the compile cache replaying
      a failed entry, a package failing to import a module of its own, kubectl showing a Neuron component
      scheduled nowhere or not ready, the compiler ending with its argument parser's usage status, 2, a stage
      of the compiler ended by a signal).
    - `words`: groups of lower-case words or word starts ("compil"); one failure line must contain a member
      of every group, each at the start of a token.
    - `context_words`: groups of whole words, anywhere in what was kept of the input (any line, frame path or
      installed package): what the run involved rather than what failed ("neuron", not "neurons"). A rule
      with context says only where and in what setting something failed, so its confidence is capped
      (`CONTEXT_CONFIDENCE`), and it cannot stand alone.
    - `words_in_warnings`: its words may be read in warnings even where the family claims none: its error-level
      selectors show the failure, the warning says why (`OFI plugin initNet() failed` before a failed comm).
    - `root`: in an envelope family, this rule reads the failure itself rather than a wrapper's report of it (a
      compiler stage a signal ended, not the driver's exit 70): its finding is no envelope.
    """

    code_components: list[str] = Field(default_factory=new_list)
    code_classes: list[str] = Field(default_factory=new_list)
    nrt_statuses: list[str] = Field(default_factory=new_list)
    runtime_heads: list[str] = Field(default_factory=new_list)
    compiler_heads: list[str] = Field(default_factory=new_list)
    frame_paths: list[str] = Field(default_factory=new_list)
    stages: list[str] = Field(default_factory=new_list)
    frame_code: list[str] = Field(default_factory=new_list)
    exceptions: list[str] = Field(default_factory=new_list)
    raised_in: list[str] = Field(default_factory=new_list)
    outcomes: list[Outcome] = Field(default_factory=new_list)
    operations: list[Operation] = Field(default_factory=new_list)
    signals: list[int] = Field(default_factory=new_list)
    structures: list[Structure] = Field(default_factory=new_list)
    words: list[list[str]] = Field(default_factory=new_list)
    context_words: list[list[str]] = Field(default_factory=new_list)
    words_in_warnings: bool = False
    root: bool = False

    @field_validator("runtime_heads", "compiler_heads", "frame_paths", "frame_code", "exceptions", "raised_in")
    @classmethod
    def _regexes(cls, v: list[str]) -> list[str]:
        return [valid_regex(p) for p in v]

    _lower = field_validator("words", "context_words")(lambda cls, v: word_groups(v))

    @model_validator(mode="after")
    def _something(self) -> "Detect":
        selectors = (self.code_components, self.nrt_statuses, self.runtime_heads, self.compiler_heads, self.frame_paths,
                     self.stages, self.frame_code, self.exceptions, self.raised_in, self.outcomes, self.structures, self.words)
        if not any(selectors):
            raise ValueError("a detect rule needs at least one selector besides context_words")
        if self.code_classes and not self.code_components:
            raise ValueError("code_classes narrows code_components; give code_components too")
        if self.operations and "hang" not in self.outcomes:
            raise ValueError("operations qualifies outcomes = ['hang']")
        if self.signals and not self.outcomes:
            raise ValueError("signals qualifies outcomes")
        if self.words_in_warnings and not (self.words and (self.runtime_heads or self.compiler_heads or self.nrt_statuses)):
            raise ValueError("words_in_warnings needs words and runtime_heads, compiler_heads or nrt_statuses")
        return self


def word_groups(v: list[list[str]]) -> list[list[str]]:
    v = expand(v)  # "@neuron_packages": a named list of knowledge/vocabulary.toml
    if any(not group or any(w != w.lower() or not w.strip() for w in group) for group in v):
        raise ValueError("each words group needs at least one lower-case, non-blank substring")
    if any(w[0].isspace() for group in v for w in group):  # (" nd" never matched "open the nd1")
        raise ValueError("a word starts where a token starts: it cannot begin with a space")
    return v


class FamilyTest(Strict):
    top_hypothesis: str | None = None
    fields: dict[str, str | int | float] = Field(default_factory=new_dict)


class Family(Strict):
    """A failure family: what a whole class of failures means, recognised by structure when no specific
    signature of it matched. Specific signatures name their family and refine it."""

    id: str
    title: str
    component: Component
    severity: Severity = "error"
    summary: str
    meaning: str
    envelope: bool = False  # it wraps a root cause reported elsewhere (a wrapper's "compilation failed")
    # Broader families this one narrows (a tensorizer error is also an internal compiler error): when both
    # hold on one input, this one is the finding, however their selectors' confidences compare.
    refines: list[str] = Field(default_factory=new_list)
    # Families whose failures this one brings about (a host limit or a killed rank makes the others' collectives
    # time out): when a finding of this family and one of those are both found, this one is the cause and goes
    # first, wherever each was printed (ranks print out of order).
    causes: list[str] = Field(default_factory=new_list)
    # True: it brings those about only where it is printed first (a cache replay, then the stored error it
    # prints); a compile's own error before a later run's replay of it was not brought about by the replay.
    causes_what_follows: bool = False
    # Runtime API calls (`nrt_init`) whose bare failure status this family accounts for: "NRT_INVALID in
    # nrt_init()" is a runtime that could not initialise, whatever NRT_INVALID means of an nrt_load.
    runtime_apis: list[str] = Field(default_factory=new_list)
    claims_warnings: bool = True  # False: lines printed below error level (WARN, INFO) are not this failure
    # Word groups (as `words`) that, on a line printed after every line of a hit, say the component came up
    # after all (a daemon that reset a device and then initialised it): the failure was passed, not the end.
    overcome: list[list[str]] = Field(default_factory=new_list)
    # Word groups (as `words`) that, on a failure line itself, say the program went on without what failed
    # there ("NKI kernel flash_fwd failed for this head size, falling back to the default attention"): that
    # line reports a replacement, not this family's failure, whatever its level.
    recovered: list[list[str]] = Field(default_factory=new_list)
    # True: recognised by where a failure was raised (a model library's frames), not by what failed; any
    # other finding of tier exact or family says more, and this family then gives way to it.
    fallback: bool = False
    record: RecordKind | None = None  # the typed record its findings carry (nforensics/fact_records.py)
    detect: list[Detect] = Field(default_factory=new_list)
    hypotheses: list[HypothesisSpec] = Field(default_factory=new_list)
    workarounds: list[WorkaroundSpec] = Field(default_factory=new_list)
    references: list[ReferenceSpec] = Field(default_factory=new_list)
    sample_log: str  # file name under sample_logs/: must yield this family (with its specific signatures removed)
    near_miss: str  # file name under sample_logs/: a neighbouring failure that must not yield this family
    test: FamilyTest = Field(default_factory=FamilyTest)

    _id_shape = field_validator("id")(lambda cls, v: Signature._id_shape(v))
    _overcome_words = field_validator("overcome", "recovered")(lambda cls, v: word_groups(v))

    @model_validator(mode="after")
    def _top_known(self) -> "Family":
        ids = {h.id for h in self.hypotheses}
        if self.test.top_hypothesis and self.test.top_hypothesis not in ids:
            raise ValueError(f"[test].top_hypothesis {self.test.top_hypothesis!r} is not a hypothesis id")
        check_workaround_hypotheses(self.workarounds, ids)
        if not self.hypotheses or not self.workarounds:
            raise ValueError("a family needs hypotheses and workarounds: it is what the user reads")
        return self
