"""Similar public reports: the case base searched with the error lines of a finding (or of a log no signature
or family explains), so `explain` shows the threads a user would otherwise look for by hand.

Candidates come from SQLite's FTS5 full-text index ranked by its built-in BM25 (`bm25()`), with the anchor
tokens of a message (codes, statuses, API and pass names, env vars, flags) in a column of their own that
weighs more than prose: sqlite3 is in the standard library, FTS5 is a maintained BM25 implementation made for
the job, and its index is an SQLite file: built at first use into the cache folder, opened by later runs. The score
shown is not BM25's (which has no scale) but `closeness`: the share of a report's error line that the input
shows, its tokens weighted by anchor-ness and by rarity among the reports (IDF).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from nforensics import __version__
from nforensics.diagnose.families import DEEPEST_FRAMES
from nforensics.knowledge import KnowledgeBase
from nforensics.knowledge.cases import CASES_DIR, Case, case_files, cases_for
from nforensics.knowledge.disk_cache import is_private_file, private_dir, prune, stamp
from nforensics.knowledge.wording import ANCHOR_WEIGHT, tokens
from nforensics.records import ParsedLog, SimilarReport

SHOW_CLOSENESS = 0.95  # a report is shown under a finding of unknown family from this closeness on: all of a line
SHOW_CLOSENESS_IN_FAMILY = 0.55  # ... under a finding of the report's family from this one
SAME_SIGNATURE_CLOSENESS = 0.35  # ... or from this one when the report is of the finding's own signature
MIN_LINE_TOKENS = 3  # a report line or an input line with fewer content tokens says too little to compare
MAX_SHOWN = 3
CANDIDATES = 12  # BM25's best for one input line, re-ranked by closeness


@dataclass(frozen=True)
class Match:
    case: Case
    closeness: float
    text: int  # which of the searched texts matched it best


class CaseIndex:
    """An FTS5 index over the cases' masked error lines, with each case and the weighted tokens of its lines.

    Built from the case files at first use and kept as an SQLite file in the cache folder (keyed by the
    files' stamp), so later runs open it instead of re-tokenising every report; with no usable cache folder
    it lives in memory for the process."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.size = db.execute("SELECT count(*) FROM reports").fetchone()[0]
        self.rare = {token for (token,) in db.execute("SELECT token FROM rare")}
        self._reports: dict[int, tuple[Case, tuple[dict[str, float], ...]]] = {}

    @classmethod
    def build(cls, cases: tuple[Case, ...], db: sqlite3.Connection) -> CaseIndex:
        lines = [[t for t in (tokens(line) for line in (*c.templates, site_text(c.frames, c.exception)) if is_message(line))
                  if len(t) >= MIN_LINE_TOKENS] for c in cases]
        # A token most reports share ("error", "traceback", "neuron") tells them apart less than a rare one:
        # each token's weight is scaled by its inverse document frequency over the cases.
        frequency = Counter(t for case_lines in lines for t in {t for line in case_lines for t in line})
        count = len(cases)
        idf = {t: math.log(1 + (count - n + 0.5) / (n + 0.5)) for t, n in frequency.items()}
        # Tokens are ours (masked, lower-cased, `_` `.` `-` kept inside identifiers): FTS5 only splits on spaces.
        db.executescript("""
            CREATE VIRTUAL TABLE search USING fts5(anchors, words, family, tokenize="unicode61 tokenchars '_.-'");
            CREATE TABLE reports(id INTEGER PRIMARY KEY, report TEXT, lines TEXT);
            CREATE TABLE rare(token TEXT PRIMARY KEY);
        """)
        for row_id, (case, case_lines) in enumerate(zip(cases, lines, strict=True)):
            weights = {k: w for line in case_lines for k, w in line.items()} | {c.lower(): ANCHOR_WEIGHT for c in case.codes}
            db.execute("INSERT INTO search(rowid, anchors, words, family) VALUES (?, ?, ?, ?)",
                       (row_id, " ".join(k for k, w in weights.items() if w >= ANCHOR_WEIGHT),
                        " ".join(k for k, w in weights.items() if w < ANCHOR_WEIGHT), case.family))
            scaled = [{t: round(w * idf[t], 4) for t, w in line.items()} for line in case_lines]
            db.execute("INSERT INTO reports VALUES (?, ?, ?)", (row_id, case.model_dump_json(), json.dumps(scaled)))
        db.executemany("INSERT INTO rare VALUES (?)",
                       [(t,) for t, n in frequency.items() if n <= max(1, DISTINCT_SHARE * count)])
        db.commit()
        return cls(db)

    def report(self, row_id: int) -> tuple[Case, tuple[dict[str, float], ...]]:
        if row_id not in self._reports:
            text, lines = self.db.execute("SELECT report, lines FROM reports WHERE id = ?", (row_id,)).fetchone()
            self._reports[row_id] = (Case.model_construct(**json.loads(text)), tuple(json.loads(lines)))
        return self._reports[row_id]

    def candidates(self, line_tokens: dict[str, float], families: frozenset[str] | None = None) -> list[int]:
        terms = [t for t in line_tokens if _searchable(t)]
        if not terms:
            return []
        query = " OR ".join(f'"{t}"' for t in terms)
        if families is not None:  # FTS5 column filter: only the reports of these families
            query = f"({query}) AND family : ({' OR '.join(chr(34) + f + chr(34) for f in sorted(families))})"
        try:
            found = self.db.execute("SELECT rowid FROM search WHERE search MATCH ? ORDER BY bm25(search, ?, 1.0, 0.0) "
                                    "LIMIT ?", (query, ANCHOR_WEIGHT, CANDIDATES)).fetchall()
        except sqlite3.OperationalError:  # a term FTS5 cannot parse: no candidates rather than a failure
            return []
        return [row_id for (row_id,) in found]

    def search(self, texts: list[str], families: frozenset[str] | None = None) -> list[Match]:
        """Cases whose error lines the texts show, best first, each with its closeness (the best pair of a
        report line and an input text) and which text that was; only of `families` when given. Without a
        family to agree with, a report line counts only when the input shows all of its rare tokens (the
        API that failed, a pass name), however much else matches."""
        best: dict[int, Match] = {}
        for position, text in enumerate(texts):
            line_tokens = tokens(text) if is_message(text) else {}
            if len(line_tokens) < MIN_LINE_TOKENS:
                continue
            for row_id in self.candidates(line_tokens, families):
                case, lines = self.report(row_id)
                if families is None:
                    lines = tuple(line for line in lines if {t for t in line if t in self.rare} <= line_tokens.keys())
                score = max((closeness(line, line_tokens) for line in lines), default=0.0)
                if row_id not in best or score > best[row_id].closeness:
                    best[row_id] = Match(case, score, position)
        return sorted(best.values(), key=lambda match: -match.closeness)


# Lines that are the furniture of a traceback or a log, not a message: every report has them.
_FURNITURE = re.compile(r"Traceback \(most recent call last\)|To enable traceback see|Root Cause \(first observed|"
                        r"<NO_OTHER_FAILURES>|^\s*(?:error_file|time|host|rank|local_rank|exitcode)\s*:|"
                        r"^\s*(?:File \"|File /|Cell In|-*> ?\d|\d+ |\^|~|#\d+ )|"
                        r"(?:^|\s)(?:INFO|DEBUG)(?:\s|:|$)|^\W*$")


def failure_site(log: ParsedLog) -> tuple[list[str], str | None]:
    """Where the log's failure was raised: the deepest frames of its last Python traceback (or the top of
    its last native stack) as `package/path.py:function`, and the exception. A KeyError says little; a
    KeyError raised in `neuronx_distributed_inference/models/model_wrapper.py` places it."""
    traceback = next((t for t in reversed(log.tracebacks) if t.frames or t.exception), None)
    if traceback is not None:
        frames = traceback.frames[-DEEPEST_FRAMES:]
    else:
        frames = log.stacks[-1].frames[:DEEPEST_FRAMES] if log.stacks else []
    return ([f"{f.package_path}:{f.function}" if f.function else f.package_path for f in frames],
            traceback.exception if traceback is not None else None)


def site_text(frames: list[str], exception: str | None) -> str:
    """The failure site as one searchable line (empty when there is none)."""
    if not frames and not exception:
        return ""
    return " ".join([f"raised {exception or 'an exception'}", *(f"in {frame}" for frame in frames)])


def is_message(line: str) -> bool:
    """The line says something of its own (not a traceback header, frame, source line or info chatter)."""
    return not _FURNITURE.search(line)


DISTINCT_SHARE = 0.02  # a token in at most this share of the reports tells its report apart


def _searchable(token: str) -> bool:
    return all(c.isalnum() or c in "_.-" for c in token) and not token.startswith(("-", "."))


def closeness(report_line: dict[str, float], line_tokens: dict[str, float]) -> float:
    """The anchor-weighted share of a report line's tokens that an input line shows."""
    total = sum(report_line.values())
    return sum(w for t, w in report_line.items() if t in line_tokens) / total if total else 0.0


# The index stores tokens: it is stale when the code that makes them changes.
_TOKENISERS = [Path(__file__).parents[1] / "knowledge" / "wording.py", Path(__file__).parents[1] / "masking.py"]
# The built-in cases' index, built ahead by tools/build_case_index.py and shipped in the package like
# catalogue.bin: the first run after installing (and a run with no cache folder of its own) opens it
# instead of tokenising every case.
SHIPPED_INDEX = CASES_DIR.parent / "cases.sqlite"


def shipped_digest() -> str:
    """What the shipped index was built from: the built-in case files and the code that tokenises them."""
    digest = hashlib.sha256()
    for path in [*case_files(CASES_DIR), Path(__file__), *_TOKENISERS]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def shipped_index() -> CaseIndex | None:
    """The shipped index when it was built from these very files, else None."""
    try:
        db = sqlite3.connect(f"file:{SHIPPED_INDEX}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        (built,) = db.execute("SELECT digest FROM built").fetchone()
    except (sqlite3.Error, TypeError, OSError):
        return None
    return CaseIndex(db) if built == shipped_digest() else None


@cache
def _index(pack_folders: tuple[str, ...]) -> CaseIndex:
    shipped = None if pack_folders else shipped_index()
    if shipped is not None:
        return shipped
    files = [p for folder in (CASES_DIR, *(Path(f) / "cases" for f in pack_folders)) for p in case_files(folder)]
    key = hashlib.sha256("\0".join([__version__, *stamp([*files, Path(__file__), *_TOKENISERS])]).encode()).hexdigest()[:24]
    folder = private_dir()  # None when the cache folder is not ours alone: then nothing is read or kept
    path = folder / f"cases-{key}.sqlite" if folder else None
    if path is not None and is_private_file(path):
        try:
            return CaseIndex(sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False))
        except sqlite3.Error:
            pass
    index = CaseIndex.build(cases_for(pack_folders), sqlite3.connect(":memory:", check_same_thread=False))
    if path is not None:
        _persist(index.db, path)
    return index


def _persist(db: sqlite3.Connection, path: Path) -> None:
    """Keep the built index for the next run; a cache that cannot be written is only a slower next run."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        with sqlite3.connect(partial) as target:
            db.backup(target)
        target.close()
        os.replace(partial, path)
    except (OSError, sqlite3.Error):
        return
    prune(path.parent)


def case_index(kb: KnowledgeBase) -> CaseIndex:
    """The index of this knowledge base's cases, opened (or built) once per process."""
    return _index(kb.pack_folders)


def report_of(case: Case, score: float) -> SimilarReport:
    return SimilarReport.model_construct(
        repo=case.repo, number=case.number, url=case.url, title=case.title, state=case.state, family=case.family,
        signature=case.signature, fixed_in=case.fixed_in, answer=case.answer, workaround=case.workaround,
        closeness=round(score, 2))


def similar_reports(index: CaseIndex, texts: list[str], signature: str | None = None,
                    families: frozenset[str] | None = None, exclude: frozenset[str] = frozenset()) -> list[SimilarReport]:
    """At most MAX_SHOWN reports close enough to show, the finding's own signature's reports first. A finding
    that knows its family looks among the reports of that family only, and the agreement of the two lets a
    looser resemblance count; one that does not must resemble a report closely."""
    needed = SHOW_CLOSENESS_IN_FAMILY if families is not None else SHOW_CLOSENESS
    shown = [m for m in index.search(texts, families) if m.case.url not in exclude and (
        m.closeness >= needed or (signature and m.case.signature == signature and m.closeness >= SAME_SIGNATURE_CLOSENESS))]
    shown.sort(key=lambda m: (signature is None or m.case.signature != signature, -m.closeness))
    return [report_of(m.case, m.closeness) for m in shown[:MAX_SHOWN]]
