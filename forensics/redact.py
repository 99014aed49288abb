"""Offline redaction of secrets and identities in logs, reports, bundle files and CI outputs.

One `Redactor` per report: the same secret becomes the same placeholder (`[redacted:ipv4-1]`) in every
text it sees, so a maintainer can still follow "the host that failed" across the log, the report and the
bundle. Nothing here ever calls the network: detected keys are masked, never verified.

Two rule sets (docs/report.md, "Redaction", says why these):
- gitleaks' published default rules (forensics/redaction/gitleaks.json, regenerated from gitleaks'
  config/gitleaks.toml by tools/gitleaks_rules.py): ~220 provider token formats with gitleaks' own
  keywords, entropy thresholds and allowlists, run by google-re2 (linear time) when it is installed;
- the rules below, for what a Neuron log carries and gitleaks does not target: AWS account ids, ARNs,
  instance ids, EC2 and corporate host names, addresses, availability zones, user names in home, /tmp
  and /fsx paths, S3 buckets (s3://, virtual-hosted and path-style), presigned-URL signatures,
  credentials in URLs (pip index URLs, database URLs), `docker login -p`, key=value secrets with any
  key name (`*_SECRET_KEY=`, short and YAML passwords), bearer tokens, emails, PEM blocks.

Across lines: a PEM block is masked line by line; a secret wrapped onto the next line (a terminal's
wrapping, a key at the end of one line and its value on the next) is found by scanning each line break
where text continues on both sides; and every secret found once is masked wherever its value appears
again, even where no rule would see it (a bare password later in the log, a fragment of a wrapped key).

What must never be touched: error codes (NCC_IXLV002), barrier names (LocalSendRecv-0_476_sr_cb_begin),
instruction ids (I-14774-0-PWP), tensor shapes, versions (2.23.6484.0+3b612583, 2.16.7.0) and MODULE_
cache hashes. Versions are the hard case: `2.16.7.0` is also a valid IPv4 address, see `_not_a_version`.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

try:  # linear-time matching for gitleaks' RE2 patterns; Python's `re` runs the translated ones otherwise
    import re2  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the install
    re2 = None

PLACEHOLDER_PREFIX = "[redacted:"
_PLACEHOLDER = re.compile(r"\[redacted:[a-z0-9-]+\]")
GITLEAKS_RULES = Path(__file__).with_name("redaction") / "gitleaks.json"

# Kinds of the Neuron rules, in the order the summary lists them (gitleaks' rule ids follow, sorted).
KINDS = (
    "aws-access-key-id",
    "aws-secret-key",
    "aws-session-token",
    "private-key",
    "secret",
    "password",
    "bearer-token",
    "url-credential",
    "url-signature",
    "hf-token",
    "arn",
    "aws-account-id",
    "aws-unique-id",
    "instance-id",
    "aws-resource-id",
    "nrt-cluster-id",
    "hostname",
    "ipv4",
    "ipv6",
    "availability-zone",
    "email",
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
# Key names whose value is a secret: `*_SECRET_KEY=`, `db_password:`, `"api_key": "..."`, `HF_TOKEN=`.
# The name must end at the keyword (or one of these suffixes): `max_new_tokens`, `tokenizer`,
# `TOKENIZERS_PARALLELISM`, `secret_name` and `pad_token_id` are not secrets.
_PASSWORD_WORDS = r"passw(?:or)?d|passphrase|pwd"
_SECRET_KEY_NAME = (
    rf"(?<![A-Za-z0-9])[A-Za-z0-9_.-]{{0,40}}?(?:secret|token|{_PASSWORD_WORDS}|api[_.-]?key|apikey|access[_.-]?key"
    r"|private[_.-]?key|auth[_.-]?key|signing[_.-]?key|credentials?|client[_.-]?secret)(?:[_.-]?(?:key|value|str))?"
)
# Placeholders, not values (every quantifier bounded or unambiguous: linear even under `search`).
_NOT_A_VALUE = re.compile(
    r"(?i)(?:true|false|none|null|nil|yes|no|on|off|required|optional|unset|empty|redacted|hidden|masked|\*+|x+"
    r"|<[^>]{0,200}>?|\$\{?\w{0,100}\}?|%\(?\w{0,100}\)?s?|\{.{0,200})"
)
# Public addresses: (local part or None for any, domain)
_PUBLIC_EMAILS = {("aws-neuron-support", "amazon.com")}
_PUBLIC_LOCAL = {"git", "noreply", "no-reply", "support", "security"}
_PUBLIC_DOMAINS = {"example.com", "example.org", "example.net", "users.noreply.github.com"}
# Technical user names in URL credentials that identify nobody.
_URL_USERS = {"aws", "__token__", "oauth2", "oauth2accesstoken", "x-access-token", "git", "token", "x-oauth-basic",
              "anonymous", "user", "username", "admin", "root", "ubuntu", "ec2-user", "postgres", "ci"}  # fmt: skip
# First folders under /fsx, /efs that are shared data, not a person's home.
_SHARED_DIRS = (
    "data|datasets?|models?|checkpoints?|ckpts?|shared|share|public|common|cache|caches|neuron[_-]?cache"
    "|compile[_-]?cache|scratch|logs?|outputs?|results|tmp|temp|venvs?|envs?|conda|miniconda3|code|src|projects?"
    "|experiments?|hf[_-]?cache|huggingface|hf_home|weights|artifacts|team|teams|apps|opt|software|tools"
)
# Neuron tokens a generic rule may take for a secret: MODULE_ cache hashes, versions, codes, barriers.
_NEURON_VALUE = re.compile(
    r"MODULE_[0-9a-f]+(?:\+[0-9a-f]+)?|(?:NCC|NRT)_\w+|LocalSendRecv-\w+"
    r"|I-\d[\w-]*|neuronxcc-[\w.+-]+|[a-z_-]+"
)
_BARRIER = re.compile(r"[A-Za-z]\w{0,40}Barrier-\w+")  # CoreBarrier-0_480, LocalSendRecv barriers above


def _neuron_value(value: str) -> bool:
    """A Neuron token a generic rule may take for a secret: MODULE_ hashes, versions, codes, barriers."""
    if _NEURON_VALUE.fullmatch(value) or "Barrier-" in value and _BARRIER.fullmatch(value):
        return True
    core = value[1:] if value.startswith("v") else value  # a version: 2.23.6484.0+3b612583, v1.2-rc1
    for separator in "+-":
        core = core.split(separator, 1)[0]
    parts = core.split(".")
    return len(parts) >= 2 and all(part.isdigit() for part in parts)


def _search(pattern: str) -> Callable[[str], bool]:
    compiled = re.compile(pattern)

    def found(text: str) -> bool:
        return compiled.search(text) is not None

    return found


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


def _secret_value(value: str, start: int, _end: int, text: str) -> bool:
    """A key=value secret: not a placeholder word (`None`, `${HF_TOKEN}`, `****`); a password may be short,
    a token or secret needs 8 characters and more than one lower-case word (`token: required`)."""
    if _NOT_A_VALUE.fullmatch(value) or _neuron_value(value) and not any(c.isdigit() for c in value):
        return False
    key = text[max(0, start - 60) : start].lower()
    if re.search(rf"(?:{_PASSWORD_WORDS})\W*$", key):
        return len(value) >= 3
    return len(value) >= 8 and not value.isdigit() and not re.fullmatch(r"[a-z]+(?:[_-][a-z]+)*", value)


def _private_email(value: str, _start: int, _end: int, _text: str) -> bool:
    local, _, domain = value.lower().rpartition("@")
    if (local, domain) in _PUBLIC_EMAILS or local in _PUBLIC_LOCAL or domain in _PUBLIC_DOMAINS:
        return False
    return not domain.endswith((".png", ".jpg", ".py", ".so"))


def _personal(value: str, _start: int, _end: int, _text: str) -> bool:
    return value.lower() not in _URL_USERS


@dataclass
class _Rule:
    kind: str
    pattern: str  # the secret is group `v` (Neuron rules) or gitleaks' secret group; text around it is kept
    accept: Callable[[str, int, int, str], bool] | None = None  # (value, start, end, whole text)
    # What a text must contain for the rule to be tried: lower-case words (checked with `in`, at C speed)
    # or a test, so a line only meets the rules it can match.
    cue: tuple[str, ...] | Callable[[str], bool] = ()
    flags: int = 0
    wraps: bool = False  # a secret a terminal may wrap onto the next line (not an id or a name ended by the line)
    # gitleaks rules only
    gitleaks: bool = False
    python_pattern: str = ""  # the `re` translation when google-re2 is missing
    secret_group: int = 0
    entropy: float = 0.0
    allowlists: tuple[dict, ...] = ()
    _compiled: Any = None

    def compiled(self) -> Any:
        if self._compiled is None:
            if self.gitleaks:
                self._compiled = re2.compile(self.pattern) if re2 is not None else re.compile(self.python_pattern)
            else:
                self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled


def _neuron_rules() -> list[_Rule]:
    return [
        # Key/value forms first: the whole value goes, whatever its shape.
        _Rule(
            "aws-session-token",
            r"(?i)\b(?:aws_\w*token|\w*session_?token)\b[\"']?\s*[=:]\s*[\"']?(?P<v>[A-Za-z0-9/+=]{16,})",
            cue=("token",), wraps=True,
        ),
        _Rule("aws-secret-key", rf"(?i)\b{_KEY_NAME_SECRET}\b[\"']?\s*[=:]\s*[\"']?(?P<v>[A-Za-z0-9/+=]{{20,}})",
              cue=("secret",), wraps=True),
        # A private key block, header and footer kept, every line between masked (or to the end of the text
        # when the footer never comes: a cut log must not leak the rest of a key).
        _Rule(
            "private-key",
            r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?P<v>[\s\S]*?)(?=-----END[ A-Z0-9_-]{0,100}-----|\Z)",
            cue=("private key",),
        ),
        _Rule("hf-token", r"\b(?P<v>hf_[A-Za-z0-9]{30,})\b", cue=("hf_",), wraps=True),
        _Rule("aws-access-key-id", r"\b(?P<v>(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b",
              cue=("a3t", "akia", "asia", "abia", "acca"), wraps=True),
        # detect-secrets' BasicAuthDetector, widened: `scheme://user:password@host` (pip index URLs, database
        # URLs, git remotes) and `https://TOKEN@host`. The password always goes; the user when it is a person.
        _Rule(
            "url-credential",
            r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@\"'<>]*:(?P<v>[^\s/@\"'<>]+)@(?=[\w\[])",
            cue=("://",), wraps=True,
        ),
        _Rule("user", r"(?i)\b[a-z][a-z0-9+.-]{1,20}://(?P<v>[^\s:/@\"'<>]+):[^\s/@\"'<>]+@(?=[\w\[])", _personal, cue=("://",)),
        _Rule("url-credential", r"(?i)\b[a-z][a-z0-9+.-]{1,20}://(?P<v>[A-Za-z0-9_.~-]{20,})@(?=[\w\[])",
              cue=("://",), wraps=True),
        # Presigned URLs and tokens in query strings: X-Amz-Signature, X-Amz-Credential, X-Amz-Security-Token,
        # the legacy Signature/AWSAccessKeyId pair, `?token=`, `?key=`.
        _Rule(
            "url-signature",
            r"(?i)[?&](?:x-amz-(?:signature|credential|security-token)|signature|awsaccesskeyid|sig|se|st"
            r"|access_token|id_token|refresh_token|token|api_?key|key|secret|password|auth|code)=(?P<v>[^&\s\"'#<>]{4,})",
            cue=("=",), wraps=True,
        ),
        _Rule(
            "bearer-token",
            r"(?i)\bauthorization\b[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|token|basic|digest|bot|apikey)\s+)?"
            r"(?P<v>(?!\[redacted:)[A-Za-z0-9._~+/=:-]{8,})",
            cue=("authorization",), wraps=True,
        ),
        _Rule("bearer-token", r"(?i)\bbearer\s+(?P<v>(?!\[redacted:)[A-Za-z0-9._~+/-]{16,}=*)", cue=("bearer",), wraps=True),
        # `docker login -u AWS -p <token>`, `--password <x>`, `--token=<x>`, `--hf-token <x>` on any command line.
        _Rule("password", r"(?i)\bdocker\s+login\b[^\n]*?\s-p(?:\s+|=)[\"']?(?P<v>(?!\[redacted:)[^\s\"']+)",
              cue=("login",), wraps=True),
        _Rule(
            "secret",
            r"(?i)(?<![\w-])--?[\w-]{0,30}?(?:password|passwd|passphrase|token|secret|api-?key|auth-key|access-key)"
            r"(?:=|\s+)[\"']?(?P<v>(?!\[redacted:|-)[^\s\"']{3,})",
            _secret_value,
            cue=("pass", "token", "secret", "key"), wraps=True,
        ),
        # Any `NAME=value`, `name: value`, `"name": "value"` whose name says secret (YAML, env, JSON, INI).
        _Rule(
            "secret",
            rf"(?i){_SECRET_KEY_NAME}[\"']?\s*(?:=>|[=:])\s*[\"']?(?P<v>(?!\[redacted:)[^\s\"'`,;&<>(){{}}\[\]]{{3,}})",
            _secret_value,
            cue=("secret", "token", "passw", "pwd", "passphrase", "api", "key", "credential"), wraps=True,
        ),
        # detect-secrets: a standalone 40-char candidate (mixed case and digits, checked below).
        _Rule(
            "aws-secret-key",
            r"(?<![A-Za-z0-9/+=._-])(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=.])",
            _mixed_alphabet,
            cue=_search(r"[A-Za-z0-9/+]{40}"), wraps=True,
        ),
        _Rule("arn", r"\b(?P<v>arn:aws[\w-]*:[\w-]*:[\w-]*:[\w-]*:[^\s\"'<>()\[\],;`]+)", cue=("arn:aws",)),
        # `AWS_ACCOUNT_ID=`, `Account: `, `"Account": "..."` (sts get-caller-identity), `account 1234...`.
        _Rule("aws-account-id", r"(?i)(?<![a-z])account(?:[ _-]?id)?\b[\"']?\W{0,4}(?P<v>\d{12})\b", cue=("account",)),
        _Rule("aws-account-id", r"\b(?P<v>\d{12})(?=\.dkr\.ecr\.)", cue=(".dkr.ecr.",)),
        _Rule("aws-account-id", r"-(?P<v>\d{12})(?=\.d\.codeartifact\.)", cue=(".codeartifact.",)),
        # IAM unique ids (`"UserId": "AROA...:session"`): a role, user or key of one account.
        _Rule("aws-unique-id", r"\b(?P<v>(?:AROA|AIDA|AIPA|ANPA|ANVA|APKA|AGPA)[A-Z0-9]{16,17})\b",
              cue=("aroa", "aida", "aipa", "anpa", "anva", "apka", "agpa")),
        # The runtime's crash block: keep the key, mask the value (`Nodename: ip-...`).
        _Rule("instance-id", r"\bInstance ID:\s*(?P<v>(?!\[redacted:|N/A\b)\S+)", cue=("instance id:",)),
        _Rule("nrt-cluster-id", r"\bCluster ID:\s*(?P<v>(?!\[redacted:|N/A\b)\S+)", cue=("cluster id:",)),
        _Rule("hostname", r"\bNodename:\s*(?P<v>(?!\[redacted:|N/A\b)\S+)", cue=("nodename:",)),
        _Rule(
            "hostname",
            r"(?i)\b(?:host_?name|node_?name)\b[\"']?\s*[=:]\s*[\"']?(?P<v>(?!\[redacted:|N/A\b|localhost\b)[A-Za-z][\w.-]{1,252})",
            cue=("hostname", "host_name", "node_name"),
        ),
        _Rule("instance-id", r"\b(?P<v>i-[0-9a-f]{8,17})\b", cue=("i-",)),
        _Rule("aws-resource-id", r"\b(?P<v>(?:eni|vol|snap|sg|subnet|vpc)-[0-9a-f]{8,17})\b",
              cue=("eni-", "vol-", "snap-", "sg-", "subnet-", "vpc-")),
        # EC2 names encode the private address (ip-10-0-1-5): masked like the address itself.
        _Rule("hostname", r"\b(?P<v>ip-\d{1,3}(?:-\d{1,3}){3}(?:\.[a-z][a-z0-9-]*)*)\b", cue=("ip-",)),
        # Corporate and private names: *.internal, *.corp.*, *.local, *.lan, developer desktops.
        _Rule(
            "hostname",
            r"(?i)(?<![\w.-])(?P<v>[a-z0-9][a-z0-9-]{0,62}(?:\.[a-z0-9][a-z0-9-]{0,62})*"
            r"\.(?:corp\.[a-z0-9.-]+[a-z]|internal|local|localdomain|lan|intranet|corp|home\.arpa))(?![\w-])",
            cue=(".internal", ".local", ".lan", ".intranet", ".corp", ".home.arpa"),
        ),
        _Rule("hostname", r"(?i)\b(?P<v>dev-dsk-[a-z0-9-]+(?:\.[a-z0-9-]+)*)", cue=("dev-dsk-",)),
        _Rule("ipv4", rf"(?P<v>{_IPV4})", _not_a_version, cue=_search(r"\d\.\d{1,3}\.\d{1,3}\.\d")),
        _Rule("ipv6", rf"(?P<v>{_IPV6})", _ipv6_plausible, cue=lambda text: "::" in text or text.count(":") >= 7),
        _Rule("availability-zone", r"\b(?P<v>[a-z]{3,4}\d-az\d{1,2})\b", cue=("-az",)),
        _Rule("s3-bucket", r"\bs3a?://(?P<v>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])", cue=("s3://", "s3a://")),
        _Rule("s3-bucket", r"\bhttps?://(?P<v>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\.s3[.-]", cue=(".s3",)),
        # Path-style: https://s3.amazonaws.com/BUCKET/..., https://s3.us-west-2.amazonaws.com/BUCKET/...
        _Rule(
            "s3-bucket",
            r"(?i)\bhttps?://s3(?:[.-][a-z0-9-]+)*\.amazonaws\.com(?:\.cn)?/(?P<v>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])",
            cue=("amazonaws.com",),
        ),
        _Rule("s3-bucket", r"(?i)\bbucket(?:[_-]?name)?\b[\"']?\s*[=:]\s*[\"']?"
                           r"(?P<v>(?!\[redacted:)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])", cue=("bucket",)),
        _Rule("email", r"(?<![\w.+/%-])(?P<v>[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}"
                       r"(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24})\b", _private_email, cue=("@",)),
        _Rule("user", r"(?:/home/|/Users/|\\Users\\)(?P<v>(?!\[redacted:|[<$%{])[^/\\\s\"':]+)",
              cue=("/home/", "/users/", "\\users\\")),
        # Shared file systems: /fsx/<user>/..., /fsx/home/<user>/..., /efs/users/<user>/... (not /fsx/datasets/).
        _Rule(
            "user",
            rf"(?i)/(?:fsx|efs|lustre)/(?:(?:home|users)/)?(?P<v>(?!\[redacted:|[<$%{{]|(?:{_SHARED_DIRS}|home|users)(?:/|$|\s))[^/\s\"':]+)(?=/)",
            cue=("/fsx/", "/efs/", "/lustre/"),
        ),
        _Rule("user", r"/tmp/(?P<v>(?!\[redacted:|[<$%{])[^/\s\"':]+)(?=/neuroncc_compile_workdir)", cue=("/tmp/",)),
        _Rule("user", r"\b(?:USER|LOGNAME|USERNAME)=(?P<v>(?!\[redacted:)[\w.-]+)", cue=("user", "logname")),
        _Rule("user", r"(?<![\w.@-])(?P<v>[a-z_][\w.-]{0,31})@(?=ip-\d|\[redacted:hostname)", cue=("@",)),
        # Shell prompts `alice@build-host:~/proj$`: the user and the machine.
        _Rule("user", r"(?m)^(?P<v>[a-z_][\w.-]{0,31})@[A-Za-z][\w.-]{0,62}:[~/]", cue=("@",)),
        _Rule("hostname", r"(?m)^[a-z_][\w.-]{0,31}@(?P<v>(?!\[redacted:)[A-Za-z][\w.-]{0,62}):[~/]", cue=("@",)),
    ]


# A value caught by a generic key=value rule is filed under its own kind when its shape says so.
_SHAPES = (
    ("hf-token", re.compile(r"hf_[A-Za-z0-9]{30,}")),
    ("aws-access-key-id", re.compile(r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}")),
)


# gitleaks rules a Neuron rule does better: private-key masks the header and footer too (ours keeps them
# readable and masks to the end of a cut log).
_SUPERSEDED = {"private-key"}


def _gitleaks_rule(entry: dict) -> _Rule:
    allowlists = []
    for allow in entry.get("allowlists", ()):
        allowlists.append({
            "target": allow.get("regexTarget", "secret"),
            "and": allow.get("condition", "OR").upper() == "AND",
            "regexes": tuple(allow.get("regexes", ())),  # compiled on first use (_regex)
            "stopwords": tuple(w.lower() for w in allow.get("stopwords", ())),
        })  # fmt: skip
    return _Rule(
        entry["id"], entry["regex"], cue=tuple(k.lower() for k in entry["keywords"]), gitleaks=True, wraps=True,
        python_pattern=entry["python"], secret_group=entry.get("secretGroup", 0), entropy=entry.get("entropy", 0.0),
        allowlists=tuple(allowlists),
    )  # fmt: skip


@lru_cache(maxsize=1)
def _base_rules() -> tuple[tuple[_Rule, ...], dict]:
    """The Neuron rules, then gitleaks' (a Neuron rule wins where both find the same secret), and
    gitleaks' global allowlist."""
    data = json.loads(GITLEAKS_RULES.read_text(encoding="utf-8"))
    allow = data.get("allowlist", {})
    global_allow = {
        "regexes": tuple(allow.get("regexes", ())),
        "stopwords": tuple(w.lower() for w in allow.get("stopwords", ())),
    }
    gitleaks = [_gitleaks_rule(e) for e in data["rules"] if e["id"] not in _SUPERSEDED]
    return tuple(_neuron_rules() + gitleaks), global_allow


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values()) if text else 0.0


