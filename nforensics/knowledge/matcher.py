"""Which signatures claim which records and lines of an input.

A claim is (signature, the lines it spans, the message text its fields are read from). Each record or
line goes to the signature first in recognition order (knowledge/order.py) that matches it; claims of one
signature are merged later into one finding (diagnose groups them by signature id), claims of different
signatures never share a line.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nforensics import masking
from nforensics.knowledge import KnowledgeBase, compiled, table, wording
from nforensics.knowledge.disk_cache import remember, stamp
from nforensics.knowledge.order import code_key
from nforensics.linear_regex import SearchSet
from nforensics.line_numbers import last_line
from nforensics.linear_regex.necessary import regex_words
from nforensics.knowledge.wording import (
    ANCHOR_WEIGHT, THRESHOLD, cut_resemblance, know_template_tokens, last_word, resemblance, shows_own_words, template_tokens,
    tokens,
)
from nforensics.knowledge.schema import Signature
from nforensics.records import Diagnostic, ParsedLog, SourceLine
from nforensics.vocabulary import reads_as_failure

BLOCK_LINES = 6  # a line-anchored message reads on through at most this many wrapped lines
# A line that starts a record of its own (timestamp, traceback, exception, prompt) is not a wrapped part.
_RECORD_START = re.compile(
    r"^\s*(?:\d{4}-|\d\d/\d\d/|Traceback|File |[\w.]*(?:Error|Exception)\b|\$ |\[[A-Z_]+\]|"
    r"\([\w.-]+ pid=|NRT:|[A-Z]+ \d\d-\d\d |"  # Ray/vLLM-prefixed and syslog-form runtime lines
    r"(?i:warning|error|fatal|info):)"  # a tool's own `error: ...` line
)


@dataclass
class Claim:
    signature: Signature
    line: int
    end_line: int
    message: str
    diagnostic: Diagnostic | None = None
    printed_code: str | None = None
    how: str = "pattern"  # code | status | pattern | template: how sure the recognition is follows from it
    resemblance: float = 1.0  # for template claims: the share of the template's token weight the text holds


def _code_claims(kb: KnowledgeBase, log: ParsedLog) -> list[Claim]:
    claims = []
    for diagnostic in log.diagnostics:
        for signature in kb.by_code.get(diagnostic.code.upper(), ()):
            if signature.match.message and not compiled(signature.match.message).search(diagnostic.message):
                continue
            claims.append(Claim(signature, diagnostic.line, diagnostic.end_line, diagnostic.message,
                                diagnostic, diagnostic.code, how="code"))
            break  # by_code is in recognition order: the first that fits is the best
    return claims


def _block(retained: list[SourceLine], index: int, record_lines: frozenset[int]) -> tuple[int, str]:
    """The end line and text of the message starting at retained[index]: it and the lines right after it,
    up to the next line that starts a record of its own (by its shape, or a runtime record the parser read,
    with or without its timestamp)."""
    end = index
    while (end + 1 < len(retained) and end - index < BLOCK_LINES
           and retained[end + 1].line == retained[end].line + 1 and retained[end + 1].line not in record_lines
           and not _RECORD_START.match(retained[end + 1].text)):
        end += 1
    return retained[end].line, " ".join(line.text.strip() for line in retained[index:end + 1])


def pattern_index(kb: KnowledgeBase) -> tuple[SearchSet, list[int]]:
    """Every signature pattern in one set, and the position in kb.signatures of the signature each belongs to
    (KnowledgeBase.pattern_index keeps them: built once per catalogue)."""
    owners = [n for n, s in enumerate(kb.signatures) for _ in s.match.patterns]
    return SearchSet([p for s in kb.signatures for p in s.match.patterns]), owners


def catalogue_anchors(kb: KnowledgeBase) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """The catalogue's anchors (KnowledgeBase.anchors keeps them), as RE2 patterns: each signature pattern's
    necessary words, of every signature and of those that may claim a warning (parse.gates.CatalogueAnchors
    reads them). None where some pattern needs no word. (Families and message templates read only lines that
    read as a failure: their words are failure words already. A hypothesis's evidence and the fields read from
    the input are not: they say more of a finding, and are read where the lines are.)"""
    def needed(signatures: Iterable[Signature]) -> frozenset[str] | None:
        words = [regex_words(pattern) for signature in signatures for pattern in signature.match.patterns]
        return None if None in words else frozenset(p for w in words if w is not None for p in w.patterns())

    return needed(kb.signatures), needed(s for s in kb.signatures if s.match.claims_warnings)


def _pattern_claims(kb: KnowledgeBase, retained: list[SourceLine], record_lines: frozenset[int]) -> list[Claim]:
    claims = []
    patterns, owners = kb.pattern_index
    for index, line in enumerate(retained):
        # in catalogue order, one claim per signature however many of its patterns the line holds
        for position in dict.fromkeys(owners[number] for number in patterns.matching(line.text)):
            end_line, text = _block(retained, index, record_lines)
            claims.append(Claim(kb.signatures[position], line.line, end_line, text))
    return claims


TEMPLATE_LINES = 3000  # template matching reads at most the last this many failure lines


def templates_of(kb: KnowledgeBase) -> list[tuple[Signature, tuple[str, ...]]]:
    """Each signature's message templates: its own `match.templates`, else the ones derived from its sample
    log into knowledge/templates.toml (tools/derive_templates.py)."""
    derived = table("templates").get("templates", {})
    found = [(s, tuple(s.match.templates or derived.get(s.id, ()))) for s in kb.signatures]
    return [(s, tuple(dict.fromkeys(form for t in templates for form in _with_and_without_hint(t))))
            for s, templates in found if templates]


# neuronx-cc ends a diagnostic with a hint after " - " ("... statically sized. - Recompile the model with
# fully static input shapes."); a paste, a wrapper's message or the docs often give the message alone.
_HINT = re.compile(r"\s-\s(?=[A-Z])")
HINTED_MESSAGE_TOKENS = 4  # a message this long before its hint stands as a template of its own


def _with_and_without_hint(template: str) -> tuple[str, ...]:
    parts = _HINT.split(template)
    head = parts[0].strip()
    return (template, head) if len(parts) > 1 and len(tokens(head)) >= HINTED_MESSAGE_TOKENS else (template,)


_WHOLE_ENDINGS = (".", "!", "?", ")", "]", "}", '"', "'")


def _template_claims(kb: KnowledgeBase, retained: list[SourceLine], last_line: int, record_lines: frozenset[int]) -> list[Claim]:
    """The signature whose message template a failure line resembles best, when it resembles one enough.
    The input's last line may be cut short (a paste that stops mid-line): it is compared with each
    template's head too."""
    templated, holders = kb.template_index
    own = kb.own_words
    failure_lines = [i for i, line in enumerate(retained) if reads_as_failure(line.text)][-TEMPLATE_LINES:]
    claims = []
    for index in failure_lines:
        end_line, text = _block(retained, index, record_lines)
        line_tokens = tokens(text)
        # A line that ends a sentence or a bracket was not cut: it is a whole message of its own.
        cut = end_line == last_line and not text.rstrip().endswith(_WHOLE_ENDINGS)
        last = last_word(text) if cut else None
        candidates = range(len(templated)) if cut else sorted({n for t in line_tokens for n in holders.get(t, ())})
        best: tuple[float, tuple[int, ...], Signature] | None = None
        for signature, templates in (templated[n] for n in candidates):
            score = max(max(resemblance(t, line_tokens) if shows_own_words(own[t], line_tokens) else 0.0,
                            cut_resemblance(t, line_tokens, last) if cut else 0.0) for t in templates)
            if score < THRESHOLD:
                continue
            # the closer resemblance wins; at equal resemblance, the signature first in recognition order
            order = (-score, kb.order.rank(signature))
            if best is None or order < (-best[0], best[1]):
                best = (score, order[1], signature)
        if best is not None:
            claims.append(Claim(best[2], retained[index].line, end_line, text, how="template", resemblance=best[0]))
    return claims


