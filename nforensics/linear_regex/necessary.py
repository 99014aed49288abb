"""The words any text a regular expression matches must contain, read off the expression with the stdlib's
own regex parser: a substring test on them (nanoseconds) can rule a text out before anything slower runs on it.
Used for the grammars' terminals (nforensics/parse/literals.py) and the catalogue's patterns (the anchors a big
log's warnings are kept by, nforensics/knowledge/matcher.py warning_anchors)."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

if sys.version_info >= (3, 11):
    from re import _parser as sre_parse  # the stdlib's own regex parser, with its opcodes (as knowledge/order.py)
else:  # Python 3.10 names it this way
    import sre_parse


@dataclass(frozen=True)
class Words:
    """Any one of these must occur in the text: `exact` as spelled, `folded` in the lower-cased text."""

    exact: frozenset[str] = frozenset()
    folded: frozenset[str] = frozenset()

    def __or__(self, other: Words) -> Words:
        return Words(_shortest(self.exact | other.exact), _shortest(self.folded | other.folded))

    def strength(self) -> tuple[int, int]:
        """Shorter words and more of them let more lines through: the longest shortest word wins, then fewer."""
        every = self.exact | self.folded
        return (min(map(len, every)), -len(every))

    def patterns(self) -> tuple[str, ...]:
        """The words as RE2 patterns: each exact word escaped, the folded ones as one case-insensitive group."""
        folded = "|".join(re.escape(word) for word in sorted(self.folded))
        return (*(re.escape(word) for word in sorted(self.exact)), *([f"(?i:{folded})"] if folded else []))

    def found_in(self, text: str) -> bool:
        return any(word in text for word in self.exact) or (
            bool(self.folded) and any(word in text.lower() for word in self.folded))


def _shortest(words: frozenset[str]) -> frozenset[str]:
    """Without the words that contain another of the set: a text with the longer one has the shorter too."""
    return frozenset(w for w in words if not any(v != w and v in w for v in words))


def strongest(candidates: list[Words]) -> Words | None:
    return max(candidates, key=Words.strength, default=None)


def _pattern_words(items: Any, folded: bool) -> Words | None:
    """Necessary words of one parsed regex sequence (sre_parse's SubPattern), or None when it needs none."""
    candidates: list[Words] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            word = "".join(run)
            candidates.append(Words(folded=frozenset([word.lower()])) if folded else Words(exact=frozenset([word])))
            run.clear()

    for op, arg in items:
        if op is sre_parse.LITERAL:
            run.append(chr(arg))
            continue
        if op is sre_parse.ASSERT and arg[0] == 1 and run:
            # `\.py(?= in )`: the text the lookahead wants follows the run, so both are one word (`.py in `).
            run.extend(_literal_head(arg[1]))
        close_run()
        if op is sre_parse.SUBPATTERN:
            _group, add_flags, del_flags, inner = arg
            inner_folded = (folded or bool(add_flags & sre_parse.SRE_FLAG_IGNORECASE)) and not (
                del_flags & sre_parse.SRE_FLAG_IGNORECASE)
            found = _pattern_words(inner, inner_folded)
        elif op is sre_parse.BRANCH:
            branches = [_pattern_words(branch, folded) for branch in arg[1]]
            found = None if any(b is None for b in branches) else union(branches)  # type: ignore[arg-type]
        elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT) and arg[0] >= 1:
            found = _pattern_words(arg[2], folded)
        elif op is sre_parse.ASSERT:  # a positive lookahead or lookbehind: its text is there too
            found = _pattern_words(arg[1], folded)
        else:  # a class, any character, an anchor, a negative lookaround, an optional repeat: no word
            found = None
        if found is not None:
            candidates.append(found)
    close_run()
    return strongest(candidates)


def _literal_head(items: Any) -> list[str]:
    """The literal characters a parsed regex sequence starts with."""
    head = []
    for op, arg in items:
        if op is not sre_parse.LITERAL:
            break
        head.append(chr(arg))
    return head


def union(parts: list[Words]) -> Words:
    joined = Words()
    for part in parts:
        joined = joined | part
    return joined


def regex_words(pattern: str, folded: bool = False) -> Words | None:
    """Words one of which any text `pattern` matches contains (None: the pattern needs no particular word)."""
    parsed = sre_parse.parse(pattern)
    return _pattern_words(parsed, folded or bool(parsed.state.flags & sre_parse.SRE_FLAG_IGNORECASE))
