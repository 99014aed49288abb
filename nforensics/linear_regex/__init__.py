"""Regular expressions that cannot blow up on hostile input: RE2, whose time is linear in the input.

Python's `re` backtracks: `\\s*-?\\s*Please open` took 14 s on a 3 KB line of spaces, and catalogue patterns
such as `(?P<function>\\w+)\\(\\) got an unexpected keyword argument` took 20 s on one 65 KB line. Every
catalogue pattern (signatures, families) and the fingerprint's masks go through here:

- `compile(pattern)`: RE2 when it accepts the pattern (Python's `\\Z` and `\\uXXXX` spelled its way);
- `compile_search(pattern)`: the same for patterns used only to *find* a line and read its groups, which is
  every catalogue pattern. Two lookarounds RE2 lacks are rewritten without changing any group: a trailing
  lookahead `X(?=Y)` becomes `X(?:Y)` and a leading one-character lookbehind `(?<![...])X` becomes
  `(?:^|[^...])X` (only the whole match, group 0, may then be a character longer);
- anything else RE2 refuses (other lookarounds, backreferences) stays with Python's `re`, but only ever
  sees a bounded window of the input (`WINDOW` characters, overlapping by `OVERLAP`), so its time is
  bounded per window and linear in the input. tests/test_regex_safety.py lists these patterns and times
  every pattern of the catalogue and the code on adversarial strings.

RE2's `\\w`, `\\d`, `\\s` and `\\b` are ASCII, and its `$` (without `(?m)`) is the very end of the text.
The rewriting into RE2's spelling is in re2_syntax.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any, Union

import re2
from re2 import _re2

from nforensics.linear_regex.re2_syntax import for_search, spell_for_re2

WINDOW = 8192  # characters a Python-`re` fallback pattern sees at once
OVERLAP = 2048  # windows overlap so that a match shorter than this is never cut in two

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern falls back quietly; RE2 would print to stderr
_UNANCHORED, _ANCHOR_START, _ANCHOR_BOTH = (_re2.RE2.Anchor.UNANCHORED, _re2.RE2.Anchor.ANCHOR_START,
                                            _re2.RE2.Anchor.ANCHOR_BOTH)
_NO_SPAN = (-1, -1)
_INLINE_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))


class Match:
    """A match over a str, read like re.Match (group, groups, groupdict, start, end, span, [])."""

    __slots__ = ("string", "re", "_spans")

    def __init__(self, pattern: "LinearPattern", string: str, spans: list[tuple[int, int]]) -> None:
        self.re, self.string, self._spans = pattern, string, spans

    def _index(self, group: int | str) -> int:
        index = self.re.groupindex[group] if isinstance(group, str) else group
        if not 0 <= index < len(self._spans):
            raise IndexError("no such group")
        return index

    def span(self, group: int | str = 0) -> tuple[int, int]:
        return self._spans[self._index(group)]

    def start(self, group: int | str = 0) -> int:
        return self.span(group)[0]

    def end(self, group: int | str = 0) -> int:
        return self.span(group)[1]

    def _value(self, index: int, default: Any = None) -> Any:
        start, end = self._spans[index]
        return default if start < 0 else self.string[start:end]

    def group(self, *groups: int | str) -> Any:
        if len(groups) <= 1:
            return self._value(self._index(groups[0] if groups else 0))
        return tuple(self._value(self._index(g)) for g in groups)

    __getitem__ = group

    def groups(self, default: Any = None) -> tuple[Any, ...]:
        return tuple(self._value(i, default) for i in range(1, len(self._spans)))

    def groupdict(self, default: Any = None) -> dict[str, Any]:
        return {name: self._value(index, default) for name, index in self.re.groupindex.items()}

    def expand(self, template: str) -> str:
        return "".join(piece if isinstance(piece, str) else (self._value(self._index(piece)) or "")
                       for piece in _template(template))

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<linear_regex.Match span={self.span()} match={self.group()!r}>"


@cache
def _template(template: str) -> tuple[str | int, ...]:
    """A replacement string as literal pieces and group references (\\1, \\g<name>, \\g<1>)."""
    pieces: list[str | int] = []
    for found in re.finditer(r"\\(?:g<(\w+)>|(\d\d?)|(.))|([^\\]+)", template, re.DOTALL):
        named, number, escaped, literal = found.groups()
        if literal is not None:
            pieces.append(literal)
        elif named is not None:
            pieces.append(int(named) if named.isdigit() else named)  # type: ignore[arg-type]
        elif number is not None:
            pieces.append(int(number))
        else:
            pieces.append({"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}.get(escaped, "\\" + escaped))
    return tuple(pieces)


class _Text:
    """A str as RE2 reads it (UTF-8 bytes), with byte offsets turned back into str offsets."""

    __slots__ = ("text", "data", "ascii", "_byte", "_char")

    def __init__(self, text: str) -> None:
        self.text = text
        self.ascii = text.isascii()
        self.data = text.encode("ascii") if self.ascii else text.encode("utf-8", "surrogatepass")
        self._byte = self._char = 0  # the last offset converted: conversions move forward, so total O(n)

    def char(self, byte: int) -> int:
        if self.ascii or byte < 0:
            return byte
        if byte < self._byte:
            self._byte = self._char = 0
        self._char += len(self.data[self._byte:byte].decode("utf-8", "surrogatepass"))
        self._byte = byte
        return self._char

    def byte(self, char: int) -> int:
        if self.ascii:
            return char
        return len(self.text[:char].encode("utf-8", "surrogatepass"))

    def spans(self, raw: list[tuple[int, int]]) -> list[tuple[int, int]]:
        if self.ascii:
            return list(raw)
        start = raw[0][0]
        base = self.char(start)
        out = []
        for a, b in raw:
            if a < 0:
                out.append(_NO_SPAN)
            else:  # groups lie inside the match: decode from its start, not from the text's
                out.append((base + len(self.data[start:a].decode("utf-8", "surrogatepass")),
                            base + len(self.data[start:b].decode("utf-8", "surrogatepass"))))
        return out


class LinearPattern:
    """A compiled RE2 pattern with the parts of re.Pattern's interface this project uses."""

    engine = "re2"
    __slots__ = ("pattern", "flags", "_re2", "groupindex", "groups")

    def __init__(self, pattern: str, flags: int, program: Any) -> None:
        self.pattern, self.flags, self._re2 = pattern, flags, program
        self.groups = program.NumberOfCapturingGroups()
        named = sorted(program.NamedCapturingGroups(), key=lambda pair: pair[1])  # in the pattern's order, as re
        self.groupindex = {name.decode() if isinstance(name, bytes) else name: index for name, index in named}

    def _matches(self, anchor: Any, string: str, pos: int = 0, endpos: int | None = None) -> Iterator[Match]:
        text = _Text(string)
        at = text.byte(max(0, min(pos, len(string))))
        end = len(text.data) if endpos is None or endpos >= len(string) else text.byte(max(endpos, 0))
        while at <= end:
            raw = self._re2.Match(anchor, text.data, at, end)
            if raw[0] == _NO_SPAN:
                return
            yield Match(self, string, text.spans(raw))
            if anchor != _UNANCHORED:
                return
            if raw[0][1] > raw[0][0]:
                at = raw[0][1]
            else:  # an empty match: step over one character
                at = raw[0][1] + 1
                while at < end and not text.ascii and (text.data[at] & 0xC0) == 0x80:
                    at += 1

    def _first(self, anchor: Any, string: str) -> Match | None:
        """The common case, kept lean (the matcher calls it for every pattern on every retained line)."""
        if string.isascii():
            data = string.encode("ascii")
            raw = self._re2.Match(anchor, data, 0, len(data))
            return None if raw[0][0] < 0 else Match(self, string, raw)
        return next(self._matches(anchor, string), None)

    def search(self, string: str, pos: int = 0, endpos: int | None = None) -> Match | None:
        if pos == 0 and endpos is None:
            return self._first(_UNANCHORED, string)
        return next(self._matches(_UNANCHORED, string, pos, endpos), None)

    def match(self, string: str, pos: int = 0, endpos: int | None = None) -> Match | None:
        if pos == 0 and endpos is None:
            return self._first(_ANCHOR_START, string)
        return next(self._matches(_ANCHOR_START, string, pos, endpos), None)

    def fullmatch(self, string: str, pos: int = 0, endpos: int | None = None) -> Match | None:
        return next(self._matches(_ANCHOR_BOTH, string, pos, endpos), None)

    def finditer(self, string: str, pos: int = 0, endpos: int | None = None) -> Iterator[Match]:
        return self._matches(_UNANCHORED, string, pos, endpos)

    def findall(self, string: str) -> list[Any]:
        if self.groups == 0:
            return [m.group() for m in self.finditer(string)]
        if self.groups == 1:
            return [m.group(1) or "" for m in self.finditer(string)]
        return [m.groups("") for m in self.finditer(string)]

    def subn(self, repl: str | Callable[[Match], str], string: str, count: int = 0) -> tuple[str, int]:
        expand = repl if callable(repl) else (lambda m: m.expand(repl))
        pieces, last, done = [], 0, 0
        for found in self.finditer(string):
            start, end = found.span()
            pieces += [string[last:start], expand(found)]
            last, done = end, done + 1
            if count and done >= count:
                break
        pieces.append(string[last:])
        return "".join(pieces), done

    def sub(self, repl: str | Callable[[Match], str], string: str, count: int = 0) -> str:
        return self.subn(repl, string, count)[0]

    def __repr__(self) -> str:
        return f"linear_regex.compile({self.pattern!r})"