# The code a template's tokens and holders are computed by: a cached index is stale when it changes.
_TOKENISER_FILES = (Path(__file__), Path(wording.__file__), Path(masking.__file__))


def template_index(kb: KnowledgeBase) -> tuple[list[tuple[Signature, tuple[str, ...]]], dict[str, list[int]]]:
    """templates_of(kb) and their holders (KnowledgeBase.template_index keeps them: built once per catalogue).
    The holders and every template's tokens are kept in the disk cache, keyed by the templates themselves:
    tokenising every template would cost each run about as much as reading the catalogue."""
    templated = templates_of(kb)
    every = "\x1e".join("\x1f".join(templates) for _, templates in templated)
    key = hashlib.sha256(every.encode()).hexdigest()
    kept = remember("template-index", [key, *stamp(_TOKENISER_FILES)], lambda: _template_index_file(templated))
    # A file of another shape under that name (damaged, planted) is a miss, never a wrong signature.
    holders, known = (kept.get("holders"), kept.get("tokens")) if isinstance(kept, dict) else (None, None)
    if not (isinstance(holders, dict) and all(
            isinstance(numbers, list) and all(isinstance(n, int) and 0 <= n < len(templated) for n in numbers)
            for numbers in holders.values())):
        return templated, _template_holders(templated)
    if isinstance(known, dict):
        know_template_tokens({template: pairs for template, listed in known.items()
                              if isinstance(template, str) and (pairs := _token_pairs(listed)) is not None})
    return templated, holders


