"""Which finding goes first and what folds into what: tier and severity, a cause before the failures it
brings about, and one failure as one finding (an envelope, or a status's general meaning, under the finding
that explains it)."""

from __future__ import annotations

from nforensics.diagnose.family_rules import UNFINISHED
from nforensics.knowledge import KnowledgeBase
from nforensics.parse.gates import is_below_error_head
from nforensics.records import ERROR_LEVELS, SEVERITY_RANK, TIER_RANK, Evidence, Finding, ParsedLog
from nforensics.vocabulary import reads_as_failure


def in_order(findings: list[Finding], log: ParsedLog, kb: KnowledgeBase) -> list[Finding]:
    """Best first, causes before what they bring about, envelopes folded into what they wrap."""
    ranked = narrower_cause_first(cause_first(sorted(findings, key=rank_key), log, kb), log, kb)
    return fold_envelopes(known_cause_first(ranked, kb), kb)


def rank_key(finding: Finding) -> tuple:
    """Best first: tier, a root cause before an envelope, severity, then the earliest line."""
    return (TIER_RANK[finding.tier], finding.envelope, SEVERITY_RANK[finding.severity], _first_line(finding))


def cause_first(findings: list[Finding], log: ParsedLog, kb: KnowledgeBase) -> list[Finding]:
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
    earlier = [f for f in findings[1:] if f.tier != "generic" and _first_line(f) in run and _first_line(f) < top_line
               and not (f.tier == "family" and f.family in broad)]
    if not earlier:
        return findings
    cause = min(earlier, key=_first_line)
    return [cause] + [f for f in findings if f is not cause]


def _first_line(finding: Finding) -> int:
    return (finding.evidence[0].line or 0) if finding.evidence else 0


def known_cause_first(findings: list[Finding], kb: KnowledgeBase) -> list[Finding]:
    """The knowledge base says which families bring about which (`causes`): the top finding's cause, when it
    was found too, goes first."""
    top = findings[0].family if findings else None
    cause = next((f for f in findings[1:] if f.tier != "generic" and f.family in kb.families
                  and top in kb.families[f.family].causes
                  and (not kb.families[f.family].causes_what_follows or _first_line(f) <= _first_line(findings[0]))), None)
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


def fold_envelopes(findings: list[Finding], kb: KnowledgeBase) -> list[Finding]:
    """An envelope (a wrapper's exit status or "compilation failed") is one line under the failure it wraps.
    Wrappers around a cause nothing recognises fold into the innermost of them, the one whose family narrows
    the others' (`[NLA001] Unhandled exception` inside neuronx-cc's exit 70 inside "compilation failed"; the
    first of them on a tie). A run that did not finish (hung, stopped by hand) wraps nothing: a compile that
    failed before someone pressed ^C is the failure."""
    unfinished = _unfinished_families(kb)
    roots = [f for f in findings if not f.envelope and f.tier != "generic" and f.family not in unfinished]
    if roots or any(f.envelope for f in findings):  # a failure it printed says more than that it did not finish
        findings = sorted(findings, key=lambda f: 2 if f.tier == "generic" else f.family in unfinished)
    envelopes = [f for f in findings if f.envelope]
    if not roots and len(envelopes) < 2:
        return findings
    if roots:
        primary = roots[0]
    else:  # the innermost wrapper: the one whose family narrows the others' (neuronx-cc's F139 in "compile failed")
        primary = max(envelopes, key=lambda e: sum(narrows(kb, e.family, o.family) for o in envelopes if e.family and o.family))
        envelopes.remove(primary)
    for envelope in envelopes:
        wrap(primary, envelope)
    return [f for f in findings if f is primary or not f.envelope]


def _unfinished_families(kb: KnowledgeBase) -> frozenset[str]:
    """Families recognised only by a run that did not end by itself (every rule a hang or an interrupt)."""
    return frozenset(f.id for f in kb.families.values()
                     if f.detect and all(r.outcomes and set(r.outcomes) <= UNFINISHED for r in f.detect))


def narrows(kb: KnowledgeBase, family: str, broader: str) -> bool:
    """`family` is a narrower account of `broader`: it refines it, directly or through families it refines."""
    seen: set[str] = set()
    todo = [family]
    while todo:
        current = todo.pop()
        if current in seen or current not in kb.families:
            continue
        seen.add(current)
        if broader in kb.families[current].refines:
            return True
        todo += kb.families[current].refines
    return False


