"""The Neuron redaction rules: what a Neuron log carries that gitleaks does not target.

AWS account ids, ARNs, instance ids, EC2 and corporate host names, addresses, availability zones, user
names in home, /tmp and /fsx paths, S3 buckets (s3://, virtual-hosted and path-style), presigned-URL
signatures, credentials in URLs (pip index URLs, database URLs), `docker login -p`, key=value secrets with
any key name (`*_SECRET_KEY=`, short and YAML passwords), bearer tokens, emails, PEM blocks. Each rule names
the kind its placeholder shows, the regex group that is the secret, the words a text must hold for the rule
to be tried, and a check that tells a secret from a Neuron token of the same shape (`_not_a_version`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

try:  # linear-time matching for gitleaks' RE2 patterns; Python's `re` runs the translated ones otherwise
    import re2  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the install
    re2 = None


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
# `TOKENIZERS_PARALLELISM`, `secret_name` and `pad_token_id` are not secrets. A shell variable's reference
# (`$PWD:/workspace`, `${API_TOKEN}`) shows no value: the name may not follow `$` or `${`; and the shell's
# PWD=/... and OLDPWD=/... in an environment dump are working folders, not passwords.
_PASSWORD_WORDS = r"passw(?:or)?d|passphrase|pwd"
SECRET_KEY_NAME = (
    rf"(?<![A-Za-z0-9$])(?<!\$\{{)(?-i:(?!(?:OLD)?PWD=/))[A-Za-z0-9_.-]{{0,40}}?(?:secret|token|{_PASSWORD_WORDS}|api[_.-]?key|apikey|access[_.-]?key"
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


def neuron_value(value: str) -> bool:
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
    # (a version's build tag after it, `+` URL-encoded in a wheel's link as %2B; a wheel's name or a pin before it)
    if _VERSION_CONTEXT.search(before) or re.match(r"[-+~%][0-9A-Za-z]", after) or re.search(r"/[A-Za-z][\w.]*-$|==$", before):
        return False
    # Neuron component versions end in .0; a host address almost never does (that is the network itself).
    return not value.endswith(".0") or after.startswith(("/", ":"))


def _ipv6_plausible(value: str, _start: int, _end: int, _text: str) -> bool:
    return value != "::1" and any(c.isdigit() for c in value) and ("::" in value or value.count(":") == 7)


def _secret_value(value: str, start: int, _end: int, text: str) -> bool:
    """A key=value secret: not a placeholder word (`None`, `${HF_TOKEN}`, `****`); a password may be short,
    a token or secret needs 8 characters and more than one lower-case word (`token: required`)."""
    if _NOT_A_VALUE.fullmatch(value) or neuron_value(value) and not any(c.isdigit() for c in value):
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
class Rule:
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


def neuron_rules() -> list[Rule]:
    return [
        # Key/value forms first: the whole value goes, whatever its shape.
        Rule(
            "aws-session-token",
            r"(?i)\b(?:aws_\w*token|\w*session_?token)\b[\"']?\s*[=:]\s*[\"']?(?P<v>[A-Za-z0-9/+=]{16,})",
            cue=("token",), wraps=True,
        ),
        Rule("aws-secret-key", rf"(?i)\b{_KEY_NAME_SECRET}\b[\"']?\s*[=:]\s*[\"']?(?P<v>[A-Za-z0-9/+=]{{20,}})",
              cue=("secret",), wraps=True),
        # A private key block, header and footer kept, every line between masked (or to the end of the text
        # when the footer never comes: a cut log must not leak the rest of a key).
        Rule(
            "private-key",
            r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?P<v>[\s\S]*?)(?=-----END[ A-Z0-9_-]{0,100}-----|\Z)",
            cue=("private key",),
        ),
        Rule("hf-token", r"\b(?P<v>hf_[A-Za-z0-9]{30,})\b", cue=("hf_",), wraps=True),
        Rule("aws-access-key-id", r"\b(?P<v>(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b",
              cue=("a3t", "akia", "asia", "abia", "acca"), wraps=True),
        # detect-secrets' BasicAuthDetector, widened: `scheme://user:password@host` (pip index URLs, database
        # URLs, git remotes) and `https://TOKEN@host`. The password always goes; the user when it is a person.
        Rule(
            "url-credential",
            r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@\"'<>]*:(?P<v>[^\s/@\"'<>]+)@(?=[\w\[])",
            cue=("://",), wraps=True,
        ),
        Rule("user", r"(?i)\b[a-z][a-z0-9+.-]{1,20}://(?P<v>[^\s:/@\"'<>]+):[^\s/@\"'<>]+@(?=[\w\[])", _personal, cue=("://",)),
        Rule("url-credential", r"(?i)\b[a-z][a-z0-9+.-]{1,20}://(?P<v>[A-Za-z0-9_.~-]{20,})@(?=[\w\[])",
              cue=("://",), wraps=True),
        # Presigned URLs and tokens in query strings: X-Amz-Signature, X-Amz-Credential, X-Amz-Security-Token,
        # the legacy Signature/AWSAccessKeyId pair, `?token=`, `?key=`.
        Rule(
            "url-signature",
            r"(?i)[?&](?:x-amz-(?:signature|credential|security-token)|signature|awsaccesskeyid|sig|se|st"
            r"|access_token|id_token|refresh_token|token|api_?key|key|secret|password|auth|code)=(?P<v>[^&\s\"'#<>]{4,})",
            cue=("=",), wraps=True,
        ),
        Rule(
            "bearer-token",
            r"(?i)\bauthorization\b[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|token|basic|digest|bot|apikey)\s+)?"
            r"(?P<v>(?!\[redacted:)[A-Za-z0-9._~+/=:-]{8,})",
            cue=("authorization",), wraps=True,
        ),
        Rule("bearer-token", r"(?i)\bbearer\s+(?P<v>(?!\[redacted:)[A-Za-z0-9._~+/-]{16,}=*)", cue=("bearer",), wraps=True),
        # `docker login -u AWS -p <token>`, `--password <x>`, `--token=<x>`, `--hf-token <x>` on any command line.
        Rule("password", r"(?i)\bdocker\s+login\b[^\n]*?\s-p(?:\s+|=)[\"']?(?P<v>(?!\[redacted:)[^\s\"']+)",
              cue=("login",), wraps=True),
        Rule(
            "secret",
            r"(?i)(?<![\w-])--?[\w-]{0,30}?(?:password|passwd|passphrase|token|secret|api-?key|auth-key|access-key)"
            r"(?:=|\s+)[\"']?(?P<v>(?!\[redacted:|-)[^\s\"']{3,})",
            _secret_value,
            cue=("pass", "token", "secret", "key"), wraps=True,
        ),
        # Any `NAME=value`, `name: value`, `"name": "value"` whose name says secret (YAML, env, JSON, INI).
        Rule(
            "secret",
            rf"(?i){SECRET_KEY_NAME}[\"']?\s*(?:=>|[=:])\s*[\"']?(?P<v>(?!\[redacted:)[^\s\"'`,;&<>(){{}}\[\]]{{3,}})",
            _secret_value,
            cue=("secret", "token", "passw", "pwd", "passphrase", "api", "key", "credential"), wraps=True,
        ),
        # detect-secrets: a standalone 40-char candidate (mixed case and digits, checked below).
        Rule(
            "aws-secret-key",
            r"(?<![A-Za-z0-9/+=._-])(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=.])",
            _mixed_alphabet,
            cue=_search(r"[A-Za-z0-9/+]{40}"), wraps=True,
        ),
        Rule("arn", r"\b(?P<v>arn:aws[\w-]*:[\w-]*:[\w-]*:[\w-]*:[^\s\"'<>()\[\],;`]+)", cue=("arn:aws",)),
        # `AWS_ACCOUNT_ID=`, `Account: `, `"Account": "..."` (sts get-caller-identity), `account 1234...`.
        Rule("aws-account-id", r"(?i)(?<![a-z])account(?:[ _-]?id)?\b[\"']?\W{0,4}(?P<v>\d{12})\b", cue=("account",)),
        Rule("aws-account-id", r"\b(?P<v>\d{12})(?=\.dkr\.ecr\.)", cue=(".dkr.ecr.",)),
        Rule("aws-account-id", r"-(?P<v>\d{12})(?=\.d\.codeartifact\.)", cue=(".codeartifact.",)),
        # IAM unique ids (`"UserId": "AROA...:session"`): a role, user or key of one account.
        Rule("aws-unique-id", r"\b(?P<v>(?:AROA|AIDA|AIPA|ANPA|ANVA|APKA|AGPA)[A-Z0-9]{16,17})\b",
              cue=("aroa", "aida", "aipa", "anpa", "anva", "apka", "agpa")),
        # The runtime's crash block: keep the key, mask the value (`Nodename: ip-...`).
        Rule("instance-id", r"\bInstance ID:\s*(?P<v>(?!\[redacted:|N/A\b)\S+)", cue=("instance id:",)),
        Rule("nrt-cluster-id", r"\bCluster ID:\s*(?P<v>(?!\[redacted:|N/A\b)\S+)", cue=("cluster id:",)),
        Rule("hostname", r"\bNodename:\s*(?P<v>(?!\[redacted:|N/A\b)\S+)", cue=("nodename:",)),
        Rule(
            "hostname",
            r"(?i)\b(?:host_?name|node_?name)\b[\"']?\s*[=:]\s*[\"']?(?P<v>(?!\[redacted:|N/A\b|localhost\b)[A-Za-z][\w.-]{1,252})",
            cue=("hostname", "host_name", "node_name"),
        ),
        Rule("instance-id", r"\b(?P<v>i-[0-9a-f]{8,17})\b", cue=("i-",)),
        Rule("aws-resource-id", r"\b(?P<v>(?:eni|vol|snap|sg|subnet|vpc)-[0-9a-f]{8,17})\b",
              cue=("eni-", "vol-", "snap-", "sg-", "subnet-", "vpc-")),
        # EC2 names encode the private address (ip-10-0-1-5): masked like the address itself.
        Rule("hostname", r"\b(?P<v>ip-\d{1,3}(?:-\d{1,3}){3}(?:\.[a-z][a-z0-9-]*)*)\b", cue=("ip-",)),
        # Corporate and private names: *.internal, *.corp.*, *.local, *.lan, developer desktops.
        Rule(
            "hostname",
            r"(?i)(?<![\w.-])(?P<v>[a-z0-9][a-z0-9-]{0,62}(?:\.[a-z0-9][a-z0-9-]{0,62})*"
            r"\.(?:corp\.[a-z0-9.-]+[a-z]|internal|local|localdomain|lan|intranet|corp|home\.arpa))(?![\w-])",
            cue=(".internal", ".local", ".lan", ".intranet", ".corp", ".home.arpa"),
        ),
        Rule("hostname", r"(?i)\b(?P<v>dev-dsk-[a-z0-9-]+(?:\.[a-z0-9-]+)*)", cue=("dev-dsk-",)),
        Rule("ipv4", rf"(?P<v>{_IPV4})", _not_a_version, cue=_search(r"\d\.\d{1,3}\.\d{1,3}\.\d")),
        Rule("ipv6", rf"(?P<v>{_IPV6})", _ipv6_plausible, cue=lambda text: "::" in text or text.count(":") >= 7),
        Rule("availability-zone", r"\b(?P<v>[a-z]{3,4}\d-az\d{1,2})\b", cue=("-az",)),
        Rule("s3-bucket", r"\bs3a?://(?P<v>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])", cue=("s3://", "s3a://")),
        Rule("s3-bucket", r"\bhttps?://(?P<v>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\.s3[.-]", cue=(".s3",)),
        # Path-style: https://s3.amazonaws.com/BUCKET/..., https://s3.us-west-2.amazonaws.com/BUCKET/...
        Rule(
            "s3-bucket",
            r"(?i)\bhttps?://s3(?:[.-][a-z0-9-]+)*\.amazonaws\.com(?:\.cn)?/(?P<v>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])",
            cue=("amazonaws.com",),
        ),
        Rule("s3-bucket", r"(?i)\bbucket(?:[_-]?name)?\b[\"']?\s*[=:]\s*[\"']?"
                           r"(?P<v>(?!\[redacted:)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])", cue=("bucket",)),
        Rule("email", r"(?<![\w.+/%-])(?P<v>[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}"
                       r"(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24})\b", _private_email, cue=("@",)),
        Rule("user", r"(?:/home/|/Users/|\\Users\\)(?P<v>(?!\[redacted:|[<$%{])[^/\\\s\"':]+)",
              cue=("/home/", "/users/", "\\users\\")),
        # Shared file systems: /fsx/<user>/..., /fsx/home/<user>/..., /efs/users/<user>/... (not /fsx/datasets/).
        Rule(
            "user",
            rf"(?i)/(?:fsx|efs|lustre)/(?:(?:home|users)/)?(?P<v>(?!\[redacted:|[<$%{{]|(?:{_SHARED_DIRS}|home|users)(?:/|$|\s))[^/\s\"':]+)(?=/)",
            cue=("/fsx/", "/efs/", "/lustre/"),
        ),
        Rule("user", r"/tmp/(?P<v>(?!\[redacted:|[<$%{])[^/\s\"':]+)(?=/neuroncc_compile_workdir)", cue=("/tmp/",)),
        Rule("user", r"\b(?:USER|LOGNAME|USERNAME)=(?P<v>(?!\[redacted:)[\w.-]+)", cue=("user", "logname")),
        Rule("user", r"(?<![\w.@-])(?P<v>[a-z_][\w.-]{0,31})@(?=ip-\d|\[redacted:hostname)", cue=("@",)),
        # Shell prompts `alice@build-host:~/proj$`: the user and the machine.
        Rule("user", r"(?m)^(?P<v>[a-z_][\w.-]{0,31})@[A-Za-z][\w.-]{0,62}:[~/]", cue=("@",)),
        Rule("hostname", r"(?m)^[a-z_][\w.-]{0,31}@(?P<v>(?!\[redacted:)[A-Za-z][\w.-]{0,62}):[~/]", cue=("@",)),
    ]


# A value caught by a generic key=value rule is filed under its own kind when its shape says so.
SHAPES = (
    ("hf-token", re.compile(r"hf_[A-Za-z0-9]{30,}")),
    ("aws-access-key-id", re.compile(r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}")),
)