class BoundedPattern:
    """A pattern RE2 cannot run (a lookaround or backreference RE2 lacks), kept in Python's `re` but only
    ever applied to windows of WINDOW characters: its time per window is bounded, so linear overall. A match
    longer than OVERLAP across a window boundary can be missed; `$` also matches at a window's end."""

    engine = "re"
    __slots__ = ("pattern", "flags", "_re", "groupindex", "groups")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._re = re.compile(pattern, flags)
        self.pattern, self.flags, self.groupindex, self.groups = pattern, flags, self._re.groupindex, self._re.groups

    def _windows(self, string: str) -> Iterator[tuple[int, int]]:
        if len(string) <= WINDOW:
            yield 0, len(string)
            return
        for start in range(0, len(string), WINDOW - OVERLAP):
            yield start, min(start + WINDOW, len(string))
            if start + WINDOW >= len(string):
                return

    def search(self, string: str) -> re.Match[str] | None:
        for start, end in self._windows(string):
            found = self._re.search(string, start, end)
            if found:
                return found
        return None

    def match(self, string: str) -> re.Match[str] | None:
        return self._re.match(string, 0, min(len(string), WINDOW))

    def fullmatch(self, string: str) -> re.Match[str] | None:
        return self._re.fullmatch(string) if len(string) <= WINDOW else None

    def finditer(self, string: str) -> Iterator[re.Match[str]]:
        after = 0
        for start, end in self._windows(string):
            for found in self._re.finditer(string, max(start, after), end):
                if found.end() < end or end == len(string):  # one cut by the window's end: the next window
                    after = found.end() if found.end() > found.start() else found.end() + 1
                    yield found

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        expand = repl if callable(repl) else (lambda m: m.expand(repl))
        pieces, last, done = [], 0, 0
        for found in self.finditer(string):
            pieces += [string[last:found.start()], expand(found)]
            last, done = found.end(), done + 1
            if count and done >= count:
                break
        pieces.append(string[last:])
        return "".join(pieces)

    def __repr__(self) -> str:
        return f"linear_regex.BoundedPattern({self.pattern!r})"


