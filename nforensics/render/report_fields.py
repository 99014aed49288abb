"""The prose of the issue form's fields, one writer per field id (nforensics/render/report.py puts them
together): what failed and where, the workload, the reproducer, the likely causes and workarounds, and the
log excerpt with the environment and the related public reports. Everything they say was decided by
nforensics/report/ and is handed over as a `BugReport`."""

from __future__ import annotations

from nforensics import __version__
from nforensics.records import Finding, SimilarReport
from nforensics.render.groups import label
from nforensics.render.markdown import code_block, code_span, fixed_in_text, hypothesis_lines, workaround_lines
from nforensics.render.safe import catalogue_prose, markdown_text
from nforensics.report.model import BugReport


def title_field(finding: Finding | None) -> str:
    if finding is None:
        return "[Bug] Neuron failure (nforensics recognised no known signature)"
    return f"[Bug] {label(finding)}"


def _first_line(finding: Finding) -> int | None:
    return next((e.line for e in finding.evidence if e.line), None)


def _stage(report: BugReport, finding: Finding) -> str:
    """The component, and the compiler pass or runtime API when the report names it."""
    named = [f"{part.label} {code_span(part.name)}" for part in report.stage]
    return finding.component + (f" ({', '.join(named)})" if named else "")


def description_field(report: BugReport) -> str:
    finding = report.finding
    if finding is None:
        out = [
            f"nforensics found no known Neuron failure signature in {code_span(report.source)}"
            f" ({report.total_lines} lines). The log excerpt is under Logs/Context."
        ]
        return "\n".join(out)
    out = [markdown_text(finding.summary, line_start=True), ""]
    where = f", line {_first_line(finding)}" if _first_line(finding) else ""
    code = f"{code_span(finding.code)}, " if finding.code else ""
    out.append(f"**Error** ({code}{finding.component}{where}):")
    out.append("")
    message = "\n".join(e.text for e in finding.evidence[:12]) or finding.summary
    out += [code_block(message, "text"), ""]
    out.append(f"**Failing stage:** {_stage(report, finding)}")
    if report.target:
        out.append(f"**Target:** {code_span(report.target)}")
    if finding.meaning:
        out += ["", f"**What it means:** {catalogue_prose(finding.meaning)}"]
    if report.other_findings or finding.wrapped_by:
        out += ["", "**Other failures in the same log:**", ""]
        for other in report.other_findings:
            line = f" (line {_first_line(other)})" if _first_line(other) else ""
            code = f"{code_span(other.code)} " if other.code else ""
            out.append(f"- {code}{markdown_text(other.title)}{line}")
        for envelope in finding.wrapped_by:  # a wrapper reporting this same failure again
            line = f" (line {envelope.line})" if envelope.line else ""
            out.append(f"- {markdown_text(envelope.text)}{line}: reports the failure above again")
    return "\n".join(out)


def model_field(report: BugReport) -> str:
    if report.model_name:
        return f"{code_span(report.model_name)} (named in the log)"
    return "Not named in the log; please fill in the model (e.g. its Hugging Face id)."


def workload_field(report: BugReport) -> str:
    flags = report.compiler_flags
    details = f"\n\nCompiler flags: {code_span(' '.join(flags))}" if flags else ""
    if report.workload is None:
        return "Not determined from the log; please state the workload type." + details
    signs = ", ".join(f"{code_span(sign.text)} (line {sign.line})" for sign in report.workload.signs)
    return f"{report.workload.kind} (the log shows {signs})" + details


def instance_field(report: BugReport) -> str:
    instance = report.instance
    if instance is not None and instance.source == "option":
        return markdown_text(instance.name)
    if instance is not None and instance.source == "log":
        return f"{markdown_text(instance.name)} (from the log)"
    if instance is not None:
        return f"{instance.name} (probed on the failing machine)"
    if report.target:
        return f"Not stated in the log; compile target {code_span(report.target)}. Please add the EC2 instance type."
    return "Not stated in the log; please add the EC2 instance type."  # no example: it would set a label


