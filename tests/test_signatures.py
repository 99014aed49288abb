"""Every signature is tested through its own sample log, like a sqlfluff rule fixture: the sample must be
diagnosed as that signature with the exact field values and top hypothesis its TOML [test] states."""

from __future__ import annotations

import pytest

from conftest import SAMPLE_LOGS
from forensics.diagnose import analyze_path
from forensics.knowledge import load_kb

SIGNATURES = load_kb().signatures


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