Pattern = Union[LinearPattern, BoundedPattern]


def _re2_program(pattern: str, flags: int) -> Any | None:
    if flags & ~(re.IGNORECASE | re.MULTILINE | re.DOTALL | re.UNICODE | re.ASCII):
        return None  # re.VERBOSE and friends: RE2 has no such mode
    prefix = "".join(letter for flag, letter in _INLINE_FLAGS if flags & flag)
    source = (f"(?{prefix})" if prefix else "") + spell_for_re2(pattern)
    try:
        program = _re2.RE2(source.encode("utf-8", "surrogatepass"), _OPTIONS)
    except Exception:  # noqa: BLE001 - pybind raises its own error type for a bad pattern
        return None
    return program if program.ok() else None


@cache
def compile(pattern: str, flags: int = 0) -> Pattern:  # noqa: A001 - the re module's name, on purpose
    """The pattern in RE2 (linear time); when RE2 cannot run it, Python's `re` on bounded windows."""
    program = _re2_program(pattern, flags)
    return LinearPattern(pattern, flags, program) if program is not None else BoundedPattern(pattern, flags)


@cache
def compile_search(pattern: str, flags: int = 0) -> Pattern:
    """compile() for a pattern only searched for and read by its groups (every catalogue pattern): RE2
    after rewriting a trailing lookahead or a leading one-character lookbehind."""
    program = next((p for spelling in _search_spellings(pattern) if (p := _re2_program(spelling, flags))), None)
    return LinearPattern(pattern, flags, program) if program is not None else BoundedPattern(pattern, flags)


