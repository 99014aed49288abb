"""Offline redaction of secrets and identities in logs, reports, bundle files and CI outputs.

One `Redactor` per report: the same secret becomes the same placeholder (`[redacted:ipv4-1]`) in every
text it sees, so a maintainer can still follow "the host that failed" across the log, the report and the
bundle. Nothing here ever calls the network: detected keys are masked, never verified.

Two rule sets (docs/report.md, "Redaction", says why these): gitleaks' published default rules
(nforensics/redact/gitleaks.py), run by google-re2 (linear time) when it is installed, and the Neuron rules
(nforensics/redact/rules.py) for what a Neuron log carries and gitleaks does not target. This module finds
what they match, resolves overlaps and masks.

Across lines: a PEM block is masked line by line; a secret wrapped onto the next line (a terminal's
wrapping, a key at the end of one line and its value on the next) is found by scanning each line break
where text continues on both sides; and every secret found once is masked wherever its value appears
again, even where no rule would see it (a bare password later in the log, a fragment of a wrapped key).

What must never be touched: error codes (NCC_IXLV002), barrier names (LocalSendRecv-0_476_sr_cb_begin),
instruction ids (I-14774-0-PWP), tensor shapes, versions (2.23.6484.0+3b612583, 2.16.7.0) and MODULE_
cache hashes. Versions are the hard case: `2.16.7.0` is also a valid IPv4 address, see `_not_a_version` in rules.py.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from nforensics.walk import map_strings
from nforensics.redact.gitleaks import allowed, base_rules, cached_regex, cue_index, entropy
from nforensics.redact.rules import KINDS, SECRET_KEY_NAME, SHAPES, Rule, neuron_value

PLACEHOLDER_PREFIX = "[redacted:"
PLACEHOLDER = re.compile(re.escape(PLACEHOLDER_PREFIX) + r"[a-z0-9-]+\]")

_USER_HINTS = re.compile(
    r"(?:/home/|/Users/)(?P<u>[^/\s\"':]+)|/tmp/(?P<w>[^/\s\"':]+)/neuroncc_compile_workdir"
    r"|\b(?:USER|LOGNAME|USERNAME)=(?P<e>[\w.-]+)"
)
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-.~%")
_JUNCTION_CONTEXT = 300  # characters on each side of a line break scanned for a wrapped secret
MIN_KNOWN = 8  # values at least this long are masked wherever they appear again
_MAX_KNOWN = 4096
BLOCK_CHARS = 1 << 18  # redact_lines: text scanned at once
_PEM_MAX_LINES = 2000  # a key block longer than this is not held back waiting for its footer


@dataclass
class _Span:
    start: int
    end: int
    kind: str
    rank: int
    value: str  # what the placeholder stands for (a wrapped secret without its line break)


def placeholder_text(kind: str, number: int) -> str:
    """The placeholder of the `number`-th value of a kind a run masked: `[redacted:ipv4-2]`."""
    return f"{PLACEHOLDER_PREFIX}{kind}-{number}]"


@dataclass
class Redactor:
    """Masks secrets with stable placeholders and counts what it masked, by kind.

    `enabled=False` (`--no-redact`) passes text through unchanged and counts nothing.
    """

    enabled: bool = True
    placeholders: dict[str, str] = field(default_factory=dict)  # secret value -> placeholder
    counts: Counter = field(default_factory=Counter)  # kind -> occurrences masked
    _per_kind: Counter = field(default_factory=Counter)
    _known_users: set[str] = field(default_factory=set)  # from /home/<u>, USER=<u>, ...: masked in /tmp/<u>/ too
    _known: dict[str, str] = field(default_factory=dict)  # secret value (or fragment) -> kind: masked anywhere
    _issued: dict[str, str] = field(default_factory=dict)  # placeholder -> kind, to count text masked earlier
    _user_rule_for: tuple[frozenset[str], Rule | None] = (frozenset(), None)

    def sharing(self) -> Redactor:
        """A redactor with the same placeholders and known secrets but its own counts: the counts of one
        output (the report) while the bundle around it keeps placeholders consistent."""
        return Redactor(
            enabled=self.enabled, placeholders=self.placeholders, _per_kind=self._per_kind,
            _known_users=self._known_users, _known=self._known, _issued=self._issued,
        )  # fmt: skip

    def learn(self, *texts: str) -> None:
        """Note the user names these texts reveal, so `/tmp/<u>/` is masked even before `/home/<u>` shows up."""
        for text in texts:
            if "/" not in text and "=" not in text:
                continue
            for m in _USER_HINTS.finditer(text):
                self._known_users.update(n for n in m.groupdict().values() if n and n[0] not in "[<$%{")

    def placeholder(self, kind: str, value: str) -> str:
        existing = self.placeholders.get(value)
        if existing is None:
            self._per_kind[kind] += 1
            existing = self.placeholders[value] = placeholder_text(kind, self._per_kind[kind])
            self._issued[existing] = kind
        return existing

    # ------------------------------------------------------------------ finding secrets

    def _user_rule(self) -> Rule | None:
        """/tmp/<u>/... and /fsx/<u>/... for every user seen elsewhere, whatever follows it."""
        users = frozenset(self._known_users)
        if users and self._user_rule_for[0] != users:
            names = "|".join(re.escape(u) for u in sorted(users, key=len, reverse=True))
            rule = Rule("user", rf"/(?:tmp|fsx|efs)/(?P<v>{names})(?=/)", cue=("/tmp/", "/fsx/", "/efs/"))
            self._user_rule_for = (users, rule)
        return self._user_rule_for[1] if users else None

    def _woken(self, lower: str) -> Iterator[tuple[int, Rule]]:
        """The rules whose cue words the text holds, the rules that wait for none, and the user rule, by rank."""
        rules, _ = base_rules()
        cues, woken, unconditional = cue_index()
        ranks = set(unconditional)
        for word in cues.Match(lower) or ():  # None when no cue word is in the text
            ranks.update(woken[word])
        for rank in sorted(ranks):
            yield rank, rules[rank]
        user = self._user_rule()
        if user is not None and any(word in lower for word in user.cue):  # type: ignore[union-attr]
            yield len(rules), user

    def _find(self, text: str, rank_offset: int = 0, wrapping: bool = False) -> list[_Span]:
        """Every rule's secrets in `text`, with the rule's rank (lower wins an overlap); with `wrapping`
        only the rules of secrets a line break may cut."""
        _, global_allow = base_rules()
        spans: list[_Span] = []
        for rank, rule in self._woken(text.lower()):
            if wrapping and not rule.wraps:
                continue
            if not isinstance(rule.cue, tuple) and not rule.cue(text):
                continue
            for match in rule.compiled().finditer(text):
                found = self._secret(rule, match, text, global_allow)
                if found is not None:
                    spans.append(_Span(found[1], found[2], found[0], rank + rank_offset, text[found[1] : found[2]]))
        return spans

    @staticmethod
    def _secret(rule: Rule, match: Any, text: str, global_allow: dict) -> tuple[str, int, int] | None:
        """(kind, start, end) of the secret inside a match, or None when the rule's checks reject it."""
        if not rule.gitleaks:
            start, end = match.span("v")
            value = text[start:end]
            if start < 0 or not value.strip() or value.startswith(PLACEHOLDER_PREFIX):
                return None
            if rule.accept and not rule.accept(value, start, end, text):
                return None
            return next((k for k, shape in SHAPES if shape.fullmatch(value)), rule.kind), start, end
        # gitleaks: the secret group, else the first non-empty group, else the whole match
        group = rule.secret_group or next((i for i in range(1, rule.compiled().groups + 1) if match.start(i) >= 0
                                           and match.end(i) > match.start(i)), 0)  # fmt: skip
        start, end = match.span(group)
        secret = text[start:end]
        if not secret or PLACEHOLDER_PREFIX in secret or PLACEHOLDER.search(match.group(0)):
            return None
        if rule.entropy and entropy(secret) <= rule.entropy:
            return None
        if neuron_value(secret):
            return None
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.start())
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        if (any(cached_regex(r).search(secret) for r in global_allow["regexes"])
                or any(w in secret.lower() for w in global_allow["stopwords"])):
            return None
        if any(allowed(allow, secret, match.group(0), line) for allow in rule.allowlists):
            return None
        return rule.kind, start, end

    def _junctions(self, text: str, rank_offset: int, ends: set[int]) -> list[_Span]:
        """Secrets a line break cuts in two: `...TOKEN=abc` / `def...` or `KEY=` / `value`.

        A secret of fixed shape (`ghp_` + 36) is taken when the joined text completes it. One that a rule
        already found whole on the line above (`ends`) is extended only by a line that is nothing but its
        continuation after a long line, as a terminal wraps a long token: `Nodename: ip-...` followed by
        `ubuntu@ip-...:~$ ls` or by the next timestamp is two records, not one secret."""
        spans: list[_Span] = []
        position = text.find("\n")
        while position > 0:
            after = position + 1
            left_ok = text[position - 1] in _TOKEN_CHARS
            # the next line's first token (a key at the end of a line may have its value indented below)
            skip = 0
            if text[position - 1] in "=:":
                while after + skip < len(text) and text[after + skip] in " \t":
                    skip += 1
            if left_ok and after + skip < len(text) and text[after + skip] in _TOKEN_CHARS:
                line_start = max(text.rfind("\n", 0, position) + 1, position - _JUNCTION_CONTEXT)
                right_end = text.find("\n", after)
                right_end = min(len(text) if right_end < 0 else right_end, after + skip + _JUNCTION_CONTEXT)
                left, right = text[line_start:position], text[after + skip : right_end]
                joined = left + right
                for span in self._find(joined, rank_offset, wrapping=True):
                    if span.start < len(left) < span.end:  # a secret across the break
                        if position in ends and not (
                            position - text.rfind("\n", 0, position) > 60 and len(left) - span.start >= 16
                            and not any(c.isspace() for c in right.rstrip())
                        ):
                            continue
                        start, end = line_start + span.start, after + skip + span.end - len(left)
                    elif span.start == len(left) and text[position - 1] in "=:" and re.search(
                        rf"{SECRET_KEY_NAME}[\"']?\s*[=:]$", left, re.I
                    ):  # the value of a key that ends the line above
                        start, end = after + skip, after + skip + span.end - len(left)
                    else:
                        continue
                    spans.append(_Span(start, end, span.kind, span.rank, span.value))
            position = text.find("\n", position + 1)
        return spans

    def _literal(self, text: str, rank: int) -> list[_Span]:
        """Secrets found before (in this text or another), wherever they appear again."""
        spans = []
        for value, kind in self._known.items():
            if value not in text:
                continue
            position = text.find(value)
            while position >= 0:
                spans.append(_Span(position, position + len(value), kind, rank, value))
                position = text.find(value, position + len(value))
        return spans

    def _resolve(self, text: str, spans: list[_Span]) -> list[_Span]:
        """Non-overlapping spans: the best-ranked rule keeps its span; what other rules found outside it
        is still masked, piece by piece. Placeholders already in the text are never touched."""
        taken: list[tuple[int, int]] = []  # sorted, disjoint
        if PLACEHOLDER_PREFIX in text:
            taken = [m.span() for m in PLACEHOLDER.finditer(text)]
        accepted: list[_Span] = []
        for span in sorted(spans, key=lambda s: (s.rank, s.start, -s.end)):
            pieces = [(span.start, span.end)]
            index = bisect.bisect_left(taken, (span.start, span.start))
            index = max(0, index - 1)
            for t_start, t_end in taken[index:]:
                if t_start >= span.end:
                    break
                pieces = [p for a, b in pieces for p in ((a, min(b, t_start)), (max(a, t_end), b)) if p[1] > p[0]]
            for a, b in pieces:
                whole = (a, b) == (span.start, span.end)
                piece = text[a:b]
                if not whole and len(piece.strip(" \t\n:=@/\"'.,;")) < 3:
                    continue  # a separator left between two secrets
                accepted.append(_Span(a, b, span.kind, span.rank, span.value if whole else piece.replace("\n", "")))
                bisect.insort(taken, (a, b))
        return sorted(accepted, key=lambda s: s.start)

    def _spans(self, text: str) -> list[_Span]:
        if not text:
            return []
        spans = self._find(text)
        if "\n" in text:
            spans += self._junctions(text, 0, {span.end for span in spans})
        if self._known:
            spans += self._literal(text, 1 << 20)
        return self._resolve(text, spans)

    def _remember(self, span: _Span, text: str) -> None:
        if len(self._known) >= _MAX_KNOWN:
            return
        for value in {span.value, *text[span.start : span.end].split("\n")}:
            value = value.strip()
            if len(value) >= MIN_KNOWN and value not in self._known and not neuron_value(value):
                self._known[value] = span.kind

    # ------------------------------------------------------------------ masking

    def _mask(self, text: str, count_until: int | None = None) -> str:
        if PLACEHOLDER_PREFIX in text:  # text this redactor (or one sharing its placeholders) masked before
            for m in PLACEHOLDER.finditer(text, 0, len(text) if count_until is None else count_until):
                if m.group(0) in self._issued:
                    self.counts[self._issued[m.group(0)]] += 1
        spans = self._spans(text)
        if not spans:
            return text
        out, last = [], 0
        for span in spans:
            if count_until is None or span.start < count_until:
                self.counts[span.kind] += 1
            placeholder = self.placeholder(span.kind, span.value)
            self._remember(span, text)
            out.append(text[last : span.start])
            # one placeholder per line the secret covers, so line numbers stay what they were
            out.append("\n".join(placeholder if piece.strip() else piece for piece in text[span.start : span.end].split("\n")))
            last = span.end
        out.append(text[last:])
        return "".join(out)

    def redact(self, text: str) -> str:
        if not self.enabled or not text:
            return text
        self.learn(text)
        return self._mask(text)

    def redact_lines(self, lines: Iterable[str]) -> Iterator[str]:
        """Redact a stream of lines (without their line ends), one line out per line in, in blocks of about
        BLOCK_CHARS so a secret wrapped across lines or a key block is seen whole; memory stays bounded."""
        if not self.enabled:
            yield from lines
            return
        block: list[str] = []
        size, pem_open = 0, -1  # pem_open: lines since an unclosed BEGIN ... PRIVATE KEY header
        for line in lines:
            block.append(line)
            size += len(line) + 1
            if "PRIVATE KEY" in line and "-----BEGIN" in line:
                pem_open = 0
            elif pem_open >= 0:
                pem_open = -1 if "-----END" in line else pem_open + 1
            if size >= BLOCK_CHARS and not 0 <= pem_open < _PEM_MAX_LINES and len(block) > 1:
                # the last line waits for the next block: it may continue on the line after it
                text = "\n".join(block)
                self.learn(text)
                masked = self._mask(text, count_until=len(text) - len(block[-1]))
                yield from masked.split("\n")[:-1]
                block, size = [block[-1]], len(block[-1]) + 1
        if block:
            text = "\n".join(block)
            self.learn(text)
            yield from self._mask(text).split("\n")

    def redact_numbered(self, lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
        """redact_lines for (line number, text) pairs."""
        numbers: deque[int] = deque()

        def texts() -> Iterator[str]:
            for number, text in lines:
                numbers.append(number)
                yield text

        for text in self.redact_lines(texts()):
            yield numbers.popleft(), text

    def redact_tree(self, value: Any) -> Any:
        """Every string inside dicts and lists redacted, keys too (`"flag:--cache_dir=s3://..."`): a record
        dumped for CI output."""
        return map_strings(value, self.redact)

    def redact_bytes(self, data: bytes) -> bytes:
        """Mask secrets inside binary files (HLO protobufs) without changing any length.

        Protobuf strings are length-prefixed, so a same-length mask (`#`) keeps the file loadable.
        """
        if not self.enabled:
            return data
        text = data.decode("latin-1")
        self.learn(text)
        masked = list(text)
        for span in self._spans(text):
            self.counts[span.kind] += 1
            masked[span.start : span.end] = "#" * (span.end - span.start)
        return "".join(masked).encode("latin-1")

    def summary(self) -> dict[str, int]:
        """Occurrences masked per kind: the Neuron kinds in a fixed order, then gitleaks' rule ids, sorted
        (empty when nothing was found)."""
        return {kind: self.counts[kind] for kind in sorted((k for k in self.counts if self.counts[k]), key=_summary_rank)}

    def carried(self, texts: Iterable[str]) -> dict[str, str]:
        """The placeholders this redactor (or one sharing its placeholders) issued that `texts` carry -> their
        kind, kinds in summary() order: what a text later assembled from these texts counts its masks by."""
        found = {m.group(0) for text in texts if PLACEHOLDER_PREFIX in text for m in PLACEHOLDER.finditer(text)}
        kinds = {placeholder: self._issued[placeholder] for placeholder in found if placeholder in self._issued}
        return dict(sorted(kinds.items(), key=lambda item: (_summary_rank(item[1]), item[0])))


def _summary_rank(kind: str) -> tuple[int, str]:
    """The Neuron kinds in their fixed order, then the others (gitleaks' rule ids) by name."""
    return (KINDS.index(kind), "") if kind in KINDS else (len(KINDS), kind)
