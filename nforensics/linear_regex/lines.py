"""Raw bytes scanned for lines in bulk with RE2 (nforensics/linear_regex/__init__.py says why RE2): the
prefilter a big log goes through before any line of it is decoded (nforensics/parse/gates.py skip_finder)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from nforensics.linear_regex import _ANCHOR_START, _UNANCHORED, _re2_program


class LineFinder:
    """Where the next line holding any of some words or small patterns starts, in raw bytes: RE2 scans a
    block of many lines once (several hundred MB/s), so lines without them are only counted, never decoded
    or looked at one by one. The patterns must run in RE2 and never match a newline.

    `quiet`: a line found whose first `head` bytes hold one of these words is passed over too, unless it
    holds one of `unless` (words or patterns; `(?m)^` anchors at the line's start). A run of such lines is
    passed over in a few scans, not line by line: a log of nothing but levelled chatter costs no Python per
    line either."""

    def __init__(self, words: Iterable[str], patterns: Iterable[str] = (), *, quiet: Iterable[str] = (),
                 head: int = 0, unless: Iterable[str] = (), unless_patterns: Iterable[str] = ()) -> None:
        self._find = _alternation(words, patterns)
        quiet = tuple(quiet)
        # A line whose head holds a quiet word, then the next such line, and so on: the run of quiet lines.
        heads = [f"[^\\n]{{0,{head - len(word.encode())}}}{re.escape(word)}" for word in quiet]
        self._quiet_run = _alternation((), [f"(?:(?:{'|'.join(heads)})[^\\n]*\\n)+"]) if quiet else None
        self._unless = _alternation(unless, unless_patterns) if quiet else None

    def holds(self, data: bytes, start: int, end: int) -> bool:
        """Whether data[start:end] holds one of the words or patterns."""
        return self._find.Match(_UNANCHORED, data, start, end)[0][0] >= 0

    def line_start(self, data: bytes, pos: int) -> int:
        """The offset where the first line at or after `pos` that holds a match (and is not quiet) starts;
        -1 when none does. `pos` is the start of a line; `data` ends in a newline."""
        find, size = self._find.Match, len(data)
        while (found := find(_UNANCHORED, data, pos, size)[0][0]) >= 0:
            start = data.rfind(b"\n", pos, found) + 1 or pos
            if self._quiet_run is None:
                return start
            run_end = self._quiet_run.Match(_ANCHOR_START, data, start, size)[0][1]
            if run_end < 0:
                return start
            kept = self._kept_in(data, start, run_end)
            if kept >= 0:
                return kept
            pos = run_end
        return -1

    def _kept_in(self, data: bytes, start: int, end: int) -> int:
        """In a run of quiet lines, the start of the first that holds one of `unless` and a match; -1 when
        none does. Each byte is scanned once, so a long run with many such words costs no more than a short one."""
        unless = self._unless
        assert unless is not None
        at = start
        while (word := unless.Match(_UNANCHORED, data, at, end)[0][0]) >= 0:
            line = data.rfind(b"\n", at, word) + 1 or at
            line_end = data.find(b"\n", word) + 1
            if self.holds(data, line, line_end):
                return line
            at = line_end
        return -1


def _alternation(words: Iterable[str], patterns: Iterable[str]) -> Any:
    """One RE2 program for all of them, compiled as every pattern of the project is (its UTF-8 bytes are
    matched as bytes against the input's own)."""
    alternatives = [re.escape(word) for word in words] + [f"(?:{pattern})" for pattern in patterns]
    program = _re2_program("|".join(alternatives), 0)
    if program is None:
        raise ValueError(f"not an RE2 pattern: {alternatives!r}")
    return program
