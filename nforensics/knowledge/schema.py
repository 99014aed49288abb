"""The shape of one signature file (nforensics/knowledge/signatures/*.toml).

A signature is data: how to recognise a failure, which fields to pull out of its message, what it means,
the hypotheses with the evidence that moves each one, workarounds, references and the release that fixed
it. The loader validates every file against these models, so a bad pack fails with the file and field.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from nforensics.defaults import new_dict, new_list
from nforensics.fact_records import RECORD_KINDS, HloFactName, RecordKind
from nforensics.knowledge.order import Tier, check_tier, reject_priority
from nforensics.records import Component, Severity

FieldType = Literal["str", "int", "float"]
Verdict = Literal["REPRODUCES", "PASSES", "DIFFERENT_FAILURE", "UNTESTABLE"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


def valid_regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from exc
    return pattern


class Match(Strict):
    """How a signature is recognised. Any one condition is enough; nforensics/knowledge/order.py says which
    of several signatures matching one line claims it."""

    codes: list[str] = Field(default_factory=new_list)  # coded diagnostics: NCC_IXLV002, TEN404, F134
    # Regexes searched in each retained line, case-sensitive as written (a lower-case "unsupported instruction"
    # is other tools' wording): a pattern that must take either case says `(?i)`.
    patterns: list[str] = Field(default_factory=new_list)
    nrt_statuses: list[str] = Field(default_factory=new_list)  # NRT_EXEC_OOB, from err:/status=/Failure:
    exit_codes: list[int] = Field(default_factory=new_list)  # `neuronx-cc failed with N`
    # Only match when the message of the coded diagnostic also matches (codes shared by several causes).
    message: str | None = None
    # Masked message templates (nforensics/knowledge/wording.py); built-ins get theirs derived from the sample
    # log into templates.toml by tools/derive_templates.py, so a pack may leave this empty.
    templates: list[str] = Field(default_factory=new_list)
    # False when the message's wording is shared verbatim with other failures (neuronx-cc prints neuron-cc's
    # ICE banner word for word; any Python TypeError reads like an NKI one): then only codes, statuses and
    # patterns recognise it, and tools/derive_templates.py derives no template for it.
    resemblance: bool = True
    # False: a line its producer printed below error level (WARN, INFO) is not this failure, only the same
    # words (the OFI plugin warns about EFA on every single-node run; it fails only when it is an error).
    claims_warnings: bool = True
    envelope: bool = False  # a wrapper of a root cause ([F134], exit 70): ranked after specific findings
    tier: Tier | None = None  # only where the tier derived from the conditions above is wrong
    # A status any runtime call may return, whose meaning is the call's (NRT_FAILURE, NRT_INVALID): the finding
    # takes the family of the call that returned it (the families' `runtime_apis`), this one's when none is known.
    follows_api: bool = False
    before: list[str] = Field(default_factory=new_list)  # ids this one claims ahead of, where specificity cannot say

    _check = field_validator("patterns")(lambda cls, v: [valid_regex(p) for p in v])

    _no_priority = model_validator(mode="before")(lambda cls, data: reject_priority(data))

    @field_validator("message")
    @classmethod
    def _check_message(cls, v: str | None) -> str | None:
        return valid_regex(v) if v else v

    @model_validator(mode="after")
    def _something_to_match(self) -> "Match":
        if not (self.codes or self.patterns or self.nrt_statuses or self.exit_codes):
            raise ValueError("needs at least one of codes, patterns, nrt_statuses, exit_codes")
        if self.templates and not self.resemblance:
            raise ValueError("templates are recognition by resemblance: drop them or resemblance = false")
        check_tier(self)
        return self


class Extract(Strict):
    """A regex with named groups; each group is a field. `scope` says where to search:
    the finding's own message block, or every retained line of the input."""

    pattern: str
    scope: Literal["message", "input"] = "message"

    _check = field_validator("pattern")(lambda cls, v: valid_regex(v))


