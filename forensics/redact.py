"""Offline redaction of secrets and identities in logs, reports and bundle files.

One `Redactor` per report: the same secret becomes the same placeholder (`[redacted:ipv4-1]`) in every
text it sees, so a maintainer can still follow "the host that failed" across the log, the report and the
bundle. Nothing here ever calls the network: detected keys are masked, never verified.

Patterns follow ../shared/reference/ci-and-reports.md §5 (gitleaks, detect-secrets, Sentry). What they
must never touch: error codes (NCC_IXLV002), barrier names (LocalSendRecv-0_476_sr_cb_begin), instruction
ids (I-14774-0-PWP), tensor shapes, versions (2.23.6484.0+3b612583, 2.16.7.0) and MODULE_ cache hashes.
Versions are the hard case: `2.16.7.0` is also a valid IPv4 address, see `_not_a_version`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

PLACEHOLDER_PREFIX = "[redacted:"

# Kinds, in the order the summary lists them.
KINDS = (
    "aws-access-key-id",
    "aws-secret-key",
    "aws-session-token",
    "secret",
    "hf-token",
    "arn",
    "aws-account-id",
    "instance-id",
    "aws-resource-id",
    "nrt-cluster-id",
    "hostname",
    "ipv4",
    "ipv6",
    "availability-zone",
    "user",
    "s3-bucket",
)

_IPV4_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = rf"(?<![\w.]){_IPV4_OCTET}(?:\.{_IPV4_OCTET}){{3}}(?![\w]|\.\d)"
# Hex groups with `::` or exactly eight groups; bounded so `16:08:34` timestamps and C++ `a::b` names miss.
_H = r"[0-9a-fA-F]{1,4}"
_IPV6 = (
    rf"(?<![\w:.])(?:(?:{_H}:){{7}}{_H}|(?:{_H}:){{1,6}}:(?:{_H}(?::{_H}){{0,5}})?|::{_H}(?::{_H}){{0,6}})"
    r"(?![\w:])"
)
# Words before a dotted quad that say "this is an address" even when it ends in .0 like a version.
_IP_CONTEXT = re.compile(r"(?:\bip|addr(?:ess)?|host|inet6?|peer|server|master_addr|endpoint)\W{0,3}$|[@/]$", re.I)
_VERSION_CONTEXT = re.compile(r"(?:version|\bv|\bver)\W{0,3}$", re.I)
_KEY_NAME_SECRET = r"(?:aws_secret_access_key|secret_access_key|secretaccesskey|aws_secret_key)"


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: str  # the secret is group `v`; text around it (key names, `/home/`) is kept
    accept: Callable[[str, int, int, str], bool] | None = None  # (value, start, end, whole text)
    # What a text must contain for the rule to be tried: lower-case words (checked with `in`, at C speed)
    # or a test. Python's `re` tries every alternative at every position, so a line only meets the rules
    # it can match (7x faster on a log with a user path on every line, more when secrets are rare).
    cue: tuple[str, ...] | Callable[[str], bool] = ()


def _search(pattern: str) -> Callable[[str], bool]:
    return lambda text, compiled=re.compile(pattern): compiled.search(text) is not None


def _mixed_alphabet(value: str, _start: int, _end: int, _text: str) -> bool:
    """A bare 40-char run is a secret key only with upper, lower and digit or / or +; hex SHA-1s are not."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() or c in "/+" for c in value)
    )


def _not_a_version(value: str, start: int, end: int, text: str) -> bool:
    """Neuron versions are dotted quads too (`Driver version: 2.16.7.0`, `2.30.59.0-f5cdefb39`)."""
    before, after = text[max(0, start - 24) : start], text[end : end + 2]
    if value.startswith(("127.", "0.", "255.255.")):
        return False  # loopback, unspecified and netmasks identify nobody and help diagnosis
    if _IP_CONTEXT.search(before):
        return True
    if _VERSION_CONTEXT.search(before) or re.match(r"[-+~][0-9A-Za-z]", after):
        return False
    # Neuron component versions end in .0; a host address almost never does (that is the network itself).
    return not value.endswith(".0") or after.startswith(("/", ":"))


def _ipv6_plausible(value: str, _start: int, _end: int, _text: str) -> bool:
    return value != "::1" and any(c.isdigit() for c in value) and ("::" in value or value.count(":") == 7)


