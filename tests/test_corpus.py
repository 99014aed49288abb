"""The real development corpus (../shared/corpus/dev): every file yields a finding, every labelled code is
found, and at least 95% of the files get a specific (non-generic) finding. Skips where ../shared is absent."""

from __future__ import annotations

import csv

from forensics.diagnose import analyze_path


def _rows(shared):
    with open(shared / "corpus" / "dev" / "labels.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def test_every_corpus_file_is_recognised(shared):
    misses, generic_only = [], []
    rows = _rows(shared)
    for row in rows:
        findings = analyze_path(str(shared / "corpus" / "dev" / row["file"])).findings
        wanted = [c for c in row["codes"].split("|") if c]
        codes = {f.code for f in findings} | {e.text[1:].split("]")[0] for f in findings for e in f.wrapped_by
                                              if e.text.startswith("[")}
        if not findings or (wanted and not any(w in codes or f"NCC_I{w}" in codes for w in wanted)):
            misses.append(f"{row['file']}: want {wanted or 'a finding'}, got {sorted(filter(None, codes))}")
        if not any(not f.generic for f in findings):
            generic_only.append(row["file"])
    assert not misses, "\n".join(misses)
    specific = 1 - len(generic_only) / len(rows)
    assert specific >= 0.95, f"specific findings for {specific:.0%} of the corpus; generic only: {generic_only}"
