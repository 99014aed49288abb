"""Recognition without the unseen set: per corpus, top-finding tier shares; perturbation stability (tests/perturb.py)
over the non-negative corpora; false positives on tests/negative/. Labelled corpora (labels.csv) list their misses.
Run: .venv/bin/python bench/recognition.py [--corpus DIR]... [--no-stability] (default: dev, dev2, samples, negative)"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
NEGATIVE = REPO / "tests" / "negative"
TIERS = ("exact", "family", "similar", "generic", "nothing")
SPECIFIC = ("exact", "family", "similar")

sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from nforensics.pipeline import analyze_text  # noqa: E402
from perturb import measure_stability, top_tier  # noqa: E402


def default_corpora() -> list[Path]:
    shared = [SHARED / "corpus" / name for name in ("dev", "dev2")]
    return [p for p in shared if p.is_dir()] + [REPO / "sample_logs", NEGATIVE]


def logs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in (".log", ".txt"))


def analyse(path: Path, own_thread: str = ""):
    """A log taken from a public thread is analysed with that thread left out of the case base: it must not
    find itself among the similar reports."""
    return analyze_text(path.read_text(encoding="utf-8", errors="replace"), path.name,
                        exclude_cases=frozenset({own_thread}) if own_thread else frozenset())


def _sources(folder: Path) -> dict[str, str]:
    if not (folder / "labels.csv").is_file():
        return {}
    with open(folder / "labels.csv", newline="", encoding="utf-8") as fh:
        return {row["file"]: row.get("source", "").split("#")[0].rstrip("/") for row in csv.DictReader(fh)}


def tier_report(folder: Path) -> None:
    files = logs(folder)
    sources = _sources(folder)
    tiers = {p: top_tier(analyse(p, sources.get(p.name, ""))) for p in files}
    counts = Counter(tiers.values())
    shares = "  ".join(f"{t} {counts[t]:3d} ({counts[t] / len(files):5.1%})" for t in TIERS) if files else "no logs"
    print(f"{folder}  [{len(files)} logs]\n  {shares}")
    if (folder / "labels.csv").is_file():
        with open(folder / "labels.csv", newline="", encoding="utf-8") as fh:
            labels = {row["file"]: row for row in csv.DictReader(fh)}
        weak = [p for p in files if tiers[p] in ("generic", "nothing")]
        print(f"  top tier generic or nothing ({len(weak)}):")
        for p in weak:
            label = labels.get(p.name, {})
            print(f"    {tiers[p]:8} {p.name}  [{label.get('family', '?')}]")


def negative_report(folder: Path) -> int:
    """Benign logs with any finding, and unrelated-error logs with an exact/family/similar one."""
    false = []
    for p in logs(folder):
        findings = analyse(p).findings
        unrelated = p.name.startswith("unrelated_")
        bad = [f for f in findings if f.tier in SPECIFIC] if unrelated else findings
        false += [(p.name, f) for f in bad]
    print(f"negative corpus {folder}: {len(false)} false positive finding(s)")
    for name, f in false:
        where = f"line {f.evidence[0].line}: {f.evidence[0].text[:100]!r}" if f.evidence else ""
        print(f"    {name}  {f.tier} {f.family or '-'}/{f.signature} ({f.confidence:.2f}) {where}")
    return len(false)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="append", type=Path, help="a folder of logs (repeatable)")
    parser.add_argument("--no-stability", action="store_true", help="skip the perturbation suite")
    parser.add_argument("--examples", type=int, default=20, help="perturbation misses to show")
    args = parser.parse_args()
    corpora = [c.resolve() for c in args.corpus] if args.corpus else default_corpora()
    start = time.perf_counter()
    for folder in corpora:
        if not folder.is_dir():
            parser.error(f"not a folder: {folder}")
    print("== top-finding tier per corpus")
    for folder in corpora:
        tier_report(folder)
    if not args.no_stability:
        positive = [c for c in corpora if c != NEGATIVE.resolve()]
        paths = [p for c in positive for p in logs(c)]
        print(f"\n== perturbation stability over {', '.join(c.name for c in positive)}")
        result = measure_stability(paths, label=lambda p: f"{p.parent.name}/{p.name}")
        print(result.table(args.examples))
    print("\n== negative corpus")
    negatives = [c for c in corpora if c == NEGATIVE.resolve()] or [NEGATIVE]
    total = sum(negative_report(c) for c in negatives)
    print(f"\nfalse positives: {total}; done in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