def _template_index_file(templated: list[tuple[Signature, tuple[str, ...]]]) -> dict[str, object]:
    return {"holders": _template_holders(templated),
            "tokens": {t: [list(pair) for pair in template_tokens(t)] for _, templates in templated for t in templates}}


def _token_pairs(listed: object) -> tuple[tuple[str, float], ...] | None:
    """A template's tokens as the cache file lists them, when they have that shape."""
    if not isinstance(listed, list):
        return None
    pairs = tuple((pair[0], float(pair[1])) for pair in listed if isinstance(pair, list) and len(pair) == 2
                  and isinstance(pair[0], str) and isinstance(pair[1], (int, float)))
    return pairs if len(pairs) == len(listed) else None


def own_words(kb: KnowledgeBase) -> dict[str, tuple[tuple[str, float], ...]]:
    """template -> its own words (KnowledgeBase.own_words): prose tokens no other signature's template holds.
    Not identifiers: the function a record names is every record's of that function, loaded sibling or not."""
    templated = kb.template_index[0]
    owners: Counter[str] = Counter()
    for _, templates in templated:
        owners.update({token for template in templates for token, _ in template_tokens(template)})
    return {template: tuple((token, weight) for token, weight in template_tokens(template)
                            if weight < ANCHOR_WEIGHT and owners[token] == 1)
            for _, templates in templated for template in templates}


def _template_holders(templated: list[tuple[Signature, tuple[str, ...]]]) -> dict[str, list[int]]:
    """token -> the signatures (by position) a line with that token may resemble. A template is held by its
    heaviest tokens until they weigh more than (1 - THRESHOLD) of it: a line with none of them shows less than
    THRESHOLD of the template, so only the signatures holding one of a line's tokens are scored (a log with
    thousands of error lines is not compared with every template)."""
    # Of equally heavy tokens the rarest go first: "failed" would make every line with it a candidate.
    frequency = Counter(token for _, templates in templated for t in templates for token, _ in template_tokens(t))
    holders: dict[str, set[int]] = {}
    for number, (_, templates) in enumerate(templated):
        for template in templates:
            wanted = sorted(template_tokens(template), key=lambda token_weight: (-token_weight[1], frequency[token_weight[0]]))
            total = sum(weight for _, weight in wanted)
            covered = 0.0
            for token, weight in wanted:
                holders.setdefault(token, set()).add(number)
                covered += weight
                if total - covered < THRESHOLD * total - 1e-9:  # what is left cannot reach THRESHOLD, rounding aside
                    break
    return {token: sorted(numbers) for token, numbers in holders.items()}


def _status_claims(kb: KnowledgeBase, log: ParsedLog, retained: list[SourceLine], record_lines: frozenset[int]) -> list[Claim]:
    by_line = {line.line: i for i, line in enumerate(retained)}
    claims = []
    for status_signatures, records, key in (
        (kb.by_status, log.nrt_statuses, lambda s, r: r.name in s.match.nrt_statuses),
        (kb.by_exit_code, log.exits, lambda s, r: r.code in s.match.exit_codes),
    ):
        for record in records:
            for signature in status_signatures:
                if key(signature, record):
                    index = by_line.get(record.line)
                    end_line, text = _block(retained, index, record_lines) if index is not None else (record.line, "")
                    claims.append(Claim(signature, record.line, end_line, text, how="status"))
                    break
    return claims


