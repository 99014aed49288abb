"""The ready-to-file bug report for aws-neuron/aws-neuron-sdk, shaped like its `bug-report.yml` issue form.

The form's fields, by id (the query parameter names of a prefilled new-issue URL) and label (the
`### Label` headings GitHub writes into an issue opened from the form):
https://github.com/aws-neuron/aws-neuron-sdk/blob/master/.github/ISSUE_TEMPLATE/bug-report.yml

It formats a `BugReport` (nforensics/report/: every decision made, every text redacted), so the Markdown,
the JSON and the URL carry the same placeholders. The repository labels issues by keywords
(`.github/workflows/auto-label-issues.yml`, plain substring matching): the workload field says
"Inference" or "Training" literally and the instance field names the instance type, while the prose
written here avoids the other label words (no "constraint", "observed", "server", ...).

This module holds the form (its ids and labels) and fills it: report_fields.py writes the fields' prose,
the release field is written here (with the package versions), report_outputs.py turns the form into
Markdown, JSON and the prefilled URL.
"""

from __future__ import annotations

from dataclasses import dataclass

from nforensics.render.markdown import code_block
from nforensics.render.report_fields import (
    context_field,
    description_field,
    instance_field,
    model_field,
    reproduction_field,
    solution_field,
    title_field,
    workload_field,
)
from nforensics.report.model import BugReport, Redaction, Release

REPOSITORY = "aws-neuron/aws-neuron-sdk"
TEMPLATE = "bug-report.yml"
FORM_LABELS = ("bug", "needs-triage")

# (id, label) in form order; the current form (2025-09) first, then the two inputs of the older form.
FIELDS = (
    ("description", "Describe the bug"),
    ("modelname", "Model Name"),
    ("workloadtype", "Describe the workload type"),
    ("instancetype", "Instance Type"),
    ("release", "Release version"),
    ("reproduction", "Reproduction Steps"),
    ("regression", "Regression Issue"),
    ("solution", "Possible Solution"),
    ("context", "Logs/Context/Additional Information"),
)
LEGACY_FIELDS = (
    ("neuronx-cc-version", "neuronx-cc version used"),
    ("frameworks-used", "Framework(s) and their versions used ( PyTorch, etc..)"),
)
REGRESSION_OPTION = "Select this option if this issue appears to be a regression."
NO_RESPONSE = "_No response_"  # what GitHub writes for an empty optional field

APT_COMMAND = "apt list --installed | grep -i -e neuron"
PIP_COMMAND = "pip list | grep -i -e neuron -e torch -e transformers -e jax"


@dataclass
class IssueForm:
    title: str
    fields: dict[str, str]  # id -> Markdown value, form order, legacy ids last
    redaction: dict[str, int]  # kind -> occurrences masked
    redacted: bool


def _release(release: Release) -> str:
    if not release.apt and not release.pip:
        return "The log lists no Neuron package versions; please paste the output of:\n\n" + code_block(
            f"{APT_COMMAND}\n{PIP_COMMAND}", "bash"
        )
    out = []
    if release.sdk:
        out += [f"Neuron SDK {release.sdk} (the release that ships neuronx-cc {release.pip['neuronx-cc']})", ""]
    apt_lines = [f"{name} {version}" for name, version in release.apt.items()] or ["(no apt listing in the log)"]
    pip_lines = [f"{name} {version}" for name, version in release.pip.items()] or ["(no pip listing in the log)"]
    out.append(code_block("\n".join([f"$ {APT_COMMAND}", *apt_lines, f"$ {PIP_COMMAND}", *pip_lines]), "text"))
    return "\n".join(out)


def _masked_counts(texts: list[str], redaction: Redaction) -> dict[str, int]:
    """Occurrences masked per kind in the texts written: every placeholder they show counts."""
    counts: dict[str, int] = {}
    for placeholder, kind in redaction.placeholders.items():
        found = sum(text.count(placeholder) for text in texts)
        if found:
            counts[kind] = counts.get(kind, 0) + found
    return counts


def redaction_note(form: IssueForm) -> str:
    """The last lines of every report: what was masked, by kind, or that nothing was."""
    if not form.redacted:
        return "**Redaction was turned off (--no-redact).** Check this report for keys, hosts and user names before posting."
    if not form.redaction:
        return "Redaction (offline, by nforensics): nothing to mask was found."
    counts = ", ".join(f"{kind} ×{count}" for kind, count in form.redaction.items())
    return f"Redacted before sharing (offline, by nforensics; the same value keeps the same placeholder): {counts}."


def issue_form(report: BugReport) -> IssueForm:
    """All form fields, written from the decided report (its texts already redacted)."""
    fields = {
        "description": description_field(report),
        "modelname": model_field(report),
        "workloadtype": workload_field(report),
        "instancetype": instance_field(report),
        "release": _release(report.release),
        "reproduction": reproduction_field(report),
        "regression": f"- [ ] {REGRESSION_OPTION}",
        "solution": solution_field(report),
        "context": context_field(report),
        "neuronx-cc-version": report.compiler_version or "",
        "frameworks-used": ", ".join(f"{name} {version}" for name, version in report.frameworks.items()),
    }
    title = title_field(report.finding)
    counts = _masked_counts([title, *fields.values()], report.redaction)
    form = IssueForm(title=title, fields=fields, redaction=counts, redacted=report.redaction.enabled)
    form.fields["context"] = (form.fields["context"] + "\n\n---\n\n" + redaction_note(form)).strip()
    return form
