"""gitleaks' published default rules (nforensics/redaction/gitleaks.json, regenerated from gitleaks'
config/gitleaks.toml by tools/gitleaks_rules.py): ~220 provider token formats with gitleaks' own keywords,
entropy thresholds and allowlists, loaded once and put after the Neuron rules."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

import re2

from nforensics.redact.rules import Rule, neuron_rules

GITLEAKS_RULES = Path(__file__).parent.parent / "redaction" / "gitleaks.json"

# gitleaks rules a Neuron rule does better: private-key masks the header and footer too (ours keeps them
# readable and masks to the end of a cut log).
_SUPERSEDED = {"private-key"}


# gitleaks ends most tokens at a quote, whitespace or `;`, as source code does; a log also prints a token
# before `,` `)` `]` `}` `>` `&` `|` (a Python repr, a dict, a query string, a shell pipe), and the token
# must end there too (bench/fuzz.py found `SG.<key>, ...` surviving).
_CODE_END = r"""(?:[\x60'"\s;]|\\[nr]|$)"""
_LOG_END = r"""(?:[\x60'"\s;,)\]}>&|]|\\[nr]|$)"""


def _gitleaks_rule(entry: dict) -> Rule:
    allowlists = []
    for allow in entry.get("allowlists", ()):
        allowlists.append({
            "target": allow.get("regexTarget", "secret"),
            "and": allow.get("condition", "OR").upper() == "AND",
            "regexes": tuple(allow.get("regexes", ())),  # compiled on first use (cached_regex)
            "stopwords": tuple(w.lower() for w in allow.get("stopwords", ())),
        })  # fmt: skip
    return Rule(
        entry["id"], entry["regex"].replace(_CODE_END, _LOG_END), cue=tuple(k.lower() for k in entry["keywords"]),
        gitleaks=True, wraps=True, python_pattern=entry["python"].replace(_CODE_END, _LOG_END),
        secret_group=entry.get("secretGroup", 0), entropy=entry.get("entropy", 0.0), allowlists=tuple(allowlists),
    )  # fmt: skip


@lru_cache(maxsize=1)
def base_rules() -> tuple[tuple[Rule, ...], dict]:
    """The Neuron rules, then gitleaks' (a Neuron rule wins where both find the same secret), and
    gitleaks' global allowlist."""
    data = json.loads(GITLEAKS_RULES.read_text(encoding="utf-8"))
    allow = data.get("allowlist", {})
    global_allow = {
        "regexes": tuple(allow.get("regexes", ())),
        "stopwords": tuple(w.lower() for w in allow.get("stopwords", ())),
    }
    gitleaks = [_gitleaks_rule(e) for e in data["rules"] if e["id"] not in _SUPERSEDED]
    return tuple(neuron_rules() + gitleaks), global_allow


@lru_cache(maxsize=1)
def cue_index() -> tuple[Any, tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """Every rule's cue words in one RE2 search set (which reports every word found, overlapping ones too),
    for each word the base rules that wait for it, and the base rules that wait for no word (their cue is a
    test, or nothing). A text is scanned once for all ~620 words, and only the rules a found word wakes (and
    the unconditional ones) are tried, instead of every rule on every text."""
    words: dict[str, int] = {}
    woken: list[list[int]] = []
    unconditional: list[int] = []
    for rank, rule in enumerate(base_rules()[0]):
        if not isinstance(rule.cue, tuple) or not rule.cue:
            unconditional.append(rank)
            continue
        for word in rule.cue:
            if word not in words:
                words[word] = len(words)
                woken.append([])
            woken[words[word]].append(rank)
    search = re2.Set.SearchSet()
    for word in words:
        search.Add(re2.escape(word))
    search.Compile()
    return search, tuple(tuple(ranks) for ranks in woken), tuple(unconditional)


def entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values()) if text else 0.0


@lru_cache(maxsize=None)
def cached_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def allowed(allow: dict, secret: str, match: str, line: str) -> bool:
    target = {"match": match, "line": line}.get(allow.get("target", "secret"), secret)
    regex = any(cached_regex(r).search(target) for r in allow["regexes"])
    stop = any(w in secret.lower() for w in allow["stopwords"])
    if allow.get("and"):
        return (regex or not allow["regexes"]) and (stop or not allow["stopwords"])
    return regex or stop