# A value caught by a generic key=value rule is filed under its own kind when its shape says so.
_SHAPES = (
    ("hf-token", re.compile(r"hf_[A-Za-z0-9]{30,}")),
    ("aws-access-key-id", re.compile(r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}")),
)


def _rules(known_users: set[str]) -> list[_Rule]:
    rules = [
        # Key/value forms first: the whole value goes, whatever its shape.
        _Rule(
            "aws-session-token",
            r"(?i)\b(?:aws_\w*token|\w*session_?token)\b[\"']?\s*[=:]\s*[\"']?(?P<v>[A-Za-z0-9/+=]{16,})",
            cue=("token",),
        ),
        _Rule("aws-secret-key", rf"(?i)\b{_KEY_NAME_SECRET}\b[\"']?\s*[=:]\s*[\"']?(?P<v>[A-Za-z0-9/+=]{{20,}})", cue=("secret",)),
        _Rule(
            "secret",
            r"(?i)\b[A-Za-z_]*(?:token|secret|password|passwd|api_key|apikey)\b[\"']?\s*[=:]\s*[\"']?"
            r"(?P<v>(?!\[redacted:)[A-Za-z0-9/+=_.-]{12,})",
            cue=("token", "secret", "passw", "api_key", "apikey"),
        ),
        _Rule("hf-token", r"\b(?P<v>hf_[A-Za-z0-9]{30,})\b", cue=("hf_",)),
        _Rule("aws-access-key-id", r"\b(?P<v>(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b", cue=("a3t", "akia", "asia", "abia", "acca")),
        # detect-secrets: a standalone 40-char candidate (mixed case and digits, checked below).
        _Rule(
            "aws-secret-key",
            r"(?<![A-Za-z0-9/+=._-])(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
            _mixed_alphabet,
            cue=_search(r"[A-Za-z0-9/+]{40}"),
        ),
        _Rule("arn", r"\b(?P<v>arn:aws[\w-]*:[\w-]*:[\w-]*:[\w-]*:[^\s\"'<>()\[\],;`]+)", cue=("arn:aws",)),
        _Rule("aws-account-id", r"(?i)\baccount(?:[ _-]?id)?\b\W{0,4}(?P<v>\d{12})\b", cue=("account",)),
        _Rule("aws-account-id", r"\b(?P<v>\d{12})(?=\.dkr\.ecr\.)", cue=(".dkr.ecr.",)),
        # The runtime's crash block: keep the key, mask the value (`Nodename: ip-...`).
        _Rule("instance-id", r"\bInstance ID:\s*(?P<v>(?!\[redacted:|N/A\b)\S+)", cue=("instance id:",)),
        _Rule("nrt-cluster-id", r"\bCluster ID:\s*(?P<v>(?!\[redacted:|N/A\b)\S+)", cue=("cluster id:",)),
        _Rule("hostname", r"\bNodename:\s*(?P<v>(?!\[redacted:|N/A\b)\S+)", cue=("nodename:",)),
        _Rule("instance-id", r"\b(?P<v>i-[0-9a-f]{8,17})\b", cue=("i-",)),
        _Rule("aws-resource-id", r"\b(?P<v>(?:eni|vol|snap|sg|subnet|vpc)-[0-9a-f]{8,17})\b", cue=("eni-", "vol-", "snap-", "sg-", "subnet-", "vpc-")),
        _Rule("hostname", r"\b(?P<v>ip-\d{1,3}(?:-\d{1,3}){3}(?:\.[a-z][a-z0-9-]*)*)\b", cue=("ip-",)),
        _Rule("ipv4", rf"(?P<v>{_IPV4})", _not_a_version, cue=_search(r"\d\.\d{1,3}\.\d{1,3}\.\d")),
        _Rule("ipv6", rf"(?P<v>{_IPV6})", _ipv6_plausible, cue=lambda text: "::" in text or text.count(":") >= 7),
        _Rule("availability-zone", r"\b(?P<v>[a-z]{3,4}\d-az\d{1,2})\b", cue=("-az",)),
        _Rule("s3-bucket", r"\bs3://(?P<v>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])", cue=("s3://",)),
        _Rule("s3-bucket", r"\bhttps?://(?P<v>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\.s3[.-]", cue=(".s3",)),
        _Rule("user", r"(?:/home/|/Users/)(?P<v>(?!\[redacted:)[^/\s\"':]+)", cue=("/home/", "/users/")),
        _Rule("user", r"/tmp/(?P<v>(?!\[redacted:)[^/\s\"':]+)(?=/neuroncc_compile_workdir)", cue=("/tmp/",)),
        _Rule("user", r"\b(?:USER|LOGNAME|USERNAME)=(?P<v>(?!\[redacted:)[\w.-]+)", cue=("user", "logname")),
        _Rule("user", r"(?<![\w.@-])(?P<v>[a-z_][\w.-]{0,31})@(?=ip-\d|\[redacted:hostname)", cue=("@",)),
    ]
    if known_users:
        # /tmp/<u>/... for every user seen elsewhere in the text, whatever follows it.
        names = "|".join(re.escape(u) for u in sorted(known_users, key=len, reverse=True))
        rules.append(_Rule("user", rf"/tmp/(?P<v>{names})(?=/)", cue=("/tmp/",)))
    return rules


_USER_HINTS = re.compile(
    r"(?:/home/|/Users/)(?P<u>[^/\s\"':]+)|/tmp/(?P<w>[^/\s\"':]+)/neuroncc_compile_workdir"
    r"|\b(?:USER|LOGNAME|USERNAME)=(?P<e>[\w.-]+)"
)


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
    _compiled: dict[tuple[int, ...], re.Pattern[str]] = field(default_factory=dict)  # active rules -> regex
    _compiled_for: frozenset[str] = frozenset()
    _by_word: dict[str, list[int]] = field(default_factory=dict)  # cue word -> rules it enables
    _tests: list[tuple[int, Callable[[str], bool]]] = field(default_factory=list)  # other cues
    _rules: list[_Rule] = field(default_factory=list)

    def sharing(self) -> Redactor:
        """A redactor with the same placeholders and known users but its own counts: the counts of one
        output (the report) while the bundle around it keeps placeholders consistent."""
        return Redactor(
            enabled=self.enabled, placeholders=self.placeholders, _per_kind=self._per_kind, _known_users=self._known_users
        )

    def learn(self, *texts: str) -> None:
        """Note the user names these texts reveal, so `/tmp/<u>/` is masked even before `/home/<u>` shows up."""
        for text in texts:
            for m in _USER_HINTS.finditer(text):
                self._known_users.update(n for n in m.groupdict().values() if n and not n.startswith("["))

    def _pattern(self, text: str) -> re.Pattern[str] | None:
        """One alternation of the rules whose cue `text` contains (None: nothing can match), so one
        left-to-right pass masks everything and replaced text is never rescanned."""
        if self._compiled_for != self._known_users or not self._rules:
            self._compiled_for = frozenset(self._known_users)
            self._rules = _rules(self._known_users)
            self._compiled.clear()
            self._by_word = {}
            for index, rule in enumerate(self._rules):
                for word in rule.cue if isinstance(rule.cue, tuple) else ():
                    self._by_word.setdefault(word, []).append(index)
            self._tests = [(i, rule.cue) for i, rule in enumerate(self._rules) if not isinstance(rule.cue, tuple)]
        lower = text.lower()
        active = {i for word, rules in self._by_word.items() if word in lower for i in rules}
        active.update(i for i, test in self._tests if test(text))
        if not active:
            return None
        key = tuple(sorted(active))
        compiled = self._compiled.get(key)
        if compiled is None:
            alternatives = []
            for index in key:
                body = self._rules[index].pattern.replace("(?P<v>", f"(?P<v{index}>")
                if body.startswith("(?i)"):
                    body = f"(?i:{body[4:]})"
                alternatives.append(f"(?:{body})")
            if len(self._compiled) > 512:  # many distinct line shapes: start over rather than grow
                self._compiled.clear()
            compiled = self._compiled[key] = re.compile("|".join(alternatives), re.M)
        return compiled

    def placeholder(self, kind: str, value: str) -> str:
        existing = self.placeholders.get(value)
        if existing is None:
            self._per_kind[kind] += 1
            existing = self.placeholders[value] = f"{PLACEHOLDER_PREFIX}{kind}-{self._per_kind[kind]}]"
        return existing

    def redact(self, text: str) -> str:
        if not self.enabled or not text:
            return text
        self.learn(text)
        pattern = self._pattern(text)
        return pattern.sub(lambda m: self._replace(m, text), text) if pattern else text

    def _secret(self, match: re.Match[str], text: str) -> tuple[str, int, int] | None:
        """(kind, start, end) of the secret inside a match, or None when the rule's check rejects it."""
        group = match.lastgroup  # each alternative has exactly one named group, `v<rule index>`
        rule = self._rules[int(group[1:])]
        value, start, end = match.group(group), match.start(group), match.end(group)
        if value.startswith(PLACEHOLDER_PREFIX) or (rule.accept and not rule.accept(value, start, end, text)):
            return None
        self.counts[kind := next((k for k, shape in _SHAPES if shape.fullmatch(value)), rule.kind)] += 1
        return kind, start, end

    def _replace(self, match: re.Match[str], text: str) -> str:
        found = self._secret(match, text)
        if found is None:
            return match.group(0)
        kind, start, end = found
        whole, offset = match.group(0), match.start()
        return whole[: start - offset] + self.placeholder(kind, text[start:end]) + whole[end - offset :]

    def redact_bytes(self, data: bytes) -> bytes:
        """Mask secrets inside binary files (HLO protobufs) without changing any length.

        Protobuf strings are length-prefixed, so a same-length mask (`#`) keeps the file loadable.
        """
        if not self.enabled:
            return data
        text = data.decode("latin-1")
        self.learn(text)
        masked = list(text)
        pattern = self._pattern(text)
        for match in pattern.finditer(text) if pattern else ():
            found = self._secret(match, text)
            if found is not None:
                masked[found[1] : found[2]] = "#" * (found[2] - found[1])
        return "".join(masked).encode("latin-1")

    def summary(self) -> dict[str, int]:
        """Occurrences masked per kind, in a fixed kind order (empty when nothing was found)."""
        return {kind: self.counts[kind] for kind in KINDS if self.counts[kind]}
