"""The one front door for "analyse these inputs": read (ingest), parse (records), add artifact facts, reason
(diagnose). The CLI, the CI formats, `run`, the experiment oracle, the bug report and the compile-cache
scan all come through here; diagnose itself only reasons over records it is handed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from forensics.diagnose import diagnose
from forensics.diagnose.evidence import Facts
from forensics.ingest import read_lines, text_lines
from forensics.knowledge import KnowledgeBase, load_kb
from forensics.parse import assemble
from forensics.records import Analysis

if TYPE_CHECKING:
    from forensics.artifacts.cache import CacheReport


@dataclass(frozen=True)
class Artifacts:
    """Files beside the log whose facts feed the hypotheses (explain --neff/--source/--device)."""

    neff: Path | None = None
    source: Path | None = None
    device: str | None = None  # trn1, inf2, trn1.2xlarge...; defaults to what the log names


def analyze_path(spec: str, *, facts: Facts | None = None, kb_dirs: Sequence[Path | str] = (),
                 artifacts: Artifacts | None = None) -> Analysis:
    name, lines = read_lines(spec)
    return analyze_lines(name, lines, facts=facts, kb=load_kb(kb_dirs), artifacts=artifacts)


def analyze_text(text: str, source: str = "<text>", *, facts: Facts | None = None,
                 kb_dirs: Sequence[Path | str] = (), exclude_cases: frozenset[str] = frozenset()) -> Analysis:
    return analyze_lines(source, text_lines(text), facts=facts, kb=load_kb(kb_dirs), exclude_cases=exclude_cases)


def analyze_lines(source: str, lines: Iterable[tuple[int, str]], *, facts: Facts | None = None,
                  kb: KnowledgeBase | None = None, artifacts: Artifacts | None = None,
                  exclude_cases: frozenset[str] = frozenset()) -> Analysis:
    """`exclude_cases`: URLs of public reports not to show (measuring on a log taken from that very thread)."""
    log, retained = assemble(source, lines)
    known = dict(facts or {})
    if artifacts is not None:
        from forensics.artifacts import facts_for

        device = artifacts.device or log.environment.instance_type or log.environment.target
        known = facts_for(artifacts.neff, artifacts.source, device) | known
    return diagnose(log, retained, kb or load_kb(), known, exclude_cases)


def explain_failed_entries(report: CacheReport) -> None:
    """Explain each failed compile-cache entry's model.log, as `nforensics explain` would (`cache --failed`)."""
    for entry in report.entries:
        if entry.state == "failed" and entry.log:
            entry.diagnosis = analyze_path(entry.log)
