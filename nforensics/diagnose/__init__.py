"""Records + artifact facts -> findings: signature, fields, fingerprint, ranked hypotheses, workarounds.

Only reasoning: reading inputs and artifacts is nforensics/pipeline.py's, the one front door that the CLI,
the CI formats, the experiment oracle and the report writer call.
"""

from __future__ import annotations

import math
import re

from nforensics.diagnose.evidence import Facts, lines_between, rank_hypotheses
from nforensics.diagnose.families import FamilyFacts
from nforensics.diagnose.family_rules import FamilyHit, detect_families
from nforensics.diagnose.fingerprint import FINGERPRINT_VERSION, compiler_pass, fingerprint
from nforensics.diagnose.generic import generic_findings
from nforensics.diagnose.order import fold_general_meanings, follow_calling_api, in_order, narrows
from nforensics.diagnose.similar import Match as SimilarMatch
from nforensics.diagnose.similar import CaseIndex, case_index, failure_site, similar_reports, site_text
from nforensics.diagnose.versions import resolve_fixed_in
from nforensics.fact_records import build_record
from nforensics.knowledge import KnowledgeBase, compiled
from nforensics.knowledge.matcher import Claim, match
from nforensics.knowledge.order import tier_of
from nforensics.knowledge.family_schema import Family
from nforensics.knowledge.schema import Signature
from nforensics.vocabulary import reads_as_failure
from nforensics.records import (
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
    lines_of: dict[str, set[int]] = {}  # signature -> the lines its claims hold
    for c in claims:
        lines_of.setdefault(c.signature.id, set()).update(range(c.line, c.end_line + 1))
    claimed = set().union(*lines_of.values())
    # An envelope's lines ([NCC_INLA001] Unhandled exception with message: === BIR verification failed ===) hold
    # the failure it wraps: a family may still name that failure there, and the envelope folds into it. So may a
    # family that narrows what a bare status means there (`nrt_load_collectives status=1`: the collectives).
    general = frozenset(c.signature.id for c in claims if tier_of(c.signature.match) == "fallback")
    follow_calling_api(findings, frozenset(c.signature.id for c in claims if c.signature.match.follows_api), log, kb)
    explained = {n for c in claims if not c.signature.match.envelope and c.signature.id not in general
                 for n in range(c.line, c.end_line + 1)}
    meanings: dict[int, set[str]] = {}  # a line only a status's general meaning holds -> the families it means
    for finding in findings:
        if finding.signature in general and finding.family:
            for n in lines_of[finding.signature] - explained:
                meanings.setdefault(n, set()).add(finding.family)
    read = FamilyFacts(log, retained)
    elsewhere = read.ran_elsewhere
    families = [] if elsewhere else _family_findings(
        _unexplained(detect_families(kb, read), findings, claimed, explained, general, meanings, kb), log, retained, facts)
    covered = claimed | {e.line for f in families for e in f.evidence if e.line}
    findings = fold_general_meanings(findings + families, general, log, kb)
    findings += generic_findings(log, retained, covered, has_specific=bool(findings))
    findings = in_order(findings, log, kb)
    if not elsewhere:  # public Neuron reports say nothing of a run on another accelerator
        findings = _with_similar_reports(findings, log, retained, kb, facts, exclude_cases, read.below_error)
    return Analysis.model_construct(source=log.source, findings=findings, environment=log.environment,
                    total_lines=log.total_lines, truncated=log.truncated)


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


def _unexplained(hits: list[FamilyHit], findings: list[Finding], claimed: set[int], explained: set[int],
                 general: frozenset[str], meanings: dict[int, set[str]], kb: KnowledgeBase) -> list[FamilyHit]:
    """Family hits that say something the exact findings do not: not a family an exact finding's family is
    or narrows, not lines exact findings already hold (a root cause may still sit on an envelope's line), not
    a fallback family when anything else holds. Of the rest, one per component (one failure, one finding): a
    family another hit narrows or causes comes last, then the most confident, then the one whose rule met more
    conditions, the earliest on a tie; the first is kept with the others' lines and fields added.
    A hit whose lines a narrower family's hit holds too is that one's to explain."""
    # An exact finding's family, and the broader families it refines, are said already (an exact runtime
    # init failure explains the framework plugin that could not come up); envelopes still fold in. Not by a
    # status's general meaning (`general`): the family says why, and the status folds into it.
    found = {f.family for f in findings}
    refined = {f.family for f in findings if f.signature not in general}
    refined |= {broader for family in found if family in kb.families for broader in kb.families[family].refines
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

    def said(hit: FamilyHit) -> set[int]:
        """`claimed`: the lines any signature holds; `explained`: those a root cause's signature holds, and
        those a status's general meaning holds unless this family narrows that meaning. Another envelope on
        an envelope's line says nothing more, a root cause there does."""
        if hit.family.envelope:
            return claimed
        return explained | {n for n, means in meanings.items() if not any(narrows(kb, hit.family.id, m) for m in means)}

    for hit in sorted(hits, key=order):
        if hit.family.id in refined or (hit.lines and set(hit.lines) <= said(hit)):
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
        finding.envelope = hit.envelope  # (a rule may read the failure itself in a family of wrappers)
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