def _search_spellings(pattern: str) -> Iterator[str]:
    """The pattern as written, then with the lookarounds RE2 lacks rewritten (for a pattern only searched for)."""
    yield pattern
    if (rewritten := for_search(pattern)) != pattern:
        yield rewritten


def compile_linear(pattern: str, flags: int = 0) -> LinearPattern:
    """compile() for the project's own patterns, which must run in RE2: a ValueError otherwise."""
    compiled = compile(pattern, flags)
    if not isinstance(compiled, LinearPattern):
        raise ValueError(f"not a linear-time (RE2) pattern: {pattern!r}")
    return compiled


class SearchSet:
    """Which of many patterns a text holds, in one pass: RE2's set matching scans the text once for all the
    patterns RE2 runs, however many; the few it cannot run (BoundedPattern) are searched one by one. The
    answer is the same as searching each pattern in turn (catalogue patterns against every retained line
    were a quarter of a big log's time)."""

    def __init__(self, patterns: list[str]) -> None:
        self._set = re2.Set.SearchSet(_OPTIONS)
        self._in_set: list[int] = []  # the set's own numbering -> the caller's
        self._others: list[tuple[int, Pattern]] = []
        for number, pattern in enumerate(patterns):
            if self._add(pattern):  # RE2 takes it here exactly when compile_search runs it in RE2
                self._in_set.append(number)
            else:
                self._others.append((number, compile_search(pattern)))
        self._set.Compile()

    def _add(self, pattern: str) -> bool:
        """Add the pattern as compile_search runs it (with its lookaround rewritten when RE2 needs that)."""
        for spelling in _search_spellings(pattern):
            try:
                self._set.Add(spell_for_re2(spelling))
                return True
            except Exception:  # noqa: BLE001, S112 - pybind raises its own error type for a refused pattern
                continue
        return False

    def matching(self, text: str) -> list[int]:
        """The numbers (in the order given) of the patterns found in `text`."""
        found = [self._in_set[n] for n in self._set.Match(text) or ()] if self._in_set else []
        found += [number for number, pattern in self._others if pattern.search(text)]
        return sorted(found)