class EvidenceRule(Strict):
    """One fact that raises (weight > 0) or lowers (weight < 0) a hypothesis when present.

    Exactly one selector: `pattern` (regex over retained lines), `env` (variable, optional `value`),
    `flag` (compiler flag, `--auto-cast=none`), `target` (trn1/trn2/inf2), `package` with `below`
    (version older than), `field` with `equals`/`min`/`max` (a field of this finding), `fact` with
    `equals`/`min`/`max` (artifact facts: NEFF, NKI source), or `hlo` with `equals`/`min`/`max` (a named fact
    of the HLO module the compiler was given: explain --hlo, or the module a log names that is on this machine).
    With `absent = true` it counts when missing.
    A signature's `pattern` rule does not read the finding's own lines (its defining message is no evidence
    of why), unless `in_message = true`: the rule reads a part of the message that differs between instances.

    `hlo` names one of these facts (nforensics/fact_records.py HLO_FACTS), each observed per module, or per
    kernel / per convolution where it says so; the rule holds when one observation satisfies `equals`
    (a string compared without case), `min` and `max`, or, with none of them, is not zero or empty:
    - `instructions`: instructions in the module
    - `custom_calls`: custom-call instructions
    - `kernel_calls`: per kernel, how many times one graph launches it (`min = 2`: a kernel called twice)
    - `bf16_ops`, `bf16_share`: arithmetic instructions computing in bf16, and their share (0-1)
    - `bf16_f32_converts`: converts between bf16 and f32 (f32 islands in a bf16 graph)
    - `activation_ops`, `activation_kinds`: transcendental instructions (tanh, exp, ...) and distinct opcodes
    - `conv_window`: per convolution, its window (`equals = "7x7"`)
    - `gradient_conv_kernel`: per input or filter gradient convolution, the kernel size of the forward
      convolution it differentiates (`equals = "7x7"`), decided from the graph's structure
    - `collectives`, `dynamic_shapes`: collective instructions; instructions with a bounded dynamic dimension
    - `hbm_estimate_bytes`: parameter + output bytes of the entry computation
    The evidence cites the module's own words ("the HLO calls kernel sendrecv_kernel 2 times") and its file.
    Without an HLO module the rule says nothing either way, `absent` included: absent means "the module read
    has none", never "no module was read".
    """

    weight: float
    note: str
    pattern: str | None = None
    env: str | None = None
    value: str | None = None
    flag: str | None = None
    target: str | None = None
    package: str | None = None
    below: str | None = None
    field: str | None = None
    fact: str | None = None
    hlo: HloFactName | None = None
    equals: str | int | float | bool | None = None
    min: float | None = None
    max: float | None = None
    absent: bool = False
    in_message: bool = False

    @model_validator(mode="after")
    def _one_selector(self) -> "EvidenceRule":
        selectors = [s for s in ("pattern", "env", "flag", "target", "package", "field", "fact", "hlo") if getattr(self, s)]
        if len(selectors) != 1:
            raise ValueError(f"needs exactly one of pattern/env/flag/target/package/field/fact/hlo, got {selectors or 'none'}")
        if self.pattern:
            valid_regex(self.pattern)
        if self.package and not self.below:
            raise ValueError("package needs below = '<version>'")
        return self


class Confirm(Strict):
    """How to test a hypothesis by re-running (issue: confirm on hardware): the variant to run and the
    verdict that confirms the hypothesis. `unset_env` and `set_env` change variables; `args_add`/`args_remove`
    change the command; `knobs` sets template knobs (name -> value).

    `matrix` makes it a plan of several runs: each key (a knob, `neuronx_cc` for neuronx-cc releases, where
    `@fixed_in` is the one the signature's [fixed_in] names, `env:NAME`, or `args`: arguments added to the
    command, "" for none) takes each of its values, every
    combination on top of the change (the one that is the baseline itself aside), and each run must give
    `expect`. `tier` says what a run needs: "compile" checks
    run without a NeuronCore and before any device run; "device" checks run only when no compile-tier check
    confirmed its hypothesis; unset, the failure's own (a compiler's or a kernel's failure is a compile's)."""

    description: str
    expect: Verdict
    unset_env: list[str] = Field(default_factory=new_list)
    set_env: dict[str, str] = Field(default_factory=new_dict)
    args_add: list[str] = Field(default_factory=new_list)
    args_remove: list[str] = Field(default_factory=new_list)
    knobs: dict[str, str] = Field(default_factory=new_dict)
    matrix: dict[str, list[str]] = Field(default_factory=new_dict)
    tier: Literal["compile", "device"] | None = None


class HypothesisSpec(Strict):
    id: str
    title: str
    prior: float = 0.5
    explanation: str | None = None
    check: str | None = None  # what to check when the evidence is not in the input
    evidence: list[EvidenceRule] = Field(default_factory=new_list)
    confirm: Confirm | None = None


