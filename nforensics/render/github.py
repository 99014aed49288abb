"""GitHub Actions workflow commands: one annotation per failure group, the rest in the job summary.

GitHub displays at most 10 error and 10 warning annotations per step, so we emit at most 10 (one per
fingerprint, most severe first) and put every group plus the full explanation into the Markdown job
summary ($GITHUB_STEP_SUMMARY). Escaping follows actions/toolkit `command.ts`
(../shared/reference/ci-and-reports.md section 7).
"""

from __future__ import annotations

from nforensics.records import Analysis
from nforensics.render.groups import FailureGroup, group_findings, label
from nforensics.render.markdown import render_markdown, text_cell
from nforensics.render.safe import terminal_text

MAX_ANNOTATIONS = 10
SUMMARY_LIMIT = 1 << 20  # bytes per step
COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def escape_data(text: str) -> str:
    """actions/toolkit's escaping, after dropping the log's escape sequences (the runner log is a terminal)."""
    text = "\r".join(terminal_text(part) for part in text.split("\r"))  # toolkit escapes \r below
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
    message = escape_data("\n".join(lines))
    return f"::{COMMAND[finding.severity]} {','.join(properties)}::{message}"


def _clip_summary(markdown: str) -> str:
    """GitHub refuses a job summary over 1 MiB: cut at a line and say where the rest is."""
    if len(markdown.encode()) <= SUMMARY_LIMIT:
        return markdown
    kept = markdown.encode()[: SUMMARY_LIMIT - 200].decode(errors="ignore").rsplit("\n", 1)[0]
    return kept + "\n\n*(cut at GitHub's 1 MiB job-summary limit: write the whole explanation with `--format markdown=FILE`)*\n"


def render_commands(analyses: list[Analysis], groups: list[FailureGroup] | None = None) -> str:
    """The workflow commands: an annotation per failure group, up to GitHub's limit, then how many were left out."""
    groups = group_findings(analyses) if groups is None else groups
    commands = [annotation(group) for group in groups[:MAX_ANNOTATIONS]]
    if rest := groups[MAX_ANNOTATIONS:]:
        commands.append(f"nforensics: {len(rest)} more failure group(s) not annotated (GitHub shows {MAX_ANNOTATIONS});"
                        " see the job summary.")
    return "".join(command + "\n" for command in commands)


def render_summary(analyses: list[Analysis], groups: list[FailureGroup] | None = None) -> str:
    """The Markdown for the job summary ($GITHUB_STEP_SUMMARY): every group, the ones not annotated listed last."""
    groups = group_findings(analyses) if groups is None else groups
    summary = [render_markdown(analyses, groups)]
    if rest := groups[MAX_ANNOTATIONS:]:
        summary += [f"## Not annotated (GitHub shows {MAX_ANNOTATIONS} per step)", ""]
        summary += [
            f"- {text_cell(g.finding.title)} ({text_cell(g.finding.code or g.finding.signature)}), seen {g.count}×" for g in rest
        ]
    return _clip_summary("\n".join(summary))


def render_github(analyses: list[Analysis]) -> tuple[str, str]:
    """The workflow commands for the log, and the Markdown for the job summary."""
    groups = group_findings(analyses)
    return render_commands(analyses, groups), render_summary(analyses, groups)
