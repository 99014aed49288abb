"""The words a line must contain (or start with) for a grammar's rules to parse it, read off the grammar.

Running a lark parser on every line of a big log costs tens of microseconds a line; a plain substring test
costs nanoseconds. `may_parse(grammar, start, text)` is such a test, and it is derived, not kept by hand:
for every alternative of the start rule, one set of words is necessary (the text cannot parse without one
of them), found by walking the terminals' regular expressions (nforensics/linear_regex/necessary.py). A
test that is only ever a necessary condition can make a line skip a parser that would have failed anyway,
never one that would have matched, and it follows the grammar when the grammar changes.
`first_words(grammar, rules)` is the same for where a line starts: the words one of which begins every line
those rules parse (the dispatch of plain lines).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from lark import Lark
from lark.grammar import NonTerminal, Terminal
from lark.lexer import PatternStr

from nforensics.linear_regex.necessary import Words, regex_words, sre_parse, strongest, union
from nforensics.parse.grammars import parser, shipped


def _pattern_prefixes(items: Any) -> frozenset[str] | None:
    """The words every match of a parsed regex sequence starts with (one of them), or None when unknown."""
    run: list[str] = []
    for op, arg in items:
        if op is sre_parse.LITERAL:
            run.append(chr(arg))
            continue
        if run:
            break
        if op is sre_parse.MAX_REPEAT and arg[0] == 0 and _is_space(arg[2]):
            continue  # leading spaces: the callers strip them
        if op is sre_parse.SUBPATTERN and not arg[1] & sre_parse.SRE_FLAG_IGNORECASE:
            return _pattern_prefixes(arg[3])
        if op is sre_parse.BRANCH:
            branches = [_pattern_prefixes(branch) for branch in arg[1]]
            return None if any(b is None for b in branches) else frozenset().union(*branches)  # type: ignore[arg-type]
        if op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT) and arg[0] >= 1:
            return _pattern_prefixes(arg[2])
        return None
    return frozenset(["".join(run)]) if run else None


def _is_space(items: Any) -> bool:
    return list(items) in ([(sre_parse.IN, [(sre_parse.CATEGORY, sre_parse.CATEGORY_SPACE)])],
                           [(sre_parse.LITERAL, ord(" "))])


def _first_of(words: frozenset[str]) -> tuple[str, ...]:
    """Without the words that start with another of the set: a line starting with the longer starts with both."""
    return tuple(sorted(w for w in words if not any(v != w and w.startswith(v) for v in words)))


class _GrammarWords:
    def __init__(self, grammar: Lark) -> None:
        self.rules: dict[str, list[Any]] = {}
        for rule in grammar.rules:
            self.rules.setdefault(rule.origin.name, []).append(rule.expansion)
        self.terminals = {t.name: t for t in grammar.terminals}
        self.visiting: set[str] = set()

    @cache  # noqa: B019 - one instance per grammar, kept for the process (see _words_of)
    def symbol(self, name: str, is_terminal: bool) -> Words | None:
        if is_terminal:
            pattern = self.terminals[name].pattern
            if isinstance(pattern, PatternStr):
                value = pattern.value
                return Words(folded=frozenset([value.lower()])) if "i" in pattern.flags else Words(exact=frozenset([value]))
            return regex_words(pattern.to_regexp(), "i" in pattern.flags)
        if name in self.visiting:  # a recursive rule: nothing is known to be necessary through it
            return None
        self.visiting.add(name)
        try:
            alternatives = [self.expansion(expansion) for expansion in self.rules.get(name, [])]
        finally:
            self.visiting.discard(name)
        return None if not alternatives or any(a is None for a in alternatives) else union(alternatives)  # type: ignore[arg-type]

    def prefixes(self, name: str, is_terminal: bool, skip: frozenset[str]) -> frozenset[str] | None:
        if is_terminal:
            pattern = self.terminals[name].pattern
            if "i" in pattern.flags:
                return None
            if isinstance(pattern, PatternStr):
                return frozenset([pattern.value])
            parsed = sre_parse.parse(pattern.to_regexp())
            return None if parsed.state.flags & sre_parse.SRE_FLAG_IGNORECASE else _pattern_prefixes(parsed)
        if name in self.visiting:
            return None
        self.visiting.add(name)
        try:
            found = []
            for expansion in self.rules.get(name, []):
                first = next((s for s in expansion if s.name not in skip), None)
                found.append(None if first is None else self.prefixes(first.name, isinstance(first, Terminal), skip))
        finally:
            self.visiting.discard(name)
        return None if not found or any(f is None for f in found) else frozenset().union(*found)  # type: ignore[arg-type]

    def expansion(self, symbols: list[Any]) -> Words | None:
        found = [self.symbol(s.name, isinstance(s, Terminal)) for s in symbols if isinstance(s, (Terminal, NonTerminal))]
        return strongest([w for w in found if w is not None])


@cache
def _words_of(grammar: str) -> _GrammarWords:
    return _GrammarWords(parser(grammar))


@cache
def start_words(grammar: str, start: str) -> Words | None:
    """The necessary words of start rule `start` of grammar `grammar` (None: it can parse text with none).
    Read from the tables tools/build_parse_tables.py ships when they are current, else derived here."""
    stored = shipped(grammar, "words")
    if stored is not None and start in stored:
        value = stored[start]
        return None if value is None else Words(frozenset(value[0]), frozenset(value[1]))
    return _words_of(grammar).symbol(start, False)


def rule_tables(grammar: Lark) -> dict[str, dict]:
    """Every rule's necessary words and first words, as plain data for tools/build_parse_tables.py."""
    derived = _GrammarWords(grammar)
    words: dict[str, list | None] = {}
    prefixes: dict[str, list | None] = {}
    for name in derived.rules:
        found = derived.symbol(name, False)
        words[name] = None if found is None else [sorted(found.exact), sorted(found.folded)]
        first = derived.prefixes(name, False, frozenset(_SKIPPED))
        prefixes[name] = None if first is None else sorted(first)
    return {"words": words, "prefixes": prefixes}


_SKIPPED = ("_SP",)  # what a line may start with before its first words: leading spaces


@cache
def first_words(grammar: str, rules: tuple[str, ...]) -> tuple[str, ...] | None:
    """The words one of which every line that `rules` of `grammar` parse starts with (after leading
    spaces), for `str.startswith`; None when some alternative can start anywhere."""
    stored = shipped(grammar, "prefixes")
    if stored is not None and all(rule in stored for rule in rules):
        found = [None if stored[rule] is None else frozenset(stored[rule]) for rule in rules]
    else:
        words = _words_of(grammar)
        found = [words.prefixes(rule, False, frozenset(_SKIPPED)) for rule in rules]
    return None if any(f is None for f in found) else _first_of(frozenset().union(*found))  # type: ignore[arg-type]


def may_parse(grammar: str, start: str, text: str) -> bool:
    """False only when `text` cannot parse as `start`: a quick test to run before the parser."""
    words = start_words(grammar, start)
    return words is None or words.found_in(text)
