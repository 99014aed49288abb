"""Every signature is tested like a sqlfluff rule fixture, a pass case and a fail case: its own sample log
must be diagnosed as that signature with the exact field values and top hypothesis its TOML [test] states,
and its [test] near_miss (a neighbouring failure or a harmless line with the same words) must not be.
The whole set of findings of every sample log is pinned, like ruff's snapshot tests, in
tests/golden/sample_findings.json (regenerate with NFORENSICS_UPDATE_GOLDEN=1 after a deliberate change,
and review the diff)."""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import pytest

from conftest import SAMPLE_LOGS
from nforensics.pipeline import analyze_path, analyze_text
from nforensics.knowledge import load_kb

SIGNATURES = load_kb().signatures
GOLDEN_FINDINGS = Path(__file__).resolve().parent / "golden" / "sample_findings.json"

# Signatures that have no near miss yet, each with the reason. Keep this short: every other signature
# must carry one in its [test] table.
NO_NEAR_MISS_YET: set[str] = set()  # every signature has its fail case
# Near misses still recognised as their signature: known limitations, kept as strict xfails (they fail the
# suite the day they pass, so the entry is removed then).
NEAR_MISS_STILL_TAKEN = {
    # An embedding-table update out of bounds ends with the same status 1006 (NRT_EXEC_OOB) as a DGE
    # scatter/gather: the status line alone cannot tell them apart, and it is claimed as the DGE kind.
    "nrt-exec-oob-dge-scatter-gather",
}


@pytest.mark.parametrize("signature", SIGNATURES, ids=lambda s: s.id)
def test_sample_log_is_diagnosed_as_its_signature(signature):
    sample = SAMPLE_LOGS / signature.sample_log
    assert sample.is_file(), f"{signature.id}: sample log sample_logs/{signature.sample_log} is missing"
    analysis = analyze_path(str(sample))
    matching = [f for f in analysis.findings if f.signature == signature.id]
    if not matching and signature.match.envelope:
        # An envelope (exit 70, [F134]) whose sample also shows the failure it wraps folds into that finding
        # as one line: it must be named there, with its line.
        wrapped = [e for f in analysis.findings for e in f.wrapped_by if e.note == signature.id]
        assert wrapped and wrapped[0].line, f"{signature.id}: not folded into {[f.signature for f in analysis.findings]}"
        return
    assert matching, f"{signature.id}: sample log diagnosed as {[f.signature for f in analysis.findings]}"
    finding = matching[0]
    assert not finding.generic
    assert finding.component == signature.component
    if signature.code:
        assert finding.code in {signature.code, *signature.aliases, *signature.match.codes}
    for name, expected in signature.test.fields.items():
        assert finding.fields.get(name) == expected, f"{signature.id}: field {name}"
        assert type(finding.fields[name]).__name__ == signature.fields[name]
    if signature.test.top_hypothesis:
        assert finding.hypotheses[0].id == signature.test.top_hypothesis
    assert finding.evidence and all(e.line for e in finding.evidence)
    assert finding.workarounds or signature.status == "environment", f"{signature.id}: no workaround"


def test_signature_ids_and_sample_logs_are_unique():
    ids = [s.id for s in SIGNATURES]
    assert len(ids) == len(set(ids))
    samples = [s.sample_log for s in SIGNATURES]
    assert len(samples) == len(set(samples)), "each signature needs its own sample log"


# ------------------------------------------------------------------ the fail case: near misses

WITH_NEAR_MISS = [pytest.param(s, marks=pytest.mark.xfail(strict=True, reason="known: status 1006 is ambiguous"))
                  if s.id in NEAR_MISS_STILL_TAKEN else s for s in SIGNATURES if s.test.near_miss]


@pytest.mark.parametrize("signature", WITH_NEAR_MISS, ids=lambda s: getattr(s, "id", None))
def test_near_miss_is_not_diagnosed_as_its_signature(signature):
    findings = analyze_text(signature.test.near_miss, source=f"{signature.id} near miss").findings
    claimed = [(f.signature, f.tier) for f in findings if f.signature == signature.id]
    folded = [f.signature for f in findings if any(e.note == signature.id for e in f.wrapped_by)]
    assert not claimed and not folded, (
        f"{signature.id}: its near miss was recognised as it (findings: {[(f.signature, f.tier) for f in findings]}, "
        f"folded into: {folded}); tighten the signature's match, do not weaken the near miss")


def test_every_signature_has_a_near_miss():
    unknown = sorted(NO_NEAR_MISS_YET - {s.id for s in SIGNATURES})
    assert not unknown, f"NO_NEAR_MISS_YET names signatures that do not exist: {unknown}"
    missing = sorted(s.id for s in SIGNATURES if not s.test.near_miss and s.id not in NO_NEAR_MISS_YET)
    assert not missing, f"signatures without a [test] near_miss: {missing}"