def reproduction_field(report: BugReport) -> str:
    out: list[str] = []
    repro = report.reproducer
    if repro is not None and repro.text is not None:
        out += [f"Reproducer ({code_span(repro.name)}):", "", code_block(repro.text, repro.language)]
    elif repro is not None:
        out.append(
            f"Reproducer {code_span(repro.name)} ({repro.lines} lines, {repro.size_bytes / 1024:.1f} KB) is too long"
            " to embed: it is attached to this issue as a file."
        )
    else:
        out.append("No reproducer attached yet (nforensics report --repro FILE embeds one).")
    if report.compiler_flags:
        out += ["", "Compiler flags in the failing run:", "", code_block(" ".join(report.compiler_flags), "bash")]
    if report.journal_table:
        out += ["", "Re-runs recorded by nforensics (experiment journal):", "", report.journal_table.strip()]
    return "\n".join(out)


def solution_field(report: BugReport) -> str:
    finding = report.finding
    if finding is None:
        return ""
    out: list[str] = []
    if report.causes:
        out += ["Likely causes ranked by nforensics (score, then the evidence in the log):", ""]
        out += hypothesis_lines(report.causes)
    if finding.fixed_in:
        out += ["", f"**Fixed in:** {fixed_in_text(finding.fixed_in)}"]
    if report.workarounds_to_try:
        out += ["", "**Workarounds to try:**", "", *workaround_lines(report.workarounds_to_try)]
    if report.already_tried:
        out += ["", "**Already tried** (the failing run already had these set, and it still failed):", ""]
        out += [f"- {w.title}: {code_span(' '.join((w.code or '').split()))}" for w in report.already_tried]
    return "\n".join(out).strip()


def _excerpt(lines: dict[int, str]) -> str:
    if not lines:
        return ""
    width = len(str(max(lines)))
    shown, previous = [], None
    for number in sorted(lines):
        if previous is not None and number > previous + 1:
            shown.append(f"{'.' * width} |")
        shown.append(f"{number:>{width}} | {lines[number]}")
        previous = number
    return "\n".join(shown)


def _machine_lines(report: BugReport) -> list[str]:
    machine = report.machine
    if machine is None:
        return []
    out = ["", "Machine (probed by `nforensics report --env-here` on the failing machine):", ""]
    out += [f"- OS: {markdown_text(machine.os or 'could not collect')}",
            f"- Python: {markdown_text(machine.python or 'could not collect')}"]  # fmt: skip
    if machine.neuron_ls:
        out += ["", code_block(machine.neuron_ls, "text")]
    return out


def context_field(report: BugReport) -> str:
    out: list[str] = []
    excerpt = _excerpt(report.excerpt)
    if excerpt:
        out += [
            f"Log excerpt from {code_span(report.source)} (the lines that matter, with their line numbers;"
            f" {report.total_lines} lines in all):",
            "",
            code_block(excerpt, "text"),
        ]
    if report.env_vars:
        variables = "\n".join(f"{k}={v}" for k, v in report.env_vars.items())
        out += ["", "Environment variables:", "", code_block(variables, "bash")]
    out += _machine_lines(report)
    finding = report.finding
    if finding is not None:
        out += [
            "",
            f"nforensics signature {code_span(finding.signature)}, fingerprint {code_span(finding.fingerprint)}"
            f" (v{finding.fingerprint_version}).",
        ]
        if finding.references:
            out += ["", "References:", ""] + [f"- [{r.title}]({r.url})" for r in finding.references]
        if report.related:
            out += ["", "Related issues (public reports whose error resembles this one, found by nforensics):", ""]
            out += [f"- {r.url} ({_state(r)}): {markdown_text(r.title)}" for r in report.related]
    out += ["", f"Report written by nforensics {__version__} from {code_span(report.source)}."]
    return "\n".join(out).strip()


def _state(report: SimilarReport) -> str:
    return (report.state or "state unknown") + (f", fixed in {report.fixed_in}" if report.fixed_in else "")


def duplicate_notes(report: BugReport) -> list[str]:
    """What to tell the user before filing: the public reports that may already be this issue."""
    notes = []
    for r in report.duplicates:
        advice = f": {r.answer}" if r.answer else ""
        notes.append(f"this looks like {r.repo}#{r.number} ({_state(r)}){advice} {r.url}")
    return notes
