"""The case base measured: leave-one-out (each case's own error lines, with that case left out of the index,
find a case of the same family first), per family; and precision of what `explain` would show on the corpora
(a shown report of the log's family) and on the negative corpus (nothing shown).

Run: .venv/bin/python bench/cases.py [--corpus DIR]...   (default: ../shared dev and dev2, tests/negative)
A corpus log whose own thread is in the case base is queried with that thread left out, so a log never
finds itself."""

from __future__ import annotations

import argparse
import csv
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(REPO))

from nforensics.pipeline import analyze_text  # noqa: E402
from nforensics.diagnose.similar import MIN_LINE_TOKENS, CaseIndex, case_index, failure_site, site_text  # noqa: E402
from nforensics.ingest import text_lines  # noqa: E402
from nforensics.knowledge.cases import Case  # noqa: E402
from nforensics.parse import assemble  # noqa: E402
from nforensics.knowledge import load_kb, tomllib  # noqa: E402
from nforensics.knowledge.wording import tokens  # noqa: E402

ALLOWED = tomllib.loads((REPO / "tests" / "corpus_families.toml").read_text(encoding="utf-8"))


# A case keeps its error masked (numbers, paths, times and ids as placeholders): nobody pastes `<n>`, so the
# query puts back a value of the masked kind, in the shape the tools print it (an NRT line's clock and
# pid:tid, a compiler's ISO time), and the lines are read as a pasted log is.
_PLACEHOLDERS = [
    (re.compile(r"<ts>(?= <n>:<n> )"), "2024-Jan-01 00:00:00.000000"),
    (re.compile(r"<ts>(?=:)"), "2024-01-01 00:00:00.000000"),
    (re.compile(r"<ts>"), "2024-01-01T00:00:00Z"),
    (re.compile(r"<path>/"), "/home/user/work/"),
    (re.compile(r"MODULE_<id>"), "MODULE_1a2b3c4d5e6f"),
    (re.compile(r"neuronxcc-<id>"), "neuronxcc-2.14.227.0+2d4f85be"),
    (re.compile(r"<hex>"), "0x7f3a"),
    (re.compile(r"<uuid>"), "123e4567-e89b-12d3-a456-426614174000"),
    (re.compile(r"<ip>"), "10.0.0.1"),
    (re.compile(r"<n>"), "7"),
]


def as_pasted(template: str) -> str:
    for pattern, value in _PLACEHOLDERS:
        template = pattern.sub(value, template)
    return template


def own_error(case: Case) -> str:
    """The case's own error as a log again, from what the case keeps: its failure site as a traceback,
    then its error lines (kept last-first) in the order they were printed, placeholders filled in."""
    frames = [f'  File "{frame.split(":")[0]}", line 1, in {frame.partition(":")[2] or "<module>"}' for frame in case.frames]
    head = ["Traceback (most recent call last):", *frames] if frames else []
    messages = [as_pasted(line) for line in reversed(case.templates)]
    if case.exception and not any(line.startswith(case.exception) for line in messages):
        messages.append(f"{case.exception}: (message not kept)")
    return "\n".join([*head, *messages]) + "\n"


def leave_one_out(index: CaseIndex) -> tuple[Counter[str], int, dict[str, list[int]]]:
    """Each case's own error explained as a log with that case left out. `first`: the first report of the
    ranking explain searches (among the top finding's family when it has one) is of the case's family;
    `shown`: the first report explain shows under the top finding is. (counts, queries, family -> [first, queries])"""
    per_family: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    counts: Counter[str] = Counter()
    queries = 0
    for row_id in range(index.size):
        case, _ = index.report(row_id)
        if not any(len(tokens(t)) >= MIN_LINE_TOKENS for t in (*case.templates, site_text(case.frames, case.exception))):
            continue
        text = own_error(case)
        analysis = analyze_text(text, exclude_cases=frozenset({case.url}))
        top = analysis.findings[0] if analysis.findings else None
        family = frozenset({top.family}) if top and top.family and top.tier != "generic" else None
        log = assemble("case", text_lines(text))[0]
        texts = [e.text for e in top.evidence[:4] if e.text] if top else []
        ranked = [m for m in index.search([*texts, site_text(*failure_site(log))], family) if m.case.url != case.url]
        shown = [r for f in analysis.findings[:1] for r in f.similar_reports]
        queries += 1
        per_family[case.family][1] += 1
        counts["family"] += bool(top and top.family == case.family)
        if ranked and ranked[0].case.family == case.family:
            counts["first"] += 1
            per_family[case.family][0] += 1
        counts["shown"] += bool(shown and shown[0].family == case.family)
    return counts, queries, per_family


def corpus_precision(folder: Path) -> None:
    labels = {}
    if (folder / "labels.csv").is_file():
        with open(folder / "labels.csv", newline="", encoding="utf-8") as fh:
            labels = {row["file"]: row for row in csv.DictReader(fh)}
    shows = right = logs = tiers = 0
    wrong = []
    for path in sorted(p for p in folder.iterdir() if p.suffix in (".log", ".txt")):
        label = labels.get(path.name, {})
        own = label.get("source", "").split("#")[0].rstrip("/")
        analysis = analyze_text(path.read_text(encoding="utf-8", errors="replace"), path.name,
                                exclude_cases=frozenset({own}) if own else frozenset())
        logs += 1
        tiers += bool(analysis.findings and analysis.findings[0].tier == "similar")
        reports = [r for f in analysis.findings[:1] for r in f.similar_reports]
        if not reports:
            continue
        shows += 1
        allowed = ALLOWED.get(label.get("family", ""), [])
        if reports[0].family in allowed:
            right += 1
        elif labels:
            wrong.append(f"{path.name}: {reports[0].repo}#{reports[0].number} ({reports[0].family}) for {allowed}")
    share = f"{right}/{shows} of the family" if labels else "(no labels)"
    print(f"{folder}: {logs} logs, a report shown under the top finding for {shows} ({share}); "
          f"top finding of tier similar for {tiers}")
    for line in wrong:
        print(f"    {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="append", type=Path)
    args = parser.parse_args()
    start = time.perf_counter()
    index = case_index(load_kb())
    built = time.perf_counter() - start
    counts, queries, per_family = leave_one_out(index)
    print(f"case base: {index.size} cases, index opened (or built) in {built * 1000:.0f} ms")
    print(f"leave-one-out over {queries} cases: a report of the case's family ranked first for "
          f"{counts['first']} = {counts['first'] / queries:.1%}; shown first for {counts['shown']} = "
          f"{counts['shown'] / queries:.1%}; the top finding names the case's family for {counts['family']}")
    for family, (ok, n) in sorted(per_family.items(), key=lambda item: -item[1][1]):
        print(f"    {family:32} {ok:3d}/{n:3d}")
    corpora = args.corpus or [p for p in (SHARED / "corpus" / "dev", SHARED / "corpus" / "dev2") if p.is_dir()]
    for folder in [*corpora, *([] if args.corpus else [REPO / "tests" / "negative"])]:
        corpus_precision(folder)
    counts = Counter(index.report(row_id)[0].family for row_id in range(index.size))
    print(f"families without cases: {sorted(set(load_kb().families) - set(counts))}")


if __name__ == "__main__":
    main()
