"""The explanation as Markdown: for a CI job summary, a pull-request comment or a wiki page.

Same content as the terminal explanation, one section per failure group. (The ready-to-file bug report
is nforensics/render/report.py; this is the explanation a reader acts on.)
"""

from __future__ import annotations

import re

from nforensics.records import Analysis, Evidence, Finding, FixedIn, Hypothesis, Workaround
from nforensics.render.groups import FailureGroup, Occurrence, group_findings, label
from nforensics.render.safe import catalogue_prose, markdown_text, terminal_text


def code_span(text: str) -> str:
    """Inline code that survives backticks inside the text (CommonMark: a longer fence); the log's escape
    sequences and control characters are dropped (Markdown is also read in terminals)."""
    text = terminal_text(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str, language: str | None = None) -> str:
    text = terminal_text(text)
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language or ''}\n{text.rstrip()}\n{fence}"


def cell(text: object) -> str:
    """A table cell of our own Markdown: pipes escaped, line breaks kept as <br>."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def text_cell(text: object) -> str:
    """A table cell holding text read from a log: inert (no link, image, HTML or mention), one line."""
    return markdown_text(text)


def where(occurrence: Occurrence) -> str:
    name = occurrence.path or occurrence.source
    return code_span(f"{name}:{occurrence.line}" if occurrence.line else name)


def heading(finding: Finding) -> str:
    """The finding's title (a generic finding's comes from the log: inert) and its code."""
    title = markdown_text(finding.title)
    return f"{title} ({code_span(finding.code)})" if finding.code and label(finding) != finding.title else title


def evidence_line(evidence: Evidence) -> str:
    """`line N: `text` (note)`. A fact from the finding's fields or an artifact (NEFF, kernel source) has no
    line to name: its note says what held."""
    if not evidence.line:
        return markdown_text(evidence.note or evidence.text.strip())
    note = f" ({markdown_text(evidence.note)})" if evidence.note else ""
    return f"line {evidence.line}: {code_span(evidence.text.strip())}{note}"


def hypothesis_lines(hypotheses: list[Hypothesis]) -> list[str]:
    """Ranked causes as a numbered list, each with its evidence (or what to check when none held)."""
    out = []
    for rank, hypothesis in enumerate(hypotheses, 1):
        explanation = f": {catalogue_prose(hypothesis.explanation)}" if hypothesis.explanation else ""
        out.append(f"{rank}. **{hypothesis.title}** (score {hypothesis.score:g}){explanation}")
        out += [f"   - {evidence_line(e)}" for e in hypothesis.evidence]
        if hypothesis.check and not hypothesis.evidence:
            out.append(f"   - to check: {catalogue_prose(hypothesis.check)}")
    return out


def workaround_lines(workarounds: list[Workaround]) -> list[str]:
    """A bullet per workaround, its code as an indented block under it."""
    out = []
    for workaround in workarounds:
        description = f": {catalogue_prose(workaround.description)}" if workaround.description else ""
        out.append(f"- {workaround.title}{description}")
        if workaround.code:
            out += ["", *("  " + line for line in code_block(workaround.code, workaround.language).split("\n"))]
    return out


def fixed_in_text(fix: FixedIn) -> str:
    sdk = f" (Neuron SDK {fix.sdk})" if fix.sdk else ""
    return fix.summary or f"{fix.component} {fix.version}{sdk}"


def _finding_section(number: int, group: FailureGroup) -> list[str]:
    finding = group.finding
    out = [f"## {number}. {heading(finding)}", ""]
    out.append(
        f"**{finding.component}** {finding.severity} · signature {code_span(finding.signature)}"
        f"{' (generic)' if finding.generic else ''} · fingerprint {code_span(finding.fingerprint)}"
    )
    seen = ", ".join(where(o) for o in group.occurrences)
    out += ["", f"Seen {group.count}× in {len(group.inputs)} input(s): {seen}", "",
            markdown_text(finding.summary, line_start=True)]
    if finding.meaning:
        out += ["", f"**What it means.** {catalogue_prose(finding.meaning)}"]
    if finding.fields:
        out += ["", "| field | value |", "|---|---|"]
        out += [f"| {text_cell(k)} | {text_cell(v)} |" for k, v in finding.fields.items()]
    if finding.evidence:
        out += ["", f"**Evidence** (in {code_span(group.first.source)})", ""]
        out += [f"- {evidence_line(e)}" for e in finding.evidence]
    if finding.hypotheses:
        out += ["", "**Likely causes**, most likely first", "", *hypothesis_lines(finding.hypotheses)]
    if finding.workarounds:
        out += ["", "**Workarounds**", "", *workaround_lines(finding.workarounds)]
    if finding.fixed_in:
        out += ["", f"**Fixed in:** {fixed_in_text(finding.fixed_in)}"]
    if finding.references:
        out += ["", "**References**", ""]
        out += [f"- [{r.title}]({r.url})" for r in finding.references]
    return out + [""]


def render_markdown(analyses: list[Analysis], groups: list[FailureGroup] | None = None) -> str:
    groups = group_findings(analyses) if groups is None else groups
    sources = ", ".join(code_span(a.source) for a in analyses)
    if not groups:
        return f"# nforensics: no Neuron failure recognised\n\nInputs: {sources}\n"
    failed = sum(group.failed for group in groups)
    others = f", {len(groups) - failed} warning(s) or note(s)" if failed < len(groups) else ""
    out = [f"# nforensics: {failed} failure(s){others} in {len(analyses)} input(s)", ""]
    out += ["| # | failure | code | component | seen | inputs |", "|---|---|---|---|---|---|"]
    for number, group in enumerate(groups, 1):
        finding = group.finding
        out.append(
            f"| {number} | {text_cell(finding.title)} | {text_cell(finding.code or '—')} | {finding.component}"
            f" | {group.count} | {text_cell(', '.join(group.inputs))} |"
        )
    out.append("")
    for number, group in enumerate(groups, 1):
        out += _finding_section(number, group)
    return "\n".join(out)
