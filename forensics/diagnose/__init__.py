"""Records + artifact facts -> findings: signature, fields, fingerprint, ranked hypotheses, workarounds.

`analyze_path` / `analyze_text` are the whole pipeline (ingest -> parse -> match -> reason) and what the
CLI, the CI wrapper, the experiment oracle and the report writer all call.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from forensics.diagnose.evidence import Facts, lines_between, rank_hypotheses
from forensics.diagnose.fingerprint import FINGERPRINT_VERSION, compiler_pass, fingerprint
from forensics.diagnose.generic import generic_findings
from forensics.diagnose.versions import resolve_fixed_in
from forensics.ingest import read_lines, text_lines
from forensics.knowledge import KnowledgeBase, compiled, load_kb
from forensics.knowledge.matcher import Claim, match
from forensics.knowledge.schema import Signature
from forensics.parse import assemble
from forensics.records import (
    SEVERITY_RANK,
    Analysis,
    Evidence,
    Finding,
    ParsedLog,
    Reference,
    SourceLine,
    Workaround,
)

_CASTS = {"str": str, "int": int, "float": float}
_LINE_BREAK = re.compile(r"(?<!\n)\n(?!\n)")


def _prose(text: str) -> str:
    """TOML multi-line strings wrap at ~110 columns: join wrapped lines, keep paragraph breaks."""
    return _LINE_BREAK.sub(" ", text.strip())


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
                 kb_dirs: Sequence[Path | str] = ()) -> Analysis:
    return analyze_lines(source, text_lines(text), facts=facts, kb=load_kb(kb_dirs))


def analyze_lines(source: str, lines: Iterable[tuple[int, str]], *, facts: Facts | None = None,
                  kb: KnowledgeBase | None = None, artifacts: Artifacts | None = None) -> Analysis:
    log, retained = assemble(source, lines)
    known = dict(facts or {})
    if artifacts is not None:
        from forensics.artifacts import facts_for

        device = artifacts.device or log.environment.instance_type or log.environment.target
        known = facts_for(artifacts.neff, artifacts.source, device) | known
    return diagnose(log, retained, kb or load_kb(), known)


def diagnose(log: ParsedLog, retained: list[SourceLine], kb: KnowledgeBase, facts: Facts) -> Analysis:
    claims = match(kb, log, retained)
    findings = [_finding(group, log, retained, facts) for group in _by_signature(claims)]
    findings += generic_findings(log, retained, claims, has_specific=bool(findings))
    findings.sort(key=_rank)
    return Analysis.model_construct(source=log.source, findings=findings, environment=log.environment,
                    total_lines=log.total_lines, truncated=log.truncated)


def _rank(finding: Finding) -> tuple:
    first_line = finding.evidence[0].line if finding.evidence else 0
    return (finding.generic, finding.envelope, SEVERITY_RANK[finding.severity], first_line)


def _fields(signature: Signature, claim: Claim, input_matches: list[dict[str, str | None] | None]) -> dict[str, object]:
    """The claim's fields: each extract rule in order, its first match in the claim's message (scope
    "message") or the one `input_matches` holds for it (scope "input"); an earlier rule's value stands."""
    values: dict[str, object] = {}
    for rule, input_match in zip(signature.extract, input_matches):
        if rule.scope == "message":
            found = compiled(rule.pattern).search(claim.message)
            groups = found.groupdict() if found else None
        else:
            groups = input_match
        for name, value in (groups or {}).items():
            if value is not None and name not in values:
                kind = signature.fields[name]
                try:  # counts print with thousands separators: 6,101,424
                    values[name] = _CASTS[kind](value.replace(",", "") if kind != "str" else value)
                except ValueError:
                    values[name] = value
    return values


def _input_matches(signature: Signature, retained: list[SourceLine]) -> list[dict[str, str | None] | None]:
    """Per extract rule, the groups of its first match in any retained line (scope "input"; None for
    scope "message" or no match): the same for every claim of a finding, so searched once."""
    matches: list[dict[str, str | None] | None] = []
    for rule in signature.extract:
        found = None
        if rule.scope == "input":
            search = compiled(rule.pattern).search
            found = next((hit for line in retained if (hit := search(line.text))), None)
        matches.append(found.groupdict() if found else None)
    return matches


def _by_signature(claims: list[Claim]) -> list[list[Claim]]:
    """One finding per signature and input: its claims in order, the primary one first (the coded
    diagnostic if there is one, else the earliest line), the rest adding evidence and missing fields."""
    groups: dict[str, list[Claim]] = {}
    for claim in claims:
        groups.setdefault(claim.signature.id, []).append(claim)
    return [sorted(group, key=lambda c: (c.diagnostic is None, c.line)) for group in groups.values()]


def _finding(claims: list[Claim], log: ParsedLog, retained: list[SourceLine], facts: Facts) -> Finding:
    claim, signature = claims[0], claims[0].signature
    input_matches = _input_matches(signature, retained)
    fields: dict[str, object] = {}
    evidence: list[Evidence] = []
    seen: set[int | None] = set()
    for each in claims:
        fields = _fields(signature, each, input_matches) | fields  # the primary claim's values win
        cited = lines_between(retained, each.line, each.end_line) or [Evidence.model_construct(line=each.line, text=each.message)]
        evidence += [e for e in cited if e.line not in seen]
        seen.update(e.line for e in cited)
    evidence.sort(key=lambda e: e.line or 0)
    summary = claim.message.strip() or signature.summary
    finding = Finding.model_construct(
        code=claim.printed_code or signature.code,
        signature=signature.id,
        title=signature.title,
        component=signature.component,
        severity=signature.severity,
        summary=summary,
        meaning=_prose(signature.meaning),
        fields=fields,
        fingerprint=fingerprint(signature.id, claim.message, compiler_pass(claim.message, fields)),
        fingerprint_version=FINGERPRINT_VERSION,
        workarounds=[Workaround.model_construct(**dict(w)) for w in signature.workarounds],
        references=[Reference.model_construct(**dict(r)) for r in signature.references],
        evidence=evidence,
        fixed_in=resolve_fixed_in(signature.fixed_in, log.environment) if signature.fixed_in else None,
        envelope=signature.match.envelope,
    )
    finding.hypotheses = rank_hypotheses(signature.hypotheses, finding, log.environment, retained, facts)
    return finding


__all__ = ["Artifacts", "analyze_path", "analyze_text", "analyze_lines", "diagnose"]
