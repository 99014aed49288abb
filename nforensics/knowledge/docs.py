"""What every catalogue signature must document, so its `nforensics codes` entry and docs page are complete.

Checked by tests/test_kb_docs.py and by `python tools/gen_signature_docs.py --check`. The schema makes
these sections optional so that teams' own packs (--kb) can start small; the built-in catalogue may not.
"""

from __future__ import annotations

from pathlib import Path

from nforensics.knowledge.schema import Signature

SAMPLE_LOGS_DIR = Path(__file__).resolve().parents[2] / "sample_logs"


def missing_sections(signature: Signature, sample_logs: Path = SAMPLE_LOGS_DIR) -> list[str]:
    """What the signature lacks, one phrase each; empty when it is complete."""
    problems = []
    if not signature.summary.strip():
        problems.append("summary (what it is) is empty")
    if not signature.meaning.strip():
        problems.append("meaning (why it happens) is empty")
    if not signature.hypotheses:
        problems.append("no [[hypotheses]]")
    if not signature.workarounds and signature.status != "environment":
        problems.append("no [[workarounds]]")
    if not signature.references:
        problems.append("no [[references]] (link the public source)")
    if not (sample_logs / signature.sample_log).is_file():
        problems.append(f"sample log sample_logs/{signature.sample_log} is missing")
    if signature.hypotheses and not signature.test.top_hypothesis:
        problems.append("[test] top_hypothesis is not set")
    if signature.fields and not signature.test.fields:
        problems.append("[test.fields] gives none of the extracted [fields]")
    return problems
