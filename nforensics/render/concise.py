"""The short terminal views: the default one-screen answer per finding, and `--brief`'s one line per finding.

Default, per finding: its title, where it is (the first line of its evidence), the top hypothesis with the
evidence behind it (or, when nothing favours one, what to check first), the first thing to try and fixed-in;
one last line names what `--verbose` adds. `--brief`: `path:line: CODE title -> top hypothesis`, one line per
finding, like ruff's concise output. Both end a run with a totals line (`Totals`).

Lines are printed one by one (`Line`): prose wraps at the width, a URL or a path is printed with soft wrap so
it is never cut (the terminal folds a URL longer than the screen, and it stays one line to copy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from nforensics.records import Analysis, Evidence, Finding
from nforensics.render.markdown import fixed_in_text

CODE_LINES_SHOWN = 6  # a first workaround's code up to this many lines is shown by default; longer: --verbose


@dataclass(frozen=True)
class Line:
    """One thing to print: `whole` is printed with soft wrap (a URL, a path: never cut by us)."""

    renderable: RenderableType
    whole: bool = False


def grouped_evidence(evidence: Sequence[Evidence]) -> list[tuple[str | None, list[Evidence]]]:
    """Evidence by note, in order of first appearance: a note that several lines support is said once."""
    groups: dict[str | None, list[Evidence]] = {}
    for item in evidence:
        groups.setdefault(item.note, []).append(item)
    return list(groups.items())


def seen_text(items: Sequence[Evidence], limit: int = 90) -> str:
    """`[line 3: text]`, `[lines 3, 7: text of the first]` or `[model.hlo: fact] [model.hlo: fact]` for one
    note's evidence."""
    first = items[0]
    if first.artifact:  # each fact of a file is its own: all are cited, under the one note
        return " ".join(f"[{PurePath(item.artifact or '').name}: {item.text.strip()[:160]}]" for item in items)
    lines = [str(item.line) for item in items if item.line]
    where = f"line{'s' if len(lines) > 1 else ''} {', '.join(lines)}: " if lines else ""
    return f"[{where}{shorten(first.text.strip(), limit)}]"


def shorten(text: str, limit: int) -> str:
    """`text` cut to `limit` characters at a space (a placeholder such as `[redacted:host-1]` stays whole)."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip() + " …"


def evidence_lines(evidence: Sequence[Evidence], indent: int, limit: int = 90) -> list[Table]:
    """`+ note  [lines 3, 7: text]` per note, wrapping under the note."""
    return [hang(indent, Text.assemble(("+ ", "green"), (note or "", ""), (f"  {seen_text(items, limit)}", "dim")))
            for note, items in grouped_evidence(evidence)]


def hang(indent: int, text: Text) -> Table:
    """`text` after `indent` spaces, its wrapped lines indented as much."""
    grid = Table.grid()
    grid.add_column(width=indent, no_wrap=True)
    grid.add_column()
    grid.add_row("", text)
    return grid


def code_label(finding: Finding) -> str:
    """What identifies the failure in one word: its printed code, else its signature or family id."""
    return finding.code or finding.signature


def first_line(finding: Finding) -> int | None:
    return next((e.line for e in finding.evidence if e.line), None)


def _label(name: str, body: Text | str) -> Table:
    """`  name:  body`, the body wrapping under itself."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=11, style="bold", no_wrap=True)
    grid.add_column()
    grid.add_row(f"  {name}:", body if isinstance(body, Text) else Text(body))
    return grid


def _where(finding: Finding, source: str) -> Line:
    lines = [e for e in finding.evidence if e.line]
    if not lines:
        return Line(_label("where", source))
    more = f" (+{len(lines) - 1} more)" if len(lines) > 1 else ""
    text = Text.assemble((f"line {lines[0].line}{more}: ", "dim"), lines[0].text.strip())
    text.no_wrap, text.overflow = True, "ellipsis"  # one line: the whole of it is under --verbose
    return Line(_label("where", text))