# ------------------------------------------------------------------ the whole set of findings: a snapshot

def sample_findings() -> dict[str, list[list]]:
    """Each signature's sample log -> its findings in rank order: [signature, tier], plus, for a finding that
    folded envelopes, {"wrapped_by": the envelopes' signatures (exit 70, [F134]...)}. A family or generic
    finding's signature is its family or generic id."""
    snapshot = {}
    for name in sorted({s.sample_log for s in SIGNATURES}):
        rows = []
        for finding in analyze_path(str(SAMPLE_LOGS / name)).findings:
            row: list = [finding.signature, finding.tier]
            if finding.wrapped_by:
                row.append({"wrapped_by": [e.note for e in finding.wrapped_by]})
            rows.append(row)
        snapshot[name] = rows
    return snapshot


def _dump(snapshot: dict[str, list[list]]) -> str:
    """One sample per line, so a diff names the sample whose findings changed."""
    body = ",\n".join(f"  {json.dumps(name)}: {json.dumps(rows)}" for name, rows in snapshot.items())
    return "{\n" + body + "\n}\n"


def test_sample_findings_match_the_snapshot():
    now = _dump(sample_findings())
    if os.environ.get("NFORENSICS_UPDATE_GOLDEN"):
        GOLDEN_FINDINGS.write_text(now)
    assert GOLDEN_FINDINGS.exists(), f"no {GOLDEN_FINDINGS.name}: run with NFORENSICS_UPDATE_GOLDEN=1"
    expected = GOLDEN_FINDINGS.read_text()
    diff = "".join(difflib.unified_diff(expected.splitlines(True), now.splitlines(True),
                                        "tests/golden/sample_findings.json", "now", n=0))
    assert now == expected, (
        "the findings of some sample logs changed; if the change is deliberate, review it and accept it with\n"
        "  NFORENSICS_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_signatures.py -k snapshot\n" + diff[:6000])


def test_hypothesis_evidence_read_from_the_defining_message_says_so():
    """A finding's own message is no evidence of why it happened (every instance prints it), so a pattern
    rule does not read the lines the signature matched, unless it declares `in_message = true` (it reads a
    part that differs between instances: a barrier name, the DGE kind). This lint finds rules that would
    match their signature's defining lines in its sample without saying so: dead weight, or a tautology."""
    from nforensics.knowledge import compiled

    silent = []
    for signature in SIGNATURES:
        patterns = [compiled(p) for p in signature.match.patterns]
        codes = {c for c in [*signature.match.codes, signature.code] if c}
        lines = (SAMPLE_LOGS / signature.sample_log).read_text(encoding="utf-8").splitlines()
        defining = [line for line in lines if any(p.search(line) for p in patterns) or any(c in line for c in codes)]
        for hypothesis in signature.hypotheses:
            for rule in hypothesis.evidence:
                if rule.pattern and not rule.in_message and rule.weight > 0 and any(
                        compiled(rule.pattern).search(line) for line in defining):
                    silent.append(f"{signature.id}/{hypothesis.id}: {rule.pattern!r}")
    assert not silent, "pattern rules that read the defining message without in_message = true:\n" + "\n".join(silent)


# ------------------------------------------------------------------ what to try follows why

# Signatures and families with two or more hypotheses and two or more workarounds in which no workaround acts
# on one hypothesis more than on another (so none names any), each with the reason. Keep this short: a
# workaround that fits no hypothesis usually means a hypothesis is missing.
WORKAROUNDS_FIT_NO_SINGLE_HYPOTHESIS: dict[str, str] = {}


def test_workarounds_of_competing_hypotheses_name_the_ones_they_act_on():
    """After ranking, a finding's workarounds are ordered by the best rank among the hypotheses they name
    (nforensics/diagnose _follow_hypotheses); with no link at all that order is the file's whatever the log
    says. So an entry with two or more hypotheses and two or more workarounds links at least one of them."""
    kb = load_kb()
    entries = [*kb.signatures, *kb.families.values()]
    unknown = sorted(set(WORKAROUNDS_FIT_NO_SINGLE_HYPOTHESIS) - {e.id for e in entries})
    assert not unknown, f"WORKAROUNDS_FIT_NO_SINGLE_HYPOTHESIS names entries that do not exist: {unknown}"
    unlinked = sorted(e.id for e in entries
                      if len(e.hypotheses) >= 2 and len(e.workarounds) >= 2
                      and not any(w.hypotheses for w in e.workarounds)
                      and e.id not in WORKAROUNDS_FIT_NO_SINGLE_HYPOTHESIS)
    assert not unlinked, ("workarounds that name none of their competing hypotheses (add `hypotheses = [...]` "
                          f"after the workaround's title): {unlinked}")
