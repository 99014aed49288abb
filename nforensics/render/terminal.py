"""The terminal explanation (rich): what failed, where, fields, meaning, hypotheses, workarounds, references."""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from nforensics.records import Analysis, ArtifactRead, Finding
from nforensics.render.concise import Line, Totals, brief_line, evidence_lines, finding_lines, hang
from nforensics.render.groups import GroupTally
from nforensics.render.markdown import fixed_in_text
from nforensics.render.style import FIXED_WIDTH, detail

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
    parts: list[RenderableType] = []
    if finding.hypotheses_undetermined:
        parts.append(Text("Undetermined: nothing in the input favours one of these over another; "
                          "the checks below tell them apart.", style="yellow"))
    for rank, hypothesis in enumerate(finding.hypotheses, start=1):
        label = "-" if finding.hypotheses_undetermined else f"{rank}."
        parts.append(hang(0, Text.assemble((f"{label} ", "bold"), (hypothesis.title, "bold"),
                                           (f"  (prior + evidence {hypothesis.score:.2f})", "dim"))))
        if hypothesis.explanation:
            parts.append(hang(3, Text(hypothesis.explanation.strip(), style="default")))
        parts.extend(evidence_lines(hypothesis.evidence, 3))  # a note several lines support: said once
        if hypothesis.check:
            parts.append(hang(3, Text.assemble(("? check: ", "yellow"), hypothesis.check)))
    return Group(*parts)

_ARTIFACT_KINDS = {"hlo": "HLO", "neff": "NEFF", "source": "NKI source"}
ARTIFACT_FACTS_SHOWN = 4  # facts a file's line shows by default; --verbose shows them all


def _artifact_line(artifact: ArtifactRead, verbose: bool) -> Text:
    """`HLO read: PATH (named on line 3): 10 instructions`, `NEFF read: PATH: 13 facts: neff.target=trn2, ...`,
    or why a module the log names was not read. A file given on the command line always says what it told."""
    named = f" (named on line {artifact.line})" if artifact.line else ""
    state = f"{_ARTIFACT_KINDS[artifact.kind]} {'read' if artifact.read else 'not read'}"
    facts = list(artifact.facts.items())
    shown = facts if verbose else facts[:ARTIFACT_FACTS_SHOWN]
    told = ", ".join(f"{name}={', '.join(value) if isinstance(value, list) else value}" for name, value in shown)
    more = f" (+{len(facts) - len(shown)} more with --verbose)" if len(shown) < len(facts) else ""
    return Text(f"  {state}: {artifact.path}{named}" + (f": {artifact.note}" if artifact.note else "")
                + (f": {told}{more}" if told else ""), style="dim" if artifact.read else "yellow")


def _workarounds(finding: Finding) -> list[Line]:
    parts = []
    for workaround in finding.workarounds:
        parts.append(Line(hang(2, Text("• " + workaround.title, style="bold"))))
        if workaround.description:
            parts.append(Line(hang(4, Text(workaround.description.strip()))))
        # Plain, indented code, each line whole (the terminal folds a long one; a copy keeps it one line),
        # and no pygments lexer to build on every run.
        parts += [Line(Text("      " + line, style="cyan"), whole=True)
                  for line in (workaround.code or "").strip("\n").splitlines()]
    return parts


def _similar(finding: Finding) -> list[Line]:
    parts = []
    for report in finding.similar_reports:
        state = report.state or "state unknown"
        fixed = f" · fixed in {report.fixed_in}" if report.fixed_in else ""
        parts.append(Line(Text.assemble((f"• {report.repo}#{report.number}", "bold"),
                                        f" ({state}{fixed}) {report.title}",
                                        (f"  closeness {report.closeness:.2f}", "dim"))))
        if report.answer:
            parts.append(Line(Text("  answered: " + report.answer)))
        parts.append(Line(_url("    ", report.url, "dim"), whole=True))
    return parts


def _url(prefix: str, url: str, style: str = "") -> Text:
    """A URL on a line of its own, never cut, a terminal hyperlink where the terminal shows colour."""
    return Text.assemble(prefix, (url, f"{style} link {url}".strip()))


