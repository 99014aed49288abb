"""Raw bytes scanned for lines in bulk with RE2 (nforensics/linear_regex/__init__.py says why RE2): the
prefilter a big log goes through before any line of it is decoded (nforensics/parse/gates.py skip_finder)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from nforensics.linear_regex import _UNANCHORED, _re2_program


class LineFinder:
    """Where the next line holding any of some words or small patterns starts, in raw bytes: RE2 scans a
    block of many lines once (several hundred MB/s), so lines without them are only counted, never decoded
    or looked at one by one. The patterns must run in RE2 and never match a newline.

    `quiet`: a line found whose first `head` bytes hold one of these words is passed over too, unless it
    holds one of `unless` (words or patterns; `(?m)^` anchors at the line's start)."""

    def __init__(self, words: Iterable[str], patterns: Iterable[str] = (), *, quiet: Iterable[str] = (),
                 head: int = 0, unless: Iterable[str] = (), unless_patterns: Iterable[str] = ()) -> None:
        self._find = _alternation(words, patterns)
        self._quiet = _alternation(quiet, ()) if quiet else None
        self._unless = _alternation(unless, unless_patterns) if quiet else None
        self._head = head

    def holds(self, data: bytes, start: int, end: int) -> bool:
        """Whether data[start:end] holds one of the words or patterns."""
        return self._find.Match(_UNANCHORED, data, start, end)[0][0] >= 0

    def line_start(self, data: bytes, pos: int) -> int:
        """The offset where the first line at or after `pos` that holds a match (and is not quiet) starts;
        -1 when none does. `pos` is the start of a line."""
        find, quiet, unless, size = self._find.Match, self._quiet, self._unless, len(data)
        while (found := find(_UNANCHORED, data, pos, size)[0][0]) >= 0:
            start = data.rfind(b"\n", pos, found) + 1 or pos
            if quiet is None:
                return start
            end = data.find(b"\n", found)
            end = size if end < 0 else end
            if (quiet.Match(_UNANCHORED, data, start, min(start + self._head, end))[0][0] < 0
                    or unless is not None and unless.Match(_UNANCHORED, data, start, end)[0][0] >= 0):
                return start
            pos = end + 1
        return -1


def _alternation(words: Iterable[str], patterns: Iterable[str]) -> Any:
    """One RE2 program for all of them, compiled as every pattern of the project is (its UTF-8 bytes are
    matched as bytes against the input's own)."""
    alternatives = [re.escape(word) for word in words] + [f"(?:{pattern})" for pattern in patterns]
    program = _re2_program("|".join(alternatives), 0)
    if program is None:
        raise ValueError(f"not an RE2 pattern: {alternatives!r}")
    return program
