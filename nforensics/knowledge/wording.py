"""Message templates: a signature's message with its run-specific parts masked, matched by weighted token
containment instead of one regex, so the same failure printed without its code, with an extra detail key,
re-wrapped or re-cased, is still recognised (at a lower confidence than a printed code).

A template's tokens are the words of the masked message. Anchor tokens (identifiers with `_` or inner
capitals, env vars, flags, API and pass names) weigh more than prose words: they change far more slowly
between releases and rarely occur by chance. A line matches when the weight of the template tokens it
contains reaches THRESHOLD of the template's total weight.
"""

from __future__ import annotations

import re
from functools import cache

from nforensics.masking import mask
from nforensics.records import ERROR_LEVELS

THRESHOLD = 0.8
MIN_TOKENS = 5  # shorter templates are too generic to recognise anything by resemblance
ANCHOR_WEIGHT = 3.0
CUT_HEAD_SHARE = 0.4  # a line cut short must still show this share of the template's weight
OWN_SHARE = 0.5  # ... and a whole line this share of the words only this signature's templates have
_TOKEN = re.compile(r"--?[A-Za-z][\w-]*|[A-Za-z_][\w.]*[A-Za-z0-9_]|[A-Za-z]{3,}")
_STOPWORDS = frozenset(
    "the and for with was were are not but this that from into has have had been its can may will would "
    "should than then there which when where while please see more also use using".split()
)


# A record's level as its producer prints it (`ERROR NRT:nrt_load`, `[WARN]`): the line's furniture, like its
# time. In capitals it would weigh as an anchor and make every error record of one function resemble each other.
_LEVELS = ERROR_LEVELS | {"WARN", "WARNING", "INFO", "DEBUG", "TRACE"}


# What masking put in place of a value (`<path>`, `<hex>`, `<n>`, a template's `<*>`): no word of the message.
_PLACEHOLDER = re.compile(r"<[a-z*]+>")


def _is_anchor(token: str) -> bool:
    return "_" in token or token.startswith("-") or "." in token or any(c.isupper() for c in token[1:])


def tokens(text: str) -> dict[str, float]:
    """Weighted content tokens of a message after masking (lower-cased keys)."""
    weights: dict[str, float] = {}
    for token in _TOKEN.findall(_PLACEHOLDER.sub(" ", mask(text))):
        key = token.lower().strip(".")
        if len(key) < 3 or key in _STOPWORDS or token in _LEVELS:
            continue
        weights[key] = max(weights.get(key, 0.0), ANCHOR_WEIGHT if _is_anchor(token) else 1.0)
    return weights


_TEMPLATE_TOKENS: dict[str, tuple[tuple[str, float], ...]] = {}


def template_tokens(template: str) -> tuple[tuple[str, float], ...]:
    known = _TEMPLATE_TOKENS.get(template)
    if known is None:
        known = _TEMPLATE_TOKENS[template] = tuple(tokens(template).items())
    return known


def know_template_tokens(known: dict[str, tuple[tuple[str, float], ...]]) -> None:
    """Templates' tokens an earlier run computed with this very tokeniser (nforensics/knowledge/matcher.py keeps
    them in the disk cache): tokenising every template costs a cold run more than reading them."""
    for template, pairs in known.items():
        _TEMPLATE_TOKENS.setdefault(template, pairs)


def resemblance(template: str, line_tokens: dict[str, float]) -> float:
    """The share of the template's token weight found in the line (0 when the template is too short)."""
    wanted = template_tokens(template)
    if len(wanted) < MIN_TOKENS:
        return 0.0
    total = sum(weight for _, weight in wanted)
    return sum(weight for token, weight in wanted if token in line_tokens) / total


def shows_own_words(own: tuple[tuple[str, float], ...], line_tokens: dict[str, float]) -> bool:
    """The line shows half of a template's own words (the prose no other signature's template has,
    KnowledgeBase.own_words), when it has any: "NRT:nrt_allocate_neuron_cores ... cores busy" is not
    "... cores are not contiguous"."""
    total = sum(weight for _, weight in own)
    return not own or sum(weight for token, weight in own if _said(token, line_tokens)) >= OWN_SHARE * total


def _said(word: str, line_tokens: dict[str, float]) -> bool:
    """The word, or another form of it that starts alike ("alloc" and "allocate")."""
    return word in line_tokens or any(other.startswith(word) or word.startswith(other)
                                      for other in line_tokens if min(len(other), len(word)) >= 4)


_WORD = re.compile(r"\w+")


def last_word(text: str) -> str | None:
    """The line's last word, lower-cased, however short (None when it has none): where a line cut short stops."""
    words = _WORD.findall(mask(text).lower())
    return words[-1] if words else None


@cache
def template_words(template: str) -> frozenset[str]:
    """Every word of the masked template, lower-cased, stopwords and short words too (what a cut may stop in)."""
    return frozenset(_WORD.findall(mask(template).lower()))


def cut_resemblance(template: str, line_tokens: dict[str, float], last: str | None) -> float:
    """Resemblance of a line cut short (the last line of a paste that stops mid-line) to the head of the
    template: the template up to the last of its tokens the line has, when that head is a real part of it
    and the line stops inside the template (`last`, its last word or the part of one before the cut, starts
    a word of the template): a line that goes on in words of its own is another message, not this one cut."""
    wanted = template_tokens(template)
    found = [i for i, (token, _) in enumerate(wanted) if token in line_tokens]
    if len(wanted) < MIN_TOKENS or not found or last is None:
        return 0.0
    if not any(word.startswith(last) for word in template_words(template)):
        return 0.0
    head = wanted[: found[-1] + 1]
    head_weight = sum(weight for _, weight in head)
    if len(head) < MIN_TOKENS or head_weight < CUT_HEAD_SHARE * sum(weight for _, weight in wanted):
        return 0.0
    return sum(weight for token, weight in head if token in line_tokens) / head_weight
