"""Failures grouped across inputs: the unit CI formats report.

A nightly job that compiles twenty models can print the same compiler error twenty times. CI formats
show one annotation / test case per distinct failure (same fingerprint), with how often it was seen and
in which inputs, so ten identical crashes do not bury the one different crash.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from nforensics.records import SEVERITY_RANK, Analysis, Finding


@dataclass(frozen=True)
class Occurrence:
    """One finding in one input, with where a CI system should point."""

    source: str  # the input as the user named it
    path: str | None  # repo-relative path for CI locations; None for stdin or a wrapped command
    line: int | None  # first evidence line in that input
    finding: Finding


@dataclass
class FailureGroup:
    fingerprint: str
    occurrences: list[Occurrence] = field(default_factory=list)

    @property
    def finding(self) -> Finding:
        """The first occurrence speaks for the group (same fingerprint = same failure)."""
        return self.occurrences[0].finding

    @property
    def first(self) -> Occurrence:
        return self.occurrences[0]

    @property
    def failed(self) -> bool:
        """A failure, not a warning or a note (which fail no CI report)."""
        return self.finding.severity == "error"

    @property
    def count(self) -> int:
        return len(self.occurrences)

    @property
    def inputs(self) -> list[str]:
        """The inputs it was seen in, named as CI shows them (repo-relative, no temp dirs)."""
        return list(dict.fromkeys(o.path or o.source for o in self.occurrences))


def label(finding: Finding) -> str:
    """`CODE: title`, without repeating a code the title already names."""
    if not finding.code or finding.code in finding.title:
        return finding.title
    return f"{finding.code}: {finding.title}"


def ci_path(source: str, cwd: Path | None = None) -> str | None:
    """The input's path as CI systems want it: relative to the working directory (the checkout).

    A path outside the checkout is reduced to its file name: absolute or `../` paths would carry
    temporary directories (`/tmp/<user>/neuroncc_compile_workdir/<uuid>/`, pytest or runner temp dirs)
    into SARIF URIs and fingerprints and open a new alert on every run. Stdin and command output
    (sources like `<stdin>`) have no file to point at.
    """
    if not source or source == "-" or source.startswith("<"):
        return None
    path = Path(source)
    if not path.is_absolute():
        relative = PurePath(os.path.normpath(path))
        if relative.parts and relative.parts[0] != "..":
            return relative.as_posix()
        path = Path.cwd() / path
    base = (cwd or Path.cwd()).resolve()
    try:
        return path.resolve().relative_to(base).as_posix()
    except ValueError:
        return path.name


def occurrences(analyses: list[Analysis]) -> list[Occurrence]:
    found = []
    for analysis in analyses:
        path = ci_path(analysis.source)
        for finding in analysis.findings:
            lines = [e.line for e in finding.evidence if e.line]  # None: a fact from an artifact
            found.append(Occurrence(analysis.source, path, min(lines) if lines else None, finding))
    return found


class GroupTally:
    """Findings grouped by fingerprint as the analyses arrive one by one. With `keep_findings` False a later
    occurrence keeps only where it was (its group's first finding stands in for it), so a run over many
    inputs holds one finding per distinct failure."""

    def __init__(self, keep_findings: bool = True) -> None:
        self.keep_findings = keep_findings
        self.inputs = 0
        self._groups: dict[str, FailureGroup] = {}

    def add(self, analysis: Analysis) -> None:
        self.inputs += 1
        for occurrence in occurrences([analysis]):
            group = self._groups.setdefault(occurrence.finding.fingerprint, FailureGroup(occurrence.finding.fingerprint))
            if group.occurrences and not self.keep_findings:
                occurrence = Occurrence(occurrence.source, occurrence.path, occurrence.line, group.finding)
            group.occurrences.append(occurrence)

    def groups(self) -> list[FailureGroup]:
        """Most severe first, then most frequent, then first seen."""
        order = {fp: i for i, fp in enumerate(self._groups)}
        return sorted(
            self._groups.values(),
            key=lambda g: (SEVERITY_RANK.get(g.finding.severity, 9), -g.count, order[g.fingerprint]),
        )


def group_findings(analyses: list[Analysis]) -> list[FailureGroup]:
    """Findings grouped by fingerprint: most severe first, then most frequent, then first seen."""
    tally = GroupTally()
    for analysis in analyses:
        tally.add(analysis)
    return tally.groups()
