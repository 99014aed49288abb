"""Records + artifact facts -> findings: signature, fields, fingerprint, ranked hypotheses, workarounds.

Only reasoning: reading inputs and artifacts is nforensics/pipeline.py's, the one front door that the CLI,
the CI formats, the experiment oracle and the report writer call.
"""

from __future__ import annotations

import math
import re

from nforensics.diagnose.evidence import Facts, lines_between, rank_hypotheses
from nforensics.diagnose.families import FamilyFacts
from nforensics.diagnose.family_rules import UNFINISHED, FamilyHit, detect_families
from nforensics.diagnose.fingerprint import FINGERPRINT_VERSION, compiler_pass, fingerprint
from nforensics.diagnose.generic import generic_findings
from nforensics.diagnose.similar import Match as SimilarMatch
from nforensics.diagnose.similar import CaseIndex, case_index, failure_site, similar_reports, site_text
from nforensics.diagnose.versions import resolve_fixed_in
from nforensics.fact_records import build_record
from nforensics.knowledge import KnowledgeBase, compiled
from nforensics.knowledge.matcher import Claim, match
from nforensics.knowledge.family_schema import Family
from nforensics.knowledge.schema import Signature
from nforensics.vocabulary import reads_as_failure
from nforensics.records import (
    ERROR_LEVELS,
    SEVERITY_RANK,
    TIER_RANK,
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


# The lowest tier: a log no signature or family explains, whose failure line is this close to a public report.
SIMILAR_TIER_CLOSENESS = 0.95  # every token of one of the report's error lines, anchors included
SIMILAR_TIER_LINES = 40  # the last failure lines searched for it
SIMILAR_TIER_BASE, SIMILAR_TIER_SPAN = 0.1, 0.3  # confidence 0.31-0.4: below every family (0.45 and up)
REPORTED_FINDINGS = 5  # findings that get their similar reports looked up

# How sure an exact recognition is, by what matched: a printed code or status, or the wording.
_CLAIM_CONFIDENCE = {"code": 0.95, "status": 0.9, "pattern": 0.85, "template": 0.7}


def diagnose(log: ParsedLog, retained: list[SourceLine], kb: KnowledgeBase, facts: Facts,
             exclude_cases: frozenset[str] = frozenset()) -> Analysis:
    claims = match(kb, log, retained)
    findings = [_finding(group, log, retained, facts) for group in _by_signature(claims)]
    claimed = {n for c in claims for n in range(c.line, c.end_line + 1)}
    # An envelope's lines ([NCC_INLA001] Unhandled exception with message: === BIR verification failed ===) hold
    # the failure it wraps: a family may still name that failure there, and the envelope folds into it.
    explained = {n for c in claims if not c.signature.match.envelope for n in range(c.line, c.end_line + 1)}
    read = FamilyFacts(log, retained)
    elsewhere = read.ran_elsewhere
    families = [] if elsewhere else _family_findings(
        _unexplained(detect_families(kb, read), findings, claimed, explained, kb), log, retained, facts)
    covered = claimed | {e.line for f in families for e in f.evidence if e.line}
    findings += families
    findings += generic_findings(log, retained, covered, has_specific=bool(findings))
    findings = _fold_envelopes(_known_cause_first(_cause_first(sorted(findings, key=_rank), log, kb), kb), kb)
    if not elsewhere:  # public Neuron reports say nothing of a run on another accelerator
        findings = _with_similar_reports(findings, log, retained, kb, facts, exclude_cases, read.below_error)
    return Analysis.model_construct(source=log.source, findings=findings, environment=log.environment,
                    total_lines=log.total_lines, truncated=log.truncated)


def _rank(finding: Finding) -> tuple:
    first_line = finding.evidence[0].line if finding.evidence else 0
    return (TIER_RANK[finding.tier], finding.envelope, SEVERITY_RANK[finding.severity], first_line)


def _with_similar_reports(findings: list[Finding], log: ParsedLog, retained: list[SourceLine], kb: KnowledgeBase,
                          facts: Facts, exclude: frozenset[str], quiet: set[int]) -> list[Finding]:
    """The closest public reports under each finding; and when neither a signature nor a family explains the
    log, the closest report's family as a finding of tier `similar` (low confidence), before generic ones."""
    index = case_index(kb)
    if not any(f.tier in ("exact", "family") for f in findings):
        # (`quiet`: lines printed below error level, no failure that a resemblance alone could name.)
        failures = [line for line in retained if line.line not in quiet and reads_as_failure(line.text)][-SIMILAR_TIER_LINES:]
        lone = _lone_resemblance(index, failures, exclude, kb)
        if lone is not None:
            findings = [_similar_finding(lone[0], lone[1], log, retained, kb, facts), *findings]
    site = site_text(*failure_site(log))
    for finding in findings[:REPORTED_FINDINGS]:
        texts = [e.text for e in finding.evidence[:4] if e.text] or [finding.summary]
        texts += [site] if site else []
        family = frozenset({finding.family}) if finding.family and finding.tier != "generic" else None
        finding.similar_reports = similar_reports(index, texts, finding.signature, family, exclude)
    return findings


def _lone_resemblance(index: CaseIndex, failures: list[SourceLine], exclude: frozenset[str],
                      kb: KnowledgeBase) -> tuple[SimilarMatch, SourceLine] | None:
    """The closest public report to a failure line that only reports of one family resemble that closely (the
    earliest line on a tie). A line reports of several families print alike ("The following operation failed
    in the TorchScript interpreter", above the message that says what) resembles them all and names none."""
    best: tuple[SimilarMatch, SourceLine] | None = None
    for line in failures:
        close = [m for m in index.search([line.text]) if m.case.url not in exclude and m.closeness >= SIMILAR_TIER_CLOSENESS]
        if (len({m.case.family for m in close}) == 1 and close[0].case.family in kb.families
                and (best is None or close[0].closeness > best[0].closeness)):
            best = (close[0], line)
    return best


def _similar_finding(match: SimilarMatch, line: SourceLine, log: ParsedLog, retained: list[SourceLine],
                     kb: KnowledgeBase, facts: Facts) -> Finding:
    case = match.case
    family = kb.families[case.family]
    evidence = lines_between(retained, line.line, line.line)
    finding = _from_knowledge(family, family.id, line.text.strip(), {}, evidence, log)
    finding.title = f"Resembles {case.repo}#{case.number}: {case.title}"
    finding.tier, finding.family = "similar", family.id
    finding.confidence = round(SIMILAR_TIER_BASE + SIMILAR_TIER_SPAN * match.closeness, 2)
    finding.fingerprint = fingerprint(family.id, line.text, f"{case.repo}#{case.number}")
    finding.hypotheses = rank_hypotheses(family.hypotheses, finding, log.environment, retained, facts)
    finding.hypotheses_undetermined = _undetermined(finding)
    _follow_hypotheses(finding)
    return finding


def _cause_first(findings: list[Finding], log: ParsedLog, kb: KnowledgeBase) -> list[Finding]:
    """A runtime failure cascades: one process prints the error that failed first (`TDRV:dma_ring_allocate`)
    and then each caller's failure up the stack (`NMGR:stage_kelf_models`, `... err: 4`). When the top
    finding sits in such a run of error lines, the finding on the run's earliest line is the cause and goes
    first, whatever its tier; unless it is only a broad family (one others refine, "a runtime execution
    error"), which says too little to be called a cause, and does not narrow the top finding's family (a
    device that could not be opened does narrow "the runtime could not initialise": it says why)."""
    top_line = findings[0].evidence[0].line if len(findings) > 1 and findings[0].evidence else None
    if top_line is None:
        return findings
    broad = {parent for family in kb.families.values() for parent in family.refines}
    broad -= {family.id for family in kb.families.values() if findings[0].family in family.refines}
    run = _error_run(log, top_line)

    def first_line(finding: Finding) -> int:
        return (finding.evidence[0].line or 0) if finding.evidence else 0

    earlier = [f for f in findings[1:] if f.tier != "generic" and first_line(f) in run and first_line(f) < top_line
               and not (f.tier == "family" and f.family in broad)]
    if not earlier:
        return findings
    cause = min(earlier, key=first_line)
    return [cause] + [f for f in findings if f is not cause]


def _known_cause_first(findings: list[Finding], kb: KnowledgeBase) -> list[Finding]:
    """The knowledge base says which families bring about which (`causes`): the top finding's cause, when it
    was found too, goes first."""
    top = findings[0].family if findings else None
    cause = next((f for f in findings[1:] if f.tier != "generic" and f.family in kb.families
                  and top in kb.families[f.family].causes), None)
    return findings if cause is None else [cause] + [f for f in findings if f is not cause]


def _error_run(log: ParsedLog, line: int) -> set[int]:
    """The lines of the run of runtime error records, from one process and at most one line apart, that
    holds `line` (empty when that line is not a runtime error record). The inf1 daemon printed no level: its
    record counts when its message reads as a failure."""
    errors = {e.line: e.pid for e in log.events if e.producer == "runtime" and (
        (e.level or "").upper() in ERROR_LEVELS or e.level is None and reads_as_failure(e.message))}
    if line not in errors:
        return set()
    pid, run = errors[line], {line}
    for step in (-1, 1):
        at = line
        while (nxt := next((at + d * step for d in (1, 2) if errors.get(at + d * step, -1) == pid), None)):
            run.add(nxt)
            at = nxt
    return run


def _unexplained(hits: list[FamilyHit], findings: list[Finding], claimed: set[int], explained: set[int],
                 kb: KnowledgeBase) -> list[FamilyHit]:
    """Family hits that say something the exact findings do not: not a family an exact finding's family is
    or narrows, not lines exact findings already hold (a root cause may still sit on an envelope's line), not
    a fallback family when anything else holds. Of the rest, one per component (one failure, one finding): a
    family another hit narrows or causes comes last, then the most confident, then the one whose rule met more
    conditions, the earliest on a tie; the first is kept with the others' lines and fields added.
    A hit whose lines a narrower family's hit holds too is that one's to explain."""
    # An exact finding's family, and the broader families it refines, are said already (an exact runtime
    # init failure explains the framework plugin that could not come up); envelopes still fold in.
    refined = {f.family for f in findings}
    refined |= {broader for family in list(refined) if family in kb.families for broader in kb.families[family].refines
                if not kb.families[broader].envelope}  # an envelope still folds in as one line
    narrowed: dict[str, set[int]] = {}  # a broader family -> the lines hits of families narrowing it hold
    for hit in hits:
        for broader in hit.family.refines:
            narrowed.setdefault(broader, set()).update(hit.lines)
    if findings or any(not hit.family.fallback for hit in hits):
        hits = [hit for hit in hits if not hit.family.fallback]
    kept: dict[str, FamilyHit] = {}
    caused = {effect for hit in hits for effect in hit.family.causes}  # what another hit brings about says less

    def order(h: FamilyHit) -> tuple[bool, bool, float, int, list[int]]:
        return h.family.id in narrowed, h.family.id in caused, -h.confidence, -h.specificity, h.lines[:1]

    for hit in sorted(hits, key=order):
        # (`claimed`: the lines any signature holds; `explained`: those a root cause's signature holds. Another
        # envelope on an envelope's line says nothing more, a root cause there does.)
        if hit.family.id in refined or (hit.lines and set(hit.lines) <= (claimed if hit.family.envelope else explained)):
            continue
        if not hit.family.envelope and hit.lines and set(hit.lines) <= narrowed.get(hit.family.id, set()):
            continue  # a narrower family says the same of these very lines (an envelope still folds in)
        holder = kept.get(hit.family.component)
        if holder is None:
            kept[hit.family.component] = hit
        elif not hit.family.envelope and not holder.family.envelope:
            holder.lines = sorted(set(holder.lines) | set(hit.lines))
            holder.fields = holder.fields | hit.fields
        else:
            kept[f"{hit.family.component}:{hit.family.id}"] = hit
    return list(kept.values())


def _family_findings(hits: list[FamilyHit], log: ParsedLog, retained: list[SourceLine], facts: Facts) -> list[Finding]:
    findings = []
    for hit in hits:
        family = hit.family
        evidence = [e for n in hit.lines for e in lines_between(retained, n, n)] or [
            Evidence.model_construct(line=n, text="") for n in hit.lines]
        summary = next((e.text.strip() for e in evidence if e.text.strip()), family.summary)
        finding = _from_knowledge(family, family.id, summary, hit.fields, evidence, log)
        finding.tier, finding.family, finding.confidence = "family", family.id, hit.confidence
        finding.fingerprint = fingerprint(family.id, summary, str(hit.fields.get("stage") or hit.fields.get("code") or ""))
        printed = [d.code for d in log.diagnostics if d.line in hit.lines]
        finding.code = str(hit.fields["code"]) if "code" in hit.fields else (printed[0] if printed else None)
        if family.record:
            finding.record = build_record(family.record, _record_values(hit.fields, log))
        finding.hypotheses = rank_hypotheses(family.hypotheses, finding, log.environment, retained, facts)
        finding.hypotheses_undetermined = _undetermined(finding)
        _follow_hypotheses(finding)
        findings.append(finding)
    return findings


def _record_values(fields: dict[str, object], log: ParsedLog) -> dict[str, object]:
    """A family finding's fields plus what a crash record reads from the log: the deepest frames (the last
    traceback's, else the last native stack's) and the compiler version."""
    stacks = [t.frames for t in log.tracebacks if t.frames] or [s.frames for s in log.stacks if s.frames]
    frames = [f"{f.file}:{f.function or '?'}" for f in (stacks[-1][-5:] if stacks else [])]
    version = log.environment.packages.get("neuronx-cc") or log.environment.packages.get("neuron-cc")
    return {**fields, "frames": frames, "compiler_version": version}


def _from_knowledge(entry: Signature | Family, signature_id: str, summary: str, fields: dict[str, object],
                    evidence: list[Evidence], log: ParsedLog) -> Finding:
    return Finding.model_construct(
        code=None, signature=signature_id, title=entry.title, component=entry.component, severity=entry.severity,
        summary=summary, meaning=_prose(entry.meaning), fields=fields, fingerprint="",
        fingerprint_version=FINGERPRINT_VERSION,
        workarounds=[Workaround.model_construct(**dict(w)) for w in entry.workarounds],
        references=[Reference.model_construct(**dict(r)) for r in entry.references],
        evidence=evidence, envelope=entry.envelope if isinstance(entry, Family) else entry.match.envelope,
        wrapped_by=[], hypotheses_undetermined=False, generic=False, fixed_in=None,
    )


def _follow_hypotheses(finding: Finding) -> None:
    """What to try in the order of why: a workaround that acts on a higher-ranked hypothesis comes first;
    one that names none keeps its place after those that do (a stable sort)."""
    rank = {h.id: n for n, h in enumerate(finding.hypotheses)}
    finding.workarounds.sort(key=lambda w: min((rank[h] for h in w.hypotheses if h in rank), default=len(rank)))


def _undetermined(finding: Finding) -> bool:
    """No evidence in the input lifts one hypothesis over another: the order would be the file's, not the log's."""
    ranked = finding.hypotheses
    return len(ranked) > 1 and not any(h.evidence for h in ranked) and ranked[0].score == ranked[1].score


def _fold_envelopes(findings: list[Finding], kb: KnowledgeBase) -> list[Finding]:
    """An envelope (a wrapper's exit status or "compilation failed") is one line under the failure it wraps.
    Wrappers around a cause nothing recognises fold into the first of them, the one nearest the cause
    (`[NLA001] Unhandled exception` inside neuronx-cc's exit 70 inside "compilation failed"). A run that did
    not finish (hung, stopped by hand) wraps nothing: a compile that failed before someone pressed ^C is
    the failure."""
    unfinished = _unfinished_families(kb)
    roots = [f for f in findings if not f.envelope and f.tier != "generic" and f.family not in unfinished]
    if roots or any(f.envelope for f in findings):  # a failure it printed says more than that it did not finish
        findings = sorted(findings, key=lambda f: 2 if f.tier == "generic" else f.family in unfinished)
    envelopes = [f for f in findings if f.envelope]
    if not roots and len(envelopes) < 2:
        return findings
    primary = roots[0] if roots else envelopes.pop(0)
    for envelope in envelopes:
        line = envelope.evidence[0].line if envelope.evidence else None
        code = f"[{envelope.code}] " if envelope.code else ""
        primary.wrapped_by.append(Evidence.model_construct(line=line, text=f"{code}{envelope.title}", note=envelope.signature))
    return [f for f in findings if f is primary or not f.envelope]


def _unfinished_families(kb: KnowledgeBase) -> frozenset[str]:
    """Families recognised only by a run that did not end by itself (every rule a hang or an interrupt)."""
    return frozenset(f.id for f in kb.families.values()
                     if f.detect and all(r.outcomes and set(r.outcomes) <= UNFINISHED for r in f.detect))


def _fields(signature: Signature, claim: Claim, input_matches: list[dict[str, str | None] | None]) -> dict[str, object]:
    """The claim's fields: each extract rule in order, its first match in the claim's message (scope
    "message") or the one `input_matches` holds for it (scope "input"); an earlier rule's value stands."""
    values: dict[str, object] = {}
    for rule, input_match in zip(signature.extract, input_matches, strict=True):
        if rule.scope == "message":
            found = compiled(rule.pattern).search(claim.message)
            groups = found.groupdict() if found else None
        else:
            groups = input_match
        for name, value in (groups or {}).items():
            if value is not None and name not in values:
                kind = signature.fields[name]
                try:  # counts print with thousands separators: 6,101,424
                    cast = _CASTS[kind](value.replace(",", "") if kind != "str" else value)
                except ValueError:
                    cast = value
                # A float of more digits than a float holds is kept as printed, not as infinity.
                values[name] = value if isinstance(cast, float) and not math.isfinite(cast) else cast
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


# A code or status as the toolchain prints it inside a message a pattern recognised (the compile cache quoting
# "[TEN404] ...", `Incompatible runtime state: NRT_STATE_CHILD`): bracketed or prefixed, not any word with digits.
_QUOTED_CODE = re.compile(r"\[((?:NCC_)?[A-Z]{3,4}\d{3}|F1\d\d)\]|\b(NCC_[A-Z]{3,4}\d{3}|NRT_[A-Z][A-Z_]+|NERR_[A-Z][A-Z_]+)\b")


def _code_in(message: str) -> str | None:
    found = _QUOTED_CODE.search(message)
    return (found.group(1) or found.group(2)) if found else None


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
    finding = _from_knowledge(signature, signature.id, summary, fields, evidence, log)
    finding.code = claim.printed_code or signature.code or _code_in(claim.message)
    finding.fingerprint = fingerprint(signature.id, claim.message, compiler_pass(claim.message, fields))
    finding.fixed_in = resolve_fixed_in(signature.fixed_in, log.environment) if signature.fixed_in else None
    finding.tier, finding.family = "exact", signature.family
    finding.confidence = round(max(_CLAIM_CONFIDENCE[c.how] * (c.resemblance if c.how == "template" else 1.0)
                                   for c in claims), 2)
    if signature.record:
        finding.record = build_record(signature.record, fields)
    defining = frozenset(n for c in claims if c.how != "template" for n in range(c.line, c.end_line + 1))
    finding.hypotheses = rank_hypotheses(signature.hypotheses, finding, log.environment, retained, facts, defining)
    finding.hypotheses_undetermined = _undetermined(finding)
    _follow_hypotheses(finding)
    return finding


__all__ = ["diagnose"]

