"""Named word lists (knowledge/vocabulary.toml) that the families' word groups use as "@name"."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 (Neuron DLAMI venvs)
    import tomli as tomllib

VOCABULARY_FILE = Path(__file__).resolve().with_name("vocabulary.toml")


@cache
def _lists() -> dict[str, list[str]]:
    return tomllib.loads(VOCABULARY_FILE.read_text(encoding="utf-8"))


def named(name: str) -> list[str]:
    """The words of one named list."""
    return _lists()[name]


def expand(groups: list[list[str]]) -> list[list[str]]:
    """Each "@name" in a group replaced by the words of that list; a ValueError names an unknown list."""
    lists = _lists()
    expanded = []
    for group in groups:
        words: list[str] = []
        for word in group:
            if not word.startswith("@"):
                words.append(word)
            elif word[1:] in lists:
                words += lists[word[1:]]
            else:
                raise ValueError(f"no word list {word!r} in knowledge/vocabulary.toml (it has {', '.join(sorted(lists))})")
        expanded.append(words)
    return expanded
