"""The ready-to-file bug report for aws-neuron/aws-neuron-sdk, shaped like its `bug-report.yml` issue form.

The form's fields, by id (the query parameter names of a prefilled new-issue URL) and label (the
`### Label` headings GitHub writes into an issue opened from the form):
https://github.com/aws-neuron/aws-neuron-sdk/blob/master/.github/ISSUE_TEMPLATE/bug-report.yml

Every field is built from the analysis first, then passed through one `Redactor`, so the Markdown, the
JSON and the URL carry the same placeholders. The repository labels issues by keywords
(`.github/workflows/auto-label-issues.yml`, plain substring matching): the workload field says
"Inference" or "Training" literally and the instance field names the instance type, while the prose
written here avoids the other label words (no "constraint", "observed", "server", ...).

This module holds the form (its ids and labels) and builds it: report_input.py gathers what the report
reads from the log, report_fields.py writes the fields' prose, the release field is written here (with the
package versions), report_outputs.py turns the form into Markdown, JSON and the prefilled URL.
"""

from __future__ import annotations

from dataclasses import dataclass

from forensics.redact import Redactor
from forensics.render.markdown import code_block
from forensics.render.report_fields import (
    context_field,
    description_field,
    instance_field,
    model_field,
    reproduction_field,
    solution_field,
    title_field,
    workload_field,
)
from forensics.render.report_input import ReportInput, primary_finding

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
FRAMEWORKS = ("torch", "torch-neuronx", "torch-xla", "jax", "jax-neuronx", "transformers", "nki")


@dataclass
class IssueForm:
    title: str
    fields: dict[str, str]  # id -> Markdown value, form order, legacy ids last
    redaction: dict[str, int]  # kind -> occurrences masked
    redacted: bool


def _packages(report: ReportInput) -> tuple[dict[str, str], dict[str, str]]:
    """(apt, pip) packages: the log's listings first, the probe's (--env-here) filling gaps."""
    from forensics.envprobe import PIP_FILTER

    apt: dict[str, str] = {}
    pip: dict[str, str] = {}
    for name, version in report.analysis.environment.packages.items():
        if name.startswith("aws-neuron"):
            apt[name] = version
        elif PIP_FILTER.search(name):  # its "neuron" also covers what the apt filter would
            pip[name] = version
    if report.probe:
        for name, version in report.probe.apt_packages.items():
            apt.setdefault(name, version)
        for name, version in report.probe.pip_packages.items():
            pip.setdefault(name, version)
    return dict(sorted(apt.items())), dict(sorted(pip.items()))


def _sdk_release(pip: dict[str, str]) -> str | None:
    """The Neuron SDK release that ships the compiler the log shows, when the release table knows it."""
    from forensics.diagnose.versions import first_sdk_with, releases, version_key

    compiler = pip.get("neuronx-cc")
    if not compiler:
        return None
    sdk = first_sdk_with("neuronx-cc", compiler)
    shipped = dict(releases()).get(sdk, {}).get("neuronx-cc", ()) if sdk else ()
    wanted = version_key("neuronx-cc", compiler)
    return sdk if any(version_key("neuronx-cc", v) == wanted for v in shipped) else None


def _release(report: ReportInput) -> str:
    apt, pip = _packages(report)
    if not apt and not pip:
        return "The log lists no Neuron package versions; please paste the output of:\n\n" + code_block(
            f"{APT_COMMAND}\n{PIP_COMMAND}", "bash"
        )
    out = []
    sdk = _sdk_release(pip)
    if sdk:
        out += [f"Neuron SDK {sdk} (the release that ships neuronx-cc {pip['neuronx-cc']})", ""]
    apt_lines = [f"{name} {version}" for name, version in apt.items()] or ["(no apt listing in the log)"]
    pip_lines = [f"{name} {version}" for name, version in pip.items()] or ["(no pip listing in the log)"]
    out.append(code_block("\n".join([f"$ {APT_COMMAND}", *apt_lines, f"$ {PIP_COMMAND}", *pip_lines]), "text"))
    return "\n".join(out)


def _legacy_compiler(report: ReportInput, pip: dict[str, str]) -> str:
    if report.probe and report.probe.compiler_version:
        return report.probe.compiler_version.splitlines()[0]
    return f"NeuronX Compiler version {pip['neuronx-cc']}" if "neuronx-cc" in pip else ""


def redaction_note(form: IssueForm) -> str:
    """The last lines of every report: what was masked, by kind, or that nothing was."""
    if not form.redacted:
        return "**Redaction was turned off (--no-redact).** Check this report for keys, hosts and user names before posting."
    if not form.redaction:
        return "Redaction (offline, by nforensics): nothing to mask was found."
    counts = ", ".join(f"{kind} ×{count}" for kind, count in form.redaction.items())
    return f"Redacted before sharing (offline, by nforensics; the same value keeps the same placeholder): {counts}."


def build_form(report: ReportInput, redactor: Redactor) -> IssueForm:
    """All form fields, redacted with `redactor` (shared with a bundle so placeholders agree)."""
    finding = primary_finding(report.analysis)
    _, pip = _packages(report)
    raw = {
        "description": description_field(report, finding),
        "modelname": model_field(report),
        "workloadtype": workload_field(report),
        "instancetype": instance_field(report),
        "release": _release(report),
        "reproduction": reproduction_field(report),
        "regression": f"- [ ] {REGRESSION_OPTION}",
        "solution": solution_field(report, finding),
        "context": context_field(report, finding),
        "neuronx-cc-version": _legacy_compiler(report, pip),
        "frameworks-used": ", ".join(f"{n} {pip[n]}" for n in FRAMEWORKS if n in pip),
    }
    title = title_field(finding)
    counting = redactor.sharing()
    counting.learn(title, *raw.values())
    fields = {key: counting.redact(value) for key, value in raw.items()}
    form = IssueForm(
        title=counting.redact(title), fields=fields, redaction=counting.summary(), redacted=redactor.enabled
    )
    form.fields["context"] = (form.fields["context"] + "\n\n---\n\n" + redaction_note(form)).strip()
    return form
