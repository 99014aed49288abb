"""What the bug report is built from: the analysis, and what one streaming pass over the log adds to it
(the lines around the evidence, hints about the model and the workload), plus the user's options; and
which finding the issue is about."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from nforensics.records import Analysis, Finding, MachineProbe

EXCERPT_CONTEXT = 2  # lines shown around each evidence line
EXCERPT_MAX_LINES = 80

# The form asks "Inference or Training"; these say which one the failing job was.
_INFERENCE_SIGNS = re.compile(
    r"torch_neuronx\.trace|neuronx_distributed_inference|\bNxDI\b|\.generate\(|inference|\bvllm\b", re.I
)
_TRAINING_SIGNS = re.compile(
    r"neuron_parallel_compile|\.backward\(|optimizer_step|optimizer\.step|\btrain(?:ing|er)?\b"
    r"|\btrain\w*\.py\b|--model-type[= ]?cnn-training",
    re.I,
)
_MODEL_HINTS = re.compile(
    r"from_pretrained\(\s*[\"']([\w.-]+/[\w.-]+)[\"']"
    r"|\bmodel[_-]?(?:id|name)\s*[=:]\s*[\"']?([\w.-]+/[\w.-]+)"
    r"|--model[_-](?:id|name)[= ][\"']?([\w.-]+/[\w.-]+)"
)


@dataclass
class LogContext:
    """What the report needs from the log beyond the analysis: the lines around the evidence and
    hints about the job (model, workload), gathered in one streaming pass by `scan_log`."""

    lines: dict[int, str] = field(default_factory=dict)
    model: str | None = None
    inference_signs: list[tuple[int, str]] = field(default_factory=list)
    training_signs: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class ReportInput:
    analysis: Analysis
    log: LogContext = field(default_factory=LogContext)
    instance: str | None = None  # --instance
    repro_name: str | None = None
    repro_text: str | None = None
    journal_table: str | None = None
    probe: MachineProbe | None = None  # --env-here


def _lines_of(finding: Finding) -> list[int]:
    """The input lines a finding points at (its evidence and its hypotheses' evidence)."""
    lines = ({e.line for e in finding.evidence} | {e.line for h in finding.hypotheses for e in h.evidence}
             | {e.line for e in finding.wrapped_by})
    return sorted(line for line in lines if line)  # None: evidence from artifacts, not from a line


def excerpt_window(analysis: Analysis) -> set[int]:
    """Evidence lines with their context, the primary finding's first, capped so the excerpt stays
    the part that matters."""
    primary = primary_finding(analysis)
    findings = sorted(analysis.findings, key=lambda f: f is not primary)
    wanted: set[int] = set()
    for line in (line for finding in findings for line in _lines_of(finding)):
        window = set(range(max(1, line - EXCERPT_CONTEXT), line + EXCERPT_CONTEXT + 1))
        if len(wanted | window) > EXCERPT_MAX_LINES:
            break
        wanted |= window
    return wanted


def scan_log(numbered_lines: Iterable[tuple[int, str]], analysis: Analysis) -> LogContext:
    """One pass over (number, text) lines: keep the excerpt lines, note model and workload hints."""
    window = excerpt_window(analysis)
    context = LogContext()
    for number, text in numbered_lines:
        if number in window:
            context.lines[number] = text
        _note_hints(context, number, text)
    return context


def _note_hints(context: LogContext, number: int, text: str) -> None:
    if context.model is None and (m := _MODEL_HINTS.search(text)):
        context.model = next(g for g in m.groups() if g)
    for signs, pattern in ((context.inference_signs, _INFERENCE_SIGNS), (context.training_signs, _TRAINING_SIGNS)):
        if len(signs) < 3 and (m := pattern.search(text)) and m.group(0) not in {t for _, t in signs}:
            signs.append((number, m.group(0)))


def primary_finding(analysis: Analysis) -> Finding | None:
    """The finding the issue is about: errors before warnings and notes, then catalogue signatures before
    generic ones, then failures before environment findings; ties keep the analysis order (diagnose's rank)."""
    ranked = sorted(
        analysis.findings,
        key=lambda f: (f.severity != "error", f.generic, f.component == "environment"),
    )
    return ranked[0] if ranked else None
