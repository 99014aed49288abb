"""The terminal explanation (rich): what failed, where, fields, meaning, hypotheses, workarounds, references."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import PurePath

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from forensics.records import Analysis, ArtifactRead, Finding
from forensics.render.groups import GroupTally
from forensics.render.markdown import fixed_in_text
from forensics.render.style import FIXED_WIDTH

def capture_console(buffer: io.StringIO, color: bool, width: int = FIXED_WIDTH) -> Console:
    """A console printing into `buffer` at `width` (render/style.py decides it: the terminal's, or a fixed
    one for pipes and files); ANSI colour only when `color`, and no automatic highlighting of numbers and
    paths."""
    return Console(file=buffer, force_terminal=color, no_color=not color, width=width, highlight=False)


def _where(finding: Finding) -> Table:
    table = Table.grid(padding=(0, 1))
    table.add_column(style="dim", justify="right")
    table.add_column()
    for evidence in finding.evidence[:12]:
        table.add_row(f"line {evidence.line}" if evidence.line else "", Text(evidence.text.rstrip()))
    if len(finding.evidence) > 12:
        table.add_row("", Text(f"... {len(finding.evidence) - 12} more lines", style="dim"))
    return table


def _fields(finding: Finding) -> Table:
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_column(style="cyan")
    table.add_column()
    for name, value in finding.fields.items():
        table.add_row(name, Text(repr(value) if isinstance(value, str) else str(value)))
    return table


_TIER_WORDS = {
    "exact": "exact signature",
    "family": "family match: recognised by structure, not by an exact message",
    "similar": "resembles known cases only",
    "generic": "generic: no catalogue entry knows this yet",
}


def recognition(finding: Finding) -> str:
    """How the finding was recognised and how sure that is, as the user reads it."""
    return f"{_TIER_WORDS[finding.tier]} · recognition confidence {finding.confidence:.2f}"


def _hypotheses(finding: Finding) -> Group:
    parts = []
    if finding.hypotheses_undetermined:
        parts.append(Text("Undetermined: nothing in the input favours one of these over another; "
                          "the checks below tell them apart.", style="yellow"))
    for rank, hypothesis in enumerate(finding.hypotheses, start=1):
        label = "-" if finding.hypotheses_undetermined else f"{rank}."
        parts.append(Text.assemble((f"{label} ", "bold"), (hypothesis.title, "bold"),
                                   (f"  (prior + evidence {hypothesis.score:.2f})", "dim")))
        if hypothesis.explanation:
            parts.append(Text("   " + hypothesis.explanation.strip(), style="default"))
        for evidence in hypothesis.evidence:
            if evidence.artifact:  # a fact of a file (an HLO module): what it shows, in its own words
                seen = f"  [{PurePath(evidence.artifact).name}: {evidence.text.strip()[:160]}]"
            else:
                seen = f"  [{f'line {evidence.line}: ' if evidence.line else ''}{evidence.text.strip()[:90]}]"
            parts.append(Text.assemble(("   + ", "green"), (evidence.note or "", ""), (seen, "dim")))
        if hypothesis.check:
            parts.append(Text.assemble(("   ? check: ", "yellow"), hypothesis.check))
    return Group(*parts)


def _artifact_line(artifact: ArtifactRead) -> Text:
    """`HLO read: PATH (named on line 3): 10 instructions`, or why a module the log names was not read."""
    named = f" (named on line {artifact.line})" if artifact.line else ""
    state = "HLO read" if artifact.read else "HLO not read"
    return Text(f"  {state}: {artifact.path}{named}" + (f": {artifact.note}" if artifact.note else ""),
                style="dim" if artifact.read else "yellow")


def _workarounds(finding: Finding) -> Group:
    parts = []
    for workaround in finding.workarounds:
        parts.append(Text("• " + workaround.title, style="bold"))
        if workaround.description:
            parts.append(Text("  " + workaround.description.strip()))
        if workaround.code:
            # Plain, indented code: copy-pasteable, and no pygments lexer to build on every run.
            code = "\n".join("    " + line for line in workaround.code.strip("\n").splitlines())
            parts.append(Text(code, style="cyan"))
    return Group(*parts)


def _similar(finding: Finding) -> Group:
    parts = []
    for report in finding.similar_reports:
        state = report.state or "state unknown"
        fixed = f" · fixed in {report.fixed_in}" if report.fixed_in else ""
        parts.append(Text.assemble((f"• {report.repo}#{report.number}", "bold"), f" ({state}{fixed}) {report.title}",
                                   (f"  closeness {report.closeness:.2f}", "dim")))
        if report.answer:
            parts.append(Text("  answered: " + report.answer))
        parts.append(Text("  " + report.url, style="dim"))
    return Group(*parts)


def _finding_panel(finding: Finding, source: str) -> Panel:
    sections: list = []

    def section(title: str, body) -> None:
        sections.append(Text(title, style="bold underline"))
        sections.append(body)
        sections.append(Text(""))

    section("What failed", Text(finding.summary))
    section("Recognised as", Text(recognition(finding) + (f" · family {finding.family}" if finding.family
                                                           and finding.family != finding.signature else "")))
    section(f"Where ({source})", _where(finding))
    if finding.wrapped_by:
        section("Reported again by", Group(*(Text(f"line {e.line}: {e.text}" if e.line else e.text)
                                              for e in finding.wrapped_by)))
    if finding.fields:
        section("Extracted fields", _fields(finding))
    if finding.meaning:
        section("What it means", Text(finding.meaning.strip()))
    if finding.fixed_in:
        fix = finding.fixed_in
        section("Fixed in", Text(fixed_in_text(fix), style="green" if fix.upgrade else ""))
    if finding.hypotheses:
        section("Why it may happen (ranked)", _hypotheses(finding))
    if finding.workarounds:
        section("What to try", _workarounds(finding))
    if finding.references:
        section("References", Group(*(Text(f"• {r.title}: {r.url}") for r in finding.references)))
    if finding.similar_reports:
        section("Similar public reports", _similar(finding))
    code = f"[{finding.code}] " if finding.code else ""
    kind = "generic" if finding.generic else finding.signature
    return Panel(Group(*sections[:-1]), title=f"[bold red]{escape(code)}[/]{escape(finding.title)}",
                 subtitle=f"{finding.component} · {escape(kind)} · fingerprint {finding.fingerprint}",
                 title_align="left", subtitle_align="right", border_style="red" if finding.severity == "error" else "yellow")


def render_text(analyses: Sequence[Analysis], *, color: bool, width: int = FIXED_WIDTH) -> str:
    writer = TextWriter(color, width)
    return "".join(writer.add(analysis) for analysis in analyses) + writer.close()


class TextWriter:
    """The terminal explanation, written input by input as the analyses arrive: a failure already explained
    for an earlier input is one line, not the same panel twice; after several inputs, a table of the
    failures grouped across them. Holds one finding per distinct failure, not the inputs."""

    def __init__(self, color: bool, width: int = FIXED_WIDTH) -> None:
        self.buffer = io.StringIO()
        self.console = capture_console(self.buffer, color, width)
        self.explained: dict[str, str] = {}  # fingerprint -> the input whose panel explained it
        self.tally = GroupTally(keep_findings=False)

    def add(self, analysis: Analysis) -> str:
        from forensics.render.safe import terminal_safe

        (analysis,) = terminal_safe([analysis])  # the log's own escape sequences never reach the terminal; ours do
        self.tally.add(analysis)
        console = self.console
        if not analysis.findings:
            console.print(f"{analysis.source}: no known Neuron failure recognised in {analysis.total_lines} lines.")
            return self._take()
        count = len(analysis.findings)
        console.print(Text(f"{analysis.source}: {count} failure{'s' if count != 1 else ''} diagnosed", style="bold"))
        for artifact in analysis.artifacts:
            if artifact.kind == "hlo":
                console.print(_artifact_line(artifact), soft_wrap=True)  # a path stays whole, to copy
        for finding in analysis.findings:
            if finding.fingerprint in self.explained:  # the same failure again: one line, not the same panel twice
                line = finding.evidence[0].line if finding.evidence else "?"
                console.print(f"  same failure as in {self.explained[finding.fingerprint]}: {finding.title} (line {line})")
                continue
            self.explained[finding.fingerprint] = analysis.source
            console.print(_finding_panel(finding, analysis.source))
        return self._take()

    def close(self) -> str:
        if self.tally.inputs > 1 and self.explained:
            self.console.print(_groups_table(self.tally))
        return self._take()

    def _take(self) -> str:
        text = self.buffer.getvalue()
        self.buffer.seek(0)
        self.buffer.truncate()
        return text


def _groups_table(tally: GroupTally) -> Table:
    """Identical failures across the inputs, grouped by fingerprint, most severe and most frequent first."""
    table = Table(title=f"{tally.inputs} inputs", title_justify="left", box=None, header_style="bold")
    for column in ("seen", "code", "failure", "inputs"):
        table.add_column(column, overflow="fold")
    for group in tally.groups():
        table.add_row(f"{group.count}×", group.finding.code or "-", group.finding.title, ", ".join(group.inputs))
    return table
