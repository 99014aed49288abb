"""Spelling a Python regular expression for RE2: the escapes it writes otherwise, and the two lookarounds
that can be rewritten for a search without changing any group (nforensics/linear_regex/__init__.py says
which patterns get which)."""

from __future__ import annotations

import re


def top_groups(pattern: str) -> list[tuple[int, int]]:
    """(start, end) of each top-level parenthesised group, end exclusive; [] when the pattern is odd."""
    groups, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "^":
                i += 1
            if pattern[i + 1:i + 2] == "]":  # a ']' right after '[' or '[^' is a literal
                i += 1
        elif ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return []
            if depth == 0:
                groups.append((start, i + 1))
        i += 1
    return groups if depth == 0 and not in_class else []


def spell_for_re2(pattern: str) -> str:
    r"""Python escapes RE2 spells otherwise: \Z is \z, \uXXXX and \UXXXXXXXX are \x{...}."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch != "\\" or i + 1 >= len(pattern):
            out.append(ch)
            i += 1
            continue
        nxt = pattern[i + 1]
        if nxt == "Z":
            out.append(r"\z")
            i += 2
        elif nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", pattern[i + 2:i + 6]):
            out.append(r"\x{" + pattern[i + 2:i + 6] + "}")
            i += 6
        elif nxt == "U" and re.fullmatch(r"[0-9a-fA-F]{8}", pattern[i + 2:i + 10]):
            out.append(r"\x{" + pattern[i + 2:i + 10] + "}")
            i += 10
        else:
            out.append(pattern[i:i + 2])
            i += 2
    return "".join(out)


_ONE_CHAR = re.compile(r"\[\^?(?:\\.|[^\\\]])+\]|\\[dDsSwW]|\\.|[^\\\[\]()|*+?{}^$.]")


def for_search(pattern: str) -> str:
    """Rewrite the two lookarounds whose removal changes no group for search(): a lookahead that ends the
    pattern consumes its text instead; a one-character negative lookbehind that starts it becomes
    `(?:^|[^...])`."""
    groups = top_groups(pattern)
    if not groups and "(" in pattern:
        return pattern
    if groups and groups[-1][1] == len(pattern) and pattern.startswith("(?=", groups[-1][0]):
        start = groups[-1][0]
        pattern = pattern[:start] + "(?:" + pattern[start + 3:]
    if pattern.startswith("(?<!") and groups and groups[0][0] == 0:
        inner = pattern[4:groups[0][1] - 1]
        if _ONE_CHAR.fullmatch(inner):
            if inner.startswith("[^"):
                negated = "[" + inner[2:]
            elif inner.startswith("["):
                negated = "[^" + inner[1:]
            else:
                negated = f"[^{inner}]"
            pattern = f"(?:^|{negated})" + pattern[groups[0][1]:]
    return pattern