@lru_cache(maxsize=None)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _allowed(allow: dict, secret: str, match: str, line: str) -> bool:
    target = {"match": match, "line": line}.get(allow.get("target", "secret"), secret)
    regex = any(_regex(r).search(target) for r in allow["regexes"])
    stop = any(w in secret.lower() for w in allow["stopwords"])
    if allow.get("and"):
        return (regex or not allow["regexes"]) and (stop or not allow["stopwords"])
    return regex or stop


_USER_HINTS = re.compile(
    r"(?:/home/|/Users/)(?P<u>[^/\s\"':]+)|/tmp/(?P<w>[^/\s\"':]+)/neuroncc_compile_workdir"
    r"|\b(?:USER|LOGNAME|USERNAME)=(?P<e>[\w.-]+)"
)
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-.~%")
_JUNCTION_CONTEXT = 300  # characters on each side of a line break scanned for a wrapped secret
_MIN_KNOWN = 8  # values at least this long are masked wherever they appear again
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
    _user_rule: tuple[frozenset[str], _Rule | None] = (frozenset(), None)

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
            existing = self.placeholders[value] = f"{PLACEHOLDER_PREFIX}{kind}-{self._per_kind[kind]}]"
            self._issued[existing] = kind
        return existing

    # ------------------------------------------------------------------ finding secrets

    def _rules(self) -> Iterator[tuple[int, _Rule]]:
        rules, _ = _base_rules()
        yield from enumerate(rules)
        users = frozenset(self._known_users)
        if users and self._user_rule[0] != users:
            # /tmp/<u>/... and /fsx/<u>/... for every user seen elsewhere, whatever follows it.
            names = "|".join(re.escape(u) for u in sorted(users, key=len, reverse=True))
            rule = _Rule("user", rf"/(?:tmp|fsx|efs)/(?P<v>{names})(?=/)", cue=("/tmp/", "/fsx/", "/efs/"))
            self._user_rule = (users, rule)
        if users:
            yield len(rules), self._user_rule[1]  # type: ignore[misc]

    def _find(self, text: str, rank_offset: int = 0, wrapping: bool = False) -> list[_Span]:
        """Every rule's secrets in `text`, with the rule's rank (lower wins an overlap); with `wrapping`
        only the rules of secrets a line break may cut."""
        lower = text.lower()
        _, global_allow = _base_rules()
        spans: list[_Span] = []
        for rank, rule in self._rules():
            if wrapping and not rule.wraps:
                continue
            cue = rule.cue
            if isinstance(cue, tuple):
                if cue and not any(word in lower for word in cue):
                    continue
            elif not cue(text):
                continue
            for match in rule.compiled().finditer(text):
                found = self._secret(rule, match, text, global_allow)
                if found is not None:
                    spans.append(_Span(found[1], found[2], found[0], rank + rank_offset, text[found[1] : found[2]]))
        return spans

    @staticmethod
    def _secret(rule: _Rule, match: Any, text: str, global_allow: dict) -> tuple[str, int, int] | None:
        """(kind, start, end) of the secret inside a match, or None when the rule's checks reject it."""
        if not rule.gitleaks:
            start, end = match.span("v")
            value = text[start:end]
            if start < 0 or not value.strip() or value.startswith(PLACEHOLDER_PREFIX):
                return None
            if rule.accept and not rule.accept(value, start, end, text):
                return None
            return next((k for k, shape in _SHAPES if shape.fullmatch(value)), rule.kind), start, end
        # gitleaks: the secret group, else the first non-empty group, else the whole match
        group = rule.secret_group or next((i for i in range(1, rule.compiled().groups + 1) if match.start(i) >= 0
                                           and match.end(i) > match.start(i)), 0)  # fmt: skip
        start, end = match.span(group)
        secret = text[start:end]
        if not secret or PLACEHOLDER_PREFIX in secret or _PLACEHOLDER.search(match.group(0)):
            return None
        if rule.entropy and _entropy(secret) <= rule.entropy:
            return None
        if _neuron_value(secret):
            return None
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.start())
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        if (any(_regex(r).search(secret) for r in global_allow["regexes"])
                or any(w in secret.lower() for w in global_allow["stopwords"])):
            return None
        if any(_allowed(allow, secret, match.group(0), line) for allow in rule.allowlists):
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
                        rf"{_SECRET_KEY_NAME}[\"']?\s*[=:]$", left, re.I
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
            taken = [m.span() for m in _PLACEHOLDER.finditer(text)]
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
            if len(value) >= _MIN_KNOWN and value not in self._known and not _neuron_value(value):
                self._known[value] = span.kind

    # ------------------------------------------------------------------ masking

    def _mask(self, text: str, count_until: int | None = None) -> str:
        if PLACEHOLDER_PREFIX in text:  # text this redactor (or one sharing its placeholders) masked before
            for m in _PLACEHOLDER.finditer(text, 0, len(text) if count_until is None else count_until):
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
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact(k) if isinstance(k, str) else k: self.redact_tree(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.redact_tree(v) for v in value]
        return value

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
        ordered = [k for k in KINDS if self.counts[k]] + sorted(k for k in self.counts if k not in KINDS and self.counts[k])
        return {kind: self.counts[kind] for kind in ordered}
