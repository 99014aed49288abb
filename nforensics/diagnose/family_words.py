"""How a family rule's words are found in a log's failure lines (knowledge/families/*.toml `words` and
`context_words`): at the start of a token, in any case, and whole where the rule needs the run's setting."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from nforensics.knowledge.vocabulary import named

CAMEL_MIN = 10  # letters a word needs to be found inside a CamelCase name (a class name, not "compil" or "timeout")
_CLASS_SUFFIXES = frozenset({"error", "exception", "warning", "failure", "interrupt"})


@cache
def neuron_context() -> frozenset[str]:
    """knowledge/vocabulary.toml's @neuron_context: a group that names it is satisfied by a printed Neuron code."""
    return frozenset(named("neuron_context"))


def present(groups: list[list[str]], blob: str) -> bool:
    """Every group has a word somewhere in the text, as a substring: necessary for a match, and a plain
    substring test spares compiling the patterns of groups that cannot match (a cold run compiles each once)."""
    return all(any(word in blob for word in group) for group in groups)


@cache
def rule_words(group: tuple[str, ...]) -> re.Pattern[str]:
    """Any word of a group, in any case, where a token starts ("compil" in "compilation"), not inside another
    word ("ofi" is not in "profile"). A name of CAMEL_MIN letters or more also starts where a capital follows
    a lower-case letter ("neuronconfig" in LlamaNeuronConfig), except the suffixes of exception class names
    (the "Error" of AssertionError is no word of the message). One alternation a group: a log with thousands
    of error lines is read once a group, not once a word."""
    inner = [w for w in group if len(w) >= CAMEL_MIN and w not in _CLASS_SUFFIXES]
    pattern = r"(?<![A-Za-z0-9])" + any_of(group)
    return re.compile(pattern + (r"|(?<=[a-z])(?=[A-Z])" + any_of(inner) if inner else ""))


@cache
def whole_words(group: tuple[str, ...]) -> re.Pattern[str]:
    """Any word of a group as a whole word, in any case: "neuron" in aws-neuron, Neuron Runtime or
    aws.amazon.com/neuron, not in "neurons" or "neuronal" (which any ML log may say)."""
    return re.compile(r"(?<![A-Za-z0-9])" + any_of(group) + r"(?![A-Za-z])")


def any_of(words: Sequence[str]) -> str:
    """One case-insensitive alternation, longest words first (so "neuronx" is tried before "neuron")."""
    return "(?i:" + "|".join(map(re.escape, sorted(words, key=len, reverse=True))) + ")"
