"""The bug report, fully decided: the records nforensics/report/build.py fills and nforensics/render/report*.py
formats into the aws-neuron-sdk issue form. Types only; every text in a `BugReport` is already redacted."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from nforensics.defaults import new_dict, new_list
from nforensics.records import Finding, Hypothesis, MachineProbe, Record, SimilarReport, SourceLine, Workaround


class StagePart(Record):
    """Where the failure happened, as the finding or its first line names it: `pass` sg0000/Tensorizer/...,
    `in` NRT:nrt_load, `api` ..."""

    label: str
    name: str


class Workload(Record):
    """Inference or Training, with the log lines that say so (the form's workload field; the repository
    labels issues by these words)."""

    kind: Literal["Inference", "Training"]
    signs: list[SourceLine]


class Instance(Record):
    name: str
    source: Literal["option", "log", "probe"]  # --instance, the log, or --env-here on the failing machine


class Release(Record):
    """The Neuron packages the form asks for (the log's listings, the probe's filling gaps), by name."""

    apt: dict[str, str] = Field(default_factory=new_dict)
    pip: dict[str, str] = Field(default_factory=new_dict)
    sdk: str | None = None  # the Neuron SDK release that ships the log's neuronx-cc


class Reproducer(Record):
    name: str
    language: str  # the code block's language, from the file name
    text: str | None  # the reproducer to embed; None when it is too long and goes along as an attachment
    lines: int
    size_bytes: int


class Redaction(Record):
    enabled: bool  # False with --no-redact
    # The placeholders the report's texts carry -> their kind, kinds in the order a summary lists them:
    # what lets the text written from this model say how many occurrences it masks.
    placeholders: dict[str, str] = Field(default_factory=new_dict)


class BugReport(Record):
    """Everything the issue says, roughly in the order of the form's fields."""

    finding: Finding | None  # the failure the issue is about; None when nothing was recognised
    other_findings: list[Finding] = Field(default_factory=new_list)  # other failures of the same log
    stage: list[StagePart] = Field(default_factory=new_list)
    target: str | None = None  # the compile target
    model_name: str | None = None  # a Hugging Face id the log names
    workload: Workload | None = None  # None: the log does not say
    compiler_flags: list[str] = Field(default_factory=new_list)
    instance: Instance | None = None
    release: Release = Field(default_factory=Release)
    reproducer: Reproducer | None = None
    journal_table: str | None = None  # the experiment journal's re-runs, as Markdown
    causes: list[Hypothesis] = Field(default_factory=new_list)  # the top-ranked hypotheses
    workarounds_to_try: list[Workaround] = Field(default_factory=new_list)
    already_tried: list[Workaround] = Field(default_factory=new_list)  # shell settings the failing run already had
    source: str
    total_lines: int = 0
    excerpt: dict[int, str] = Field(default_factory=new_dict)  # line number -> text: the lines that matter
    env_vars: dict[str, str] = Field(default_factory=new_dict)  # the log's, the probe's filling gaps
    machine: MachineProbe | None = None  # --env-here
    related: list[SimilarReport] = Field(default_factory=new_list)  # public reports whose error resembles this one
    duplicates: list[SimilarReport] = Field(default_factory=new_list)  # the related reports that may be this issue
    compiler_version: str | None = None  # the older form's `neuronx-cc --version` input
    frameworks: dict[str, str] = Field(default_factory=new_dict)  # the older form's frameworks input
    redaction: Redaction