def narrower_cause_first(findings: list[Finding], log: ParsedLog, kb: KnowledgeBase) -> list[Finding]:
    """A family finding printed as an error before the top finding, that narrows its family, is what the top
    reports in more words, and its cause: no device could be opened (line 4), so the runtime could not
    initialise (line 90). (Not from a warning: EFA's start-up warnings are printed by runs that work.)"""
    top = findings[0] if findings else None
    # (An envelope folds into the failure it wraps: fold_envelopes.)
    if top is None or top.tier == "family" or top.envelope or not top.family or not top.evidence:
        return findings
    start, quiet = _first_line(top), log.below_error_lines()
    held = {e.line for e in top.evidence}
    cause = next((f for f in findings[1:] if f.tier == "family" and not f.envelope and f.family and f.evidence
                  and _first_line(f) < start and _said_as_error(f, quiet)
                  and not held & {e.line for e in f.evidence}  # a reading of the top's own lines is no earlier report
                  and narrows(kb, f.family, top.family)), None)
    return findings if cause is None else [cause] + [f for f in findings if f is not cause]


def follow_calling_api(findings: list[Finding], by_call: frozenset[str], log: ParsedLog, kb: KnowledgeBase) -> None:
    """A catch-all status (`by_call`: signatures with `follows_api`, NRT_FAILURE and NRT_INVALID) reports a
    failure of the call that returned it, by the families' `runtime_apis`: NRT_INVALID in nrt_init() is a
    runtime that could not initialise, not a NEFF that failed to load. Its finding takes that family."""
    by_api = {api: family.id for family in kb.families.values() for api in family.runtime_apis}
    apis = {status.line: status.api for status in log.nrt_statuses if status.api}
    for finding in findings:
        called = next((apis[e.line] for e in finding.evidence if e.line in apis), "")
        if finding.signature in by_call and called in by_api:
            finding.family = by_api[called]


def fold_general_meanings(findings: list[Finding], general: frozenset[str], log: ParsedLog,
                          kb: KnowledgeBase) -> list[Finding]:
    """A bare status or code recognised for its general meaning (`general`: those signatures, tier fallback:
    "nrt_load_collectives status=1" is NRT_FAILURE) is the failing call's report of a failure a family found
    here, said as an error, is or narrows (the collectives could not set up): one line under that finding,
    the nearest before it of those (the same incident), which says why."""
    quiet = log.below_error_lines()
    families = [f for f in findings if f.tier == "family" and not f.envelope and f.family and f.evidence
                and _said_as_error(f, quiet)]
    kept = []
    for finding in findings:
        if finding.signature not in general or not finding.family:
            kept.append(finding)
            continue
        at = _first_line(finding)
        accounts = [f for f in families if f.family == finding.family or narrows(kb, f.family or "", finding.family)]
        # the nearest account printed before the status, else the nearest after it
        accounts.sort(key=lambda f: (_first_line(f) > at, abs(_first_line(f) - at)))
        if accounts:
            wrap(accounts[0], finding)
        else:
            kept.append(finding)
    # A status that stayed (its family said only in warnings) says that family already: one failure, one finding.
    exact = {f.family for f in kept if f.tier == "exact"}
    return [f for f in kept if not (f.tier == "family" and f.family in exact)]


def wrap(primary: Finding, folded: Finding) -> None:
    """`folded` as one line under `primary`: its line, its code and title, its signature. A code it printed is
    the primary's too when the primary has none: a printed fact of the same failure (TEN404 under the NKI
    kernel that caused it, [F134] under the crash it reports)."""
    line = folded.evidence[0].line if folded.evidence else None
    code = f"[{folded.code}] " if folded.code else ""
    primary.wrapped_by.append(Evidence.model_construct(line=line, text=f"{code}{folded.title}", note=folded.signature))
    primary.code = primary.code or folded.code


def _said_as_error(finding: Finding, quiet: set[int]) -> bool:
    """Its first line was not printed below error level (`quiet`, or a head that says WARN where no record of
    the line says its level: a warning past a big log's head that only its anchor let through)."""
    first = finding.evidence[0]
    return first.line not in quiet and not is_below_error_head(first.text)