# At equal tier and specificity, what the input printed (a code, then a status) beats wording; templates come last.
HOW_RANK = {"code": 0, "status": 1, "pattern": 2, "template": 3}


@dataclass
class _Printed:
    """What the input printed on each line: codes, NRT statuses, exit statuses."""

    codes: dict[int, set[str]]
    statuses: dict[int, set[str]]
    exits: dict[int, set[int]]


def _printed_facts(log: ParsedLog) -> _Printed:
    printed = _Printed({}, {}, {})
    for diagnostic in log.diagnostics:
        printed.codes.setdefault(diagnostic.line, set()).add(diagnostic.code.upper())
    for status in log.nrt_statuses:
        if status.name:
            printed.statuses.setdefault(status.line, set()).add(status.name)
    for exit_status in log.exits:
        printed.exits.setdefault(exit_status.line, set()).add(exit_status.code)
    return printed


def _contradicted(claim: Claim, printed: _Printed) -> bool:
    """A wording claim on a line whose printed code, status or exit status names another failure: the printed
    fact wins (`neuronx-cc failed with 1` reads like the exit-70 message, and is not it)."""
    if claim.how in ("code", "status"):
        return False
    match_spec = claim.signature.match
    known = {code_key(c) for c in [*match_spec.codes, *claim.signature.aliases, *filter(None, [claim.signature.code])]}
    shown_codes = {code_key(c) for c in printed.codes.get(claim.line, ())}
    if known and shown_codes and not known & shown_codes:
        return True
    shown = printed.statuses.get(claim.line, set())
    if match_spec.nrt_statuses and shown and not shown & set(match_spec.nrt_statuses):
        return True
    exited = printed.exits.get(claim.line, set())
    return bool(match_spec.exit_codes and exited and not exited & set(match_spec.exit_codes))


def match(kb: KnowledgeBase, log: ParsedLog, retained: list[SourceLine]) -> list[Claim]:
    """Accepted claims in recognition order; a later claim overlapping another signature's is dropped."""
    printed = _printed_facts(log)
    below_error = log.below_error_lines()
    # A record starts at a runtime record the parser read, or where a line (or a logger's prefix on it)
    # has the shape of one: a logger repeating its prefix on every line of a message cuts it there.
    record_lines = frozenset([*(e.line for e in log.events if e.producer == "runtime"),
                              *(line.line for line in retained if _RECORD_START.match(line.text))])
    # Patterns and templates read each line as its producer printed it: behind a relay's tag (docker
    # compose, kubectl --prefix, journald, MPI ranks, srun) a message still starts where it starts, and the
    # next record still starts a record.
    retained = [line if line.body is None else SourceLine.model_construct(line=line.line, text=line.body) for line in retained]
    candidates = [c for c in (_code_claims(kb, log) + _pattern_claims(kb, retained, record_lines)
                              + _status_claims(kb, log, retained, record_lines)
                              + _template_claims(kb, retained, last_line(log), record_lines))
                  if not _contradicted(c, printed)
                  and (c.signature.match.claims_warnings or c.line not in below_error)]
    # A wording claim that contradicts a printed fact is gone already; of the rest the signature first in
    # recognition order (tier, then specificity) wins; at equal rank what the input printed (a code, then a
    # status) beats wording, and then the earlier line (a cause is printed before its symptoms).
    # A template claim (resemblance, not a match) only takes lines no match claimed.
    candidates.sort(key=lambda c: (c.how == "template", kb.order.rank(c.signature), HOW_RANK[c.how], c.line))
    accepted: list[Claim] = []
    holder: dict[int, str] = {}  # line -> the signature whose accepted claims cover it (one, by construction)
    starts: set[int] = set()  # first lines of accepted claims
    for claim in candidates:
        lines = range(claim.line, claim.end_line + 1)
        if any(holder.get(n, claim.signature.id) != claim.signature.id for n in lines):
            continue
        if claim.line in starts:
            continue  # the same signature already holds this line
        accepted.append(claim)
        starts.add(claim.line)
        holder.update(dict.fromkeys(lines, claim.signature.id))
    return accepted
