"""Decide the bug report: from the analysis, the log and the user's options to a redacted `BugReport`.

The decisions live here, the wording in nforensics/render/report*.py: which finding the issue is about, where
it failed (the compiler pass or runtime API its first line names), Inference or Training, where the instance
type comes from, whether the reproducer fits in the issue, which causes and workarounds to list and which of
those the failing run already had, the lines that matter, and the public reports it may repeat.
"""

from __future__ import annotations

import re

from nforensics.records import Finding, SimilarReport, SourceLine
from nforensics.redact import Redactor
from nforensics.report.inputs import ReportInput, primary_finding
from nforensics.report.model import BugReport, Instance, Redaction, Reproducer, StagePart, Workload
from nforensics.report.redaction import redacted
from nforensics.report.release import compiler_version, frameworks, release
from nforensics.report.workarounds import already_applied

REPRO_EMBED_BYTES = 8000
TOP_HYPOTHESES = 3
DUPLICATE_CLOSENESS = 0.8  # a related report this close (or of the same signature) may be the same issue

_STAGE_FIELDS = ("pass_name", "pass", "stage", "phase", "api")
_COMPILER_PASS = re.compile(r"\[((?:sg\d+/)?[A-Z]\w*(?:/\w+)+)\]")  # `[sg0000/Tensorizer/BirCodeGenLoop]`
_RUNTIME_FUNCTION = re.compile(r"\b((?:NRT|TDRV|NMGR|KMGR|ENC|NCCL|CCOM):\w+)")  # `NRT:nrt_load`


def _stage(finding: Finding) -> list[StagePart]:
    """The compiler pass or runtime API, when the finding's fields or its first line name it."""
    named = [StagePart(label=k.replace("_name", ""), name=str(v)) for k, v in finding.fields.items() if k in _STAGE_FIELDS]
    first = finding.evidence[0].text if finding.evidence else ""
    if not named and (m := _COMPILER_PASS.search(first)):
        named = [StagePart(label="pass", name=m.group(1))]
    elif not named and (m := _RUNTIME_FUNCTION.search(first)):
        named = [StagePart(label="in", name=m.group(1))]
    return named


def _workload(report: ReportInput) -> Workload | None:
    """Training when the log shows more signs of training than of inference; None when it shows neither."""
    inference, training = report.log.inference_signs, report.log.training_signs
    if not inference and not training:
        return None
    if len(training) > len(inference):
        return Workload(kind="Training", signs=[SourceLine(line=line, text=text) for line, text in training])
    return Workload(kind="Inference", signs=[SourceLine(line=line, text=text) for line, text in inference])


def _instance(report: ReportInput) -> Instance | None:
    if report.instance:
        return Instance(name=report.instance, source="option")
    if report.analysis.environment.instance_type:
        return Instance(name=report.analysis.environment.instance_type, source="log")
    if report.probe and report.probe.instance_type:
        return Instance(name=report.probe.instance_type, source="probe")
    return None


def _reproducer(report: ReportInput) -> Reproducer | None:
    """The reproducer, embedded up to REPRO_EMBED_BYTES; a longer one goes along as an attachment."""
    if report.repro_text is None:
        return None
    name = report.repro_name or ""
    size = len(report.repro_text.encode())
    return Reproducer(
        name=name or "repro",
        language="python" if name.endswith(".py") else "bash" if name.endswith(".sh") else "",
        text=report.repro_text if size <= REPRO_EMBED_BYTES else None,
        lines=report.repro_text.count("\n") + 1,
        size_bytes=size,
    )


def _excerpt(report: ReportInput) -> dict[int, str]:
    """The log lines that matter; without log text at hand (e.g. a JSON analysis), the evidence lines themselves."""
    if report.log.lines:
        return dict(report.log.lines)
    return {e.line: e.text for f in report.analysis.findings for e in f.evidence if e.line}


def _duplicates(finding: Finding) -> list[SimilarReport]:
    """The public reports that may already be this issue: what to tell the user before filing."""
    return [
        r for r in finding.similar_reports
        if r.closeness >= DUPLICATE_CLOSENESS or (r.signature and r.signature == finding.signature)
    ]


def build_report(report: ReportInput, redactor: Redactor) -> BugReport:
    """The decided report, every text redacted with `redactor` (the one that read the log, shared with a
    bundle, so placeholders agree); with redaction off (--no-redact), texts as they are."""
    analysis, probe = report.analysis, report.probe
    environment = analysis.environment
    finding = primary_finding(analysis)
    packages = release(environment, probe)
    workarounds = finding.workarounds if finding else []
    tried = [w for w in workarounds if already_applied(w, environment)]
    env_vars = dict(environment.env_vars)
    for name, value in (probe.env_vars if probe else {}).items():
        env_vars.setdefault(name, value)
    decided = BugReport(
        finding=finding,
        other_findings=[f for f in analysis.findings if finding and f.signature != finding.signature],
        stage=_stage(finding) if finding else [],
        target=environment.target,
        model_name=report.log.model,
        workload=_workload(report),
        compiler_flags=environment.compiler_flags,
        instance=_instance(report),
        release=packages,
        reproducer=_reproducer(report),
        journal_table=report.journal_table,
        causes=finding.hypotheses[:TOP_HYPOTHESES] if finding else [],
        workarounds_to_try=[w for w in workarounds if w not in tried],
        already_tried=tried,
        source=analysis.source,
        total_lines=analysis.total_lines,
        excerpt=_excerpt(report),
        env_vars=env_vars,
        machine=probe,
        related=finding.similar_reports if finding else [],
        duplicates=_duplicates(finding) if finding else [],
        compiler_version=compiler_version(packages, probe),
        frameworks=frameworks(packages),
        redaction=Redaction(enabled=redactor.enabled),
    )
    return redacted(decided, redactor)