class WorkaroundSpec(Strict):
    title: str
    description: str | None = None
    code: str | None = None
    language: str | None = None
    # The hypotheses this workaround acts on (ids of the same file): "what to try" follows their ranking.
    hypotheses: list[str] = Field(default_factory=new_list)


def check_workaround_hypotheses(workarounds: list[WorkaroundSpec], ids: set[str]) -> None:
    for workaround in workarounds:
        unknown = set(workaround.hypotheses) - ids
        if unknown:
            raise ValueError(f"workaround {workaround.title!r} names unknown hypotheses {sorted(unknown)}")


class ReferenceSpec(Strict):
    title: str
    url: str


class FixedInSpec(Strict):
    component: str = "neuronx-cc"
    version: str
    sdk: str | None = None
    note: str | None = None


class SignatureTest(Strict):
    """What the signature's sample log must yield (checked by tests/test_signatures.py, like a sqlfluff
    rule's pass and fail fixtures): the exact field values, the top-ranked hypothesis, and at least one
    workaround; and `near_miss`, the fail case: a few log lines (1-10) a careless matcher would take for this
    signature but that are another failure or none (the same API or pass in a neighbouring failure, the
    message as a warning that did not fail, a sibling's code, the right words under a contradicting printed
    code). The input as a whole must yield no finding of this signature."""

    fields: dict[str, str | int | float] = Field(default_factory=new_dict)
    top_hypothesis: str | None = None
    near_miss: str | None = None

    @field_validator("near_miss")
    @classmethod
    def _few_lines(cls, v: str | None) -> str | None:
        if v is not None and not 1 <= len(v.strip().splitlines()) <= 10:
            raise ValueError("near_miss is a few log lines (1-10), not a whole log")
        return v


class Signature(Strict):
    """One known failure."""

    id: str
    family: str | None = None  # the family it refines (knowledge/families/<id>.toml); every built-in names one
    code: str | None = None  # the upstream code as printed, when there is one
    aliases: list[str] = Field(default_factory=new_list)  # other codes for the same failure (legacy TEN404)
    title: str
    component: Component
    severity: Severity = "error"
    status: Literal["open", "fixed", "user-error", "environment"] = "open"
    summary: str  # one line: what it is (ruff: "what it does")
    meaning: str  # why it happens (ruff: "why is this bad")
    match: Match
    extract: list[Extract] = Field(default_factory=new_list)
    fields: dict[str, FieldType] = Field(default_factory=new_dict)
    hypotheses: list[HypothesisSpec] = Field(default_factory=new_list)
    workarounds: list[WorkaroundSpec] = Field(default_factory=new_list)
    references: list[ReferenceSpec] = Field(default_factory=new_list)
    fixed_in: FixedInSpec | None = None
    sample_log: str  # file name under sample_logs/
    record: RecordKind | None = None  # the typed record its fields build (nforensics/fact_records.py)
    test: SignatureTest = Field(default_factory=SignatureTest)

    @field_validator("id")
    @classmethod
    def _id_shape(cls, v: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", v):
            raise ValueError("id must be lower-case words joined by '-'")
        return v

    @model_validator(mode="after")
    def _fields_declared(self) -> "Signature":
        groups = {g for e in self.extract for g in re.compile(e.pattern).groupindex}
        undeclared = groups - set(self.fields)
        if undeclared:
            raise ValueError(f"extract groups {sorted(undeclared)} are missing from [fields]")
        if self.record:
            foreign = set(self.fields) - set(RECORD_KINDS[self.record].model_fields)
            if foreign:
                raise ValueError(f"[fields] {sorted(foreign)} are not fields of record {self.record!r}")
        unknown = set(self.test.fields) - set(self.fields)
        if unknown:
            raise ValueError(f"[test.fields] names {sorted(unknown)} that are not in [fields]")
        hypothesis_ids = {h.id for h in self.hypotheses}
        if self.test.top_hypothesis and self.test.top_hypothesis not in hypothesis_ids:
            raise ValueError(f"[test].top_hypothesis {self.test.top_hypothesis!r} is not a hypothesis id")
        check_workaround_hypotheses(self.workarounds, hypothesis_ids)
        return self


# ---------------------------------------------------------------- families