def _hypothesis(finding: Finding) -> list[Line]:
    if not finding.hypotheses:
        return []
    top = finding.hypotheses[0]
    if finding.hypotheses_undetermined:
        count = len(finding.hypotheses)
        out = [Line(_label("cause", Text(f"undetermined: nothing in the input favours one of {count} causes",
                                         style="yellow")))]
        check = next((h.check for h in finding.hypotheses if h.check), None)
        if check:
            out.append(Line(hang(12, Text.assemble(("? check first: ", "yellow"), check))))
        return out
    out = [Line(_label("cause", Text(top.title, style="bold")))]
    out += [Line(line) for line in evidence_lines(top.evidence, 12, limit=60)]
    if not top.evidence and top.check:
        out.append(Line(hang(12, Text.assemble(("? check: ", "yellow"), top.check))))
    return out


def _try(finding: Finding) -> list[Line]:
    if not finding.workarounds:
        return []
    first = finding.workarounds[0]
    out = [Line(_label("try", Text(first.title, style="bold")))]
    code = first.code.strip("\n").splitlines() if first.code else []
    if code and len(code) <= CODE_LINES_SHOWN:
        out += [Line(Text("              " + line, style="cyan"), whole=True) for line in code]
    return out


def _hidden(finding: Finding) -> str:
    """What --verbose adds for this finding, in words."""
    parts = []
    if finding.meaning:
        parts.append("what it means")
    if finding.fields:
        parts.append("fields")
    if len(finding.hypotheses) > 1 and not finding.hypotheses_undetermined:
        parts.append(f"{len(finding.hypotheses) - 1} more cause{'s' if len(finding.hypotheses) > 2 else ''}")
    elif finding.hypotheses_undetermined:
        parts.append("the causes and their checks")
    code = finding.workarounds[0].code if finding.workarounds else None
    if code and len(code.strip("\n").splitlines()) > CODE_LINES_SHOWN:
        parts.append("the code to try")
    if len(finding.workarounds) > 1:
        parts.append(f"{len(finding.workarounds) - 1} more thing{'s' if len(finding.workarounds) > 2 else ''} to try")
    if finding.references:
        parts.append(f"{len(finding.references)} reference{'s' if len(finding.references) > 1 else ''}")
    return ", ".join(parts)


def finding_lines(finding: Finding, source: str) -> list[Line]:
    """The default view of one finding."""
    code = f"[{finding.code}] " if finding.code else ""
    colour = "red" if finding.severity == "error" else "yellow"
    out = [Line(Text.assemble((code, f"bold {colour}"), (finding.title, "bold"))), _where(finding, source)]
    out += _hypothesis(finding)
    out += _try(finding)
    if finding.fixed_in:
        fixed = fixed_in_text(finding.fixed_in)
        fixed = fixed[len("fixed in "):] if fixed.startswith("fixed in ") else fixed
        out.append(Line(_label("fixed in", Text(fixed, style="green" if finding.fixed_in.upgrade else ""))))
    if finding.tier == "similar" and finding.similar_reports:
        out.append(Line(Text("  see:       " + finding.similar_reports[0].url), whole=True))
    hidden = _hidden(finding)
    if hidden:
        out.append(Line(Text(f"  --verbose: {hidden}", style="dim")))
    return out


def brief_line(finding: Finding, source: str) -> str:
    """`path:line: CODE title -> top hypothesis` (ruff's concise shape)."""
    line = first_line(finding)
    where = f"{source}:{line}" if line else source
    cause = ""
    if finding.hypotheses:
        cause = " -> undetermined" if finding.hypotheses_undetermined else f" -> {finding.hypotheses[0].title}"
    return f"{where}: {code_label(finding)} {finding.title}{cause}"


class Totals:
    """Inputs by outcome: diagnosed (a failure recognised), unrecognised (only generic findings: a failure
    the catalogue does not know), with nothing (no failure found); and the findings."""

    def __init__(self) -> None:
        self.inputs = self.findings = self.diagnosed = self.unrecognised = self.nothing = 0

    def add(self, analysis: Analysis) -> None:
        failures = analysis.failures()  # a warning or a note (where a log stops) is no failure
        self.inputs += 1
        self.findings += len(failures)
        if not failures:
            self.nothing += 1
        elif all(finding.generic or finding.tier == "generic" for finding in failures):
            self.unrecognised += 1
        else:
            self.diagnosed += 1

    def line(self) -> str:
        findings = f"{self.findings} failure{'s' if self.findings != 1 else ''}"
        inputs = f"{self.inputs} input{'s' if self.inputs != 1 else ''}"
        return (f"{findings} in {inputs}: {self.diagnosed} diagnosed, {self.unrecognised} unrecognised, "
                f"{self.nothing} with nothing")
