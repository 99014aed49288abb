"""The real development corpora (../shared/corpus/dev and dev2, labelled by hand from public reports): every
labelled code is found, at least 95% of the files get an exact or family finding, and no top finding names a
family the log's label does not allow (tests/corpus_families.toml). Skips where ../shared is absent."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from nforensics.pipeline import analyze_path
from nforensics.knowledge import load_kb, tomllib
from nforensics.vocabulary import PRINTED_CODE

CORPORA = ("dev", "dev2")
ALLOWED = tomllib.loads((Path(__file__).parent / "corpus_families.toml").read_text(encoding="utf-8"))


def _rows(shared: Path, corpus: str) -> list[dict[str, str]]:
    with open(shared / "corpus" / corpus / "labels.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def _codes(findings) -> set[str]:
    """Every code and status the findings show: their own, envelopes folded into them (`[F134] ...`), field
    values, and the codes on their evidence lines (a cached failure quoting the original TEN404)."""
    codes = {f.code for f in findings if f.code}
    codes |= {e.text[1:].split("]")[0] for f in findings for e in f.wrapped_by if e.text.startswith("[")}
    codes |= {str(v) for f in findings for v in f.fields.values()}
    codes |= {t for f in findings for e in f.evidence for t in PRINTED_CODE.findall(e.text)}
    return codes | {c.replace("NRT_", "NERR_") for c in codes}  # the pre-2.x daemon spelled statuses NERR_


@pytest.mark.parametrize("corpus", CORPORA)
def test_every_corpus_file_is_recognised_as_its_family(shared, corpus):
    rows = _rows(shared, corpus)
    missing_codes, weak, wrong = [], [], []
    for row in rows:
        findings = analyze_path(str(shared / "corpus" / corpus / row["file"])).findings
        wanted = [c for c in row["codes"].split("|") if c]
        codes = _codes(findings)
        if wanted and not any(w in codes or f"NCC_I{w}" in codes or f"NCC_E{w}" in codes for w in wanted):
            missing_codes.append(f"{row['file']}: want {wanted}, got {sorted(codes)}")
        top = findings[0] if findings else None
        if top is None or top.tier not in ("exact", "family"):
            weak.append(f"{row['file']} ({top.tier if top else 'nothing'})")
        elif top.family not in ALLOWED[row["family"]]:
            wrong.append(f"{row['file']}: label {row['family']!r} allows {ALLOWED[row['family']]}, "
                         f"top finding is {top.family}/{top.signature}")
    assert not missing_codes, "\n".join(missing_codes)
    assert not wrong, "a top finding names a failure the log does not show:\n" + "\n".join(wrong)
    recognised = 1 - len(weak) / len(rows)
    assert recognised >= 0.95, f"exact or family for {recognised:.0%} of {corpus}; not: {weak}"


def test_the_label_map_covers_every_label_and_names_real_families(shared):
    labels = {row["family"] for corpus in CORPORA for row in _rows(shared, corpus)}
    assert labels == set(ALLOWED), f"unmapped: {labels - set(ALLOWED)}; stale: {set(ALLOWED) - labels}"
    families = set(load_kb().families)
    assert {f for allowed in ALLOWED.values() for f in allowed} <= families
