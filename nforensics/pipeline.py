"""The one front door for "analyse these inputs": read (ingest), parse (records), add artifact facts, reason
(diagnose). The CLI, the CI formats, `run`, the experiment oracle, the bug report and the compile-cache
scan all come through here; diagnose itself only reasons over records it is handed.

Artifact facts: a NEFF and an NKI source (explain --neff/--source) are read per input (the device the log names
matters); HLO modules given with --hlo are read once (`load_artifacts`) and their facts handed to every input;
without --hlo, the HLO modules a log names that are on this machine are read (bounded: artifacts/hlo_named.py).
Each analysis lists the files whose facts fed its hypotheses (`artifacts`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nforensics.diagnose import diagnose
from nforensics.diagnose.evidence import Facts
from nforensics.ingest import read_lines, text_lines
from nforensics.knowledge import KnowledgeBase, load_kb
from nforensics.line_numbers import physical_lines
from nforensics.parse import assemble
from nforensics.parse.gates import CatalogueAnchors
from nforensics.records import Analysis, ArtifactRead, Evidence, SourceLine

if TYPE_CHECKING:
    from nforensics.artifacts.cache import CacheReport
    from nforensics.artifacts.models import CacheEntry


@dataclass(frozen=True)
class Artifacts:
    """Files beside the log whose facts feed the hypotheses (explain --neff/--source/--device/--hlo).

    `hlo_facts` and `hlo_reads` are the --hlo modules once read (`load_artifacts`): workers get the facts, not
    the files. With any HLO given, the modules a log names are not looked for."""

    neff: Path | None = None
    source: Path | None = None
    device: str | None = None  # trn1, inf2, trn1.2xlarge...; defaults to what the log names
    hlo_facts: dict[str, list] = field(default_factory=dict)  # hlo.NAME -> [HloObservation]
    hlo_reads: tuple[ArtifactRead, ...] = ()


def load_artifacts(neff: Path | None = None, source: Path | None = None, device: str | None = None,
                   hlo: Sequence[Path] = ()) -> Artifacts | None:
    """The artifacts of explain's options, the HLO modules read now (once for every input): an InputError when
    one cannot be read. None when no option names one."""
    if not (neff or source or device or hlo):
        return None
    if not hlo:
        return Artifacts(neff, source, device)
    from nforensics.artifacts.hlo_named import read_modules

    facts, reads = read_modules(hlo)
    return Artifacts(neff, source, device, facts, tuple(reads))


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
    kb = kb or load_kb()
    log, retained = assemble(source, lines, lambda: CatalogueAnchors(*kb.anchors))
    known = dict(facts or {})
    reads: list[ArtifactRead] = []
    if artifacts is not None and (artifacts.neff or artifacts.source):
        from nforensics.artifacts import facts_for

        device = artifacts.device or log.environment.instance_type or log.environment.target
        for kind, path in (("neff", artifacts.neff), ("source", artifacts.source)):
            if path:  # each file's own facts, shown with it whether or not a hypothesis used them
                own = facts_for(path if kind == "neff" else None, path if kind == "source" else None, device)
                known = own | known
                reads.append(ArtifactRead.model_construct(kind=kind, path=str(path), line=None, read=True,
                                                          note=f"{len(own)} facts", facts=own))
    hlo_facts, hlo_reads = _hlo(artifacts, retained)
    known = hlo_facts | known
    analysis = diagnose(log, retained, kb, known, exclude_cases)
    analysis.artifacts = reads + hlo_reads
    if log.decoded_lines:
        _to_physical_lines(analysis, physical_lines(log))
    return analysis


def _to_physical_lines(analysis: Analysis, physical: Callable[[int], int]) -> None:
    """Every input line the analysis names, as the physical line of the input (a notebook stream's lines are
    numbered apart while they are read: nforensics/line_numbers.py). Each record once: one
    evidence may be cited by several findings."""
    cited: dict[int, Evidence | ArtifactRead] = {}
    for finding in analysis.findings:
        for evidence in (*finding.evidence, *finding.wrapped_by, *(e for h in finding.hypotheses for e in h.evidence)):
            cited[id(evidence)] = evidence
    cited.update((id(read), read) for read in analysis.artifacts)
    for record in cited.values():
        if record.line:
            record.line = physical(record.line)
    lines = analysis.environment.lines
    lines.update((key, physical(line)) for key, line in lines.items())


def _hlo(artifacts: Artifacts | None, retained: list[SourceLine]) -> tuple[dict[str, object], list[ArtifactRead]]:
    """The HLO facts of --hlo, else of the modules the log names that are on this machine."""
    if artifacts is not None and artifacts.hlo_reads:
        return dict(artifacts.hlo_facts), list(artifacts.hlo_reads)
    from nforensics.artifacts.hlo_named import auto_modules

    facts, reads = auto_modules(retained)
    return dict(facts), reads


def explain_failed_entries(report: CacheReport) -> None:
    """Explain each failed compile-cache entry's model.log, as `nforensics explain` would (`cache --failed`),
    with the facts of the entry's HLO module (bounded, as for a module a log names) beside it."""
    for entry in report.entries:
        if entry.state != "failed":
            continue
        artifacts = _entry_hlo(entry)
        if entry.log:
            entry.diagnosis = analyze_path(entry.log, artifacts=artifacts)


def _entry_hlo(entry: CacheEntry) -> Artifacts | None:
    if not entry.hlo:
        return None
    from nforensics.artifacts.hlo_evidence import digest
    from nforensics.artifacts.hlo_named import read_bounded

    facts, read = read_bounded(Path(entry.hlo))
    if facts is None:
        entry.hlo_note = read.note
        return None
    entry.hlo_facts = digest(facts)
    return Artifacts(hlo_facts=dict(facts), hlo_reads=(read,))
