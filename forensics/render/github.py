"""GitHub Actions workflow commands: one annotation per failure group, the rest in the job summary.

GitHub displays at most 10 error and 10 warning annotations per step, so we emit at most 10 (one per
fingerprint, most severe first) and put every group plus the full explanation into the Markdown job
summary ($GITHUB_STEP_SUMMARY). Escaping follows actions/toolkit `command.ts`
(../shared/reference/ci-and-reports.md section 7).
"""

from __future__ import annotations

from forensics.records import Analysis
from forensics.render.groups import FailureGroup, group_findings, label
from forensics.render.markdown import cell, render_markdown

MAX_ANNOTATIONS = 10
COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(group: FailureGroup) -> str:
    finding, first = group.finding, group.first
    properties = []
    if first.path:
        properties.append(f"file={escape_property(first.path)}")
        if first.line:
            properties.append(f"line={first.line}")
    properties.append(f"title={escape_property(label(finding))}")
    lines = [finding.summary]
    if group.count > 1:
        lines.append(f"Seen {group.count} times in: {', '.join(group.inputs)}")
    if finding.hypotheses:
        lines.append(f"Most likely: {finding.hypotheses[0].title}")
    if finding.workarounds:
        lines.append(f"Try: {finding.workarounds[0].title}")
    return f"::{COMMAND[finding.severity]} {','.join(properties)}::{escape_data(chr(10).join(lines))}"


def render_github(analyses: list[Analysis]) -> tuple[str, str]:
    """The workflow commands for the log, and the Markdown for the job summary."""
    groups = group_findings(analyses)
    shown, rest = groups[:MAX_ANNOTATIONS], groups[MAX_ANNOTATIONS:]
    commands = [annotation(group) for group in shown]
    summary = []
    if rest:
        commands.append(f"nforensics: {len(rest)} more failure group(s) are listed in the job summary.")
        summary += [f"## Not annotated (GitHub shows {MAX_ANNOTATIONS} per step)", ""]
        summary += [
            f"- {cell(g.finding.title)} ({g.finding.code or g.finding.signature}), seen {g.count}×" for g in rest
        ]
        summary.append("")
    summary.append(render_markdown(analyses, groups))
    return "".join(command + "\n" for command in commands), "\n".join(summary)


def render_commands(analyses: list[Analysis]) -> str:
    """Only the workflow commands (the job summary is written by the caller that knows the environment)."""
    return render_github(analyses)[0]