def _verbose_lines(finding: Finding, source: str) -> list[Line]:
    """Everything known about one finding (`--verbose`): sections under a header, URLs whole."""
    lines: list[Line] = []

    def section(title: str, *body: RenderableType | Line) -> None:
        lines.append(Line(Text(title, style="bold underline")))
        lines.extend(item if isinstance(item, Line) else Line(Padding(item, (0, 0, 0, 2))) for item in body)
        lines.append(Line(Text("")))

    code = f"[{finding.code}] " if finding.code else ""
    kind = "generic" if finding.generic else finding.signature
    colour = "red" if finding.severity == "error" else "yellow"
    lines.append(Line(Rule(style=colour)))
    lines.append(Line(Text.assemble((code, f"bold {colour}"), (finding.title, "bold"))))
    lines.append(Line(Text(f"{finding.component} · {kind} · fingerprint {finding.fingerprint}", style="dim")))
    lines.append(Line(Text("")))
    section("What failed", Text(finding.summary))
    section("Recognised as", Text(recognition(finding) + (f" · family {finding.family}" if finding.family
                                                           and finding.family != finding.signature else "")))
    section("Where", Line(Text("  " + source), whole=True), _where(finding))
    if finding.wrapped_by:
        section("Reported again by", *(Text(f"line {e.line}: {e.text}" if e.line else e.text)
                                       for e in finding.wrapped_by))
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
        section("What to try", *_workarounds(finding))
    if finding.references:
        section("References", *(item for r in finding.references
                                for item in (Line(Padding(Text(f"• {r.title}:"), (0, 0, 0, 2))),
                                             Line(_url("    ", r.url), whole=True))))
    if finding.similar_reports:
        section("Similar public reports", *(Line(Padding(line.renderable, (0, 0, 0, 2))) if not line.whole else line
                                            for line in _similar(finding)))
    return lines[:-1]

def render_text(analyses: Sequence[Analysis], *, color: bool, width: int = FIXED_WIDTH, level: str | None = None) -> str:
    writer = TextWriter(color, width, level)
    return "".join(writer.add(analysis) for analysis in analyses) + "".join(writer.close())


class TextWriter:
    """The terminal explanation, written input by input as the analyses arrive: a failure already explained
    for an earlier input is one line, not the same explanation twice; after several inputs, a table of the
    failures grouped across them and a totals line. `level` (default: `style.detail()`) is `brief` (one line
    per finding), `default` (one screen per finding) or `verbose` (everything). Holds one finding per
    distinct failure, not the inputs."""

    def __init__(self, color: bool, width: int = FIXED_WIDTH, level: str | None = None) -> None:
        self.buffer = io.StringIO()
        self.console = capture_console(self.buffer, color, width)
        self.level = level or detail()
        self.explained: dict[str, str] = {}  # fingerprint -> the input whose explanation it was
        self.tally = GroupTally(keep_findings=False)
        self.totals = Totals()

    def add(self, analysis: Analysis) -> str:
        from nforensics.render.safe import terminal_safe

        (analysis,) = terminal_safe([analysis])  # the log's own escape sequences never reach the terminal; ours do
        self.tally.add(analysis)
        self.totals.add(analysis)
        if self.level == "brief":
            for finding in analysis.findings:
                self.console.print(brief_line(finding, analysis.source), soft_wrap=True, markup=False)
            return self._take()
        console = self.console
        if not analysis.findings:
            console.print(Text(f"{analysis.source}: no known Neuron failure recognised in {analysis.total_lines} lines."))
            return self._take()
        console.print(Text(f"{analysis.source}: {_headline(analysis)}", style="bold"))
        for artifact in analysis.artifacts:
            console.print(_artifact_line(artifact, self.level == "verbose"), soft_wrap=True)  # a path stays whole
        for finding in analysis.findings:
            if finding.fingerprint in self.explained:  # the same failure again: one line, not the same panel twice
                at = finding.evidence[0].line if finding.evidence else "?"
                console.print(Text(f"  same failure as in {self.explained[finding.fingerprint]}: {finding.title} (line {at})"))
                continue
            self.explained[finding.fingerprint] = analysis.source
            lines = _verbose_lines(finding, analysis.source) if self.level == "verbose" else \
                finding_lines(finding, analysis.source)
            console.print()
            for line in lines:
                console.print(line.renderable, soft_wrap=line.whole)
        console.print()
        return self._take()

    def close(self) -> Iterator[str]:
        """The totals (and, for several inputs, the groups), as the JSON writer's close gives its tail."""
        if self.level != "brief" and self.tally.inputs > 1 and self.explained:
            self.console.print(_groups_table(self.tally))
        if self.level == "brief" or self.tally.inputs > 1:
            self.console.print(Text(self.totals.line(), style="bold"))
        yield self._take()

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


def _headline(analysis: Analysis) -> str:
    """`2 failures diagnosed`, `1 failure diagnosed, 1 warning`, or `no failure diagnosed, 1 note`: a warning
    is a message a signature knows to be noise or advice, not the failure; a note says where the log stops."""
    failures = len(analysis.failures())
    notes = sum(f.severity == "note" for f in analysis.findings)
    warnings = len(analysis.findings) - failures - notes
    said = f"{failures} failure{'s' if failures != 1 else ''} diagnosed" if failures else "no failure diagnosed"
    return said + "".join(f", {n} {word}{'s' if n != 1 else ''}" for n, word in ((warnings, "warning"), (notes, "note")) if n)

