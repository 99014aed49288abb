"""Regenerate nforensics/redaction/gitleaks.json from gitleaks' published default rules.

    python tools/gitleaks_rules.py path/to/gitleaks/config/gitleaks.toml COMMIT

The redactor (nforensics/redact/gitleaks.py) takes gitleaks' default rule set (config/gitleaks.toml of
github.com/gitleaks/gitleaks, MIT licence) as data: each rule's regex, keywords, entropy threshold,
secret group and allowlists. Rules tied to a file path (`path = ...`: they only make sense for one kind
of file in a repository) are left out; a log is not such a file. `regex` is gitleaks' own RE2 pattern,
run by google-re2 in linear time; `python` is the same pattern for Python's `re` (the fallback where
google-re2 is missing). RE2 syntax differs from `re` in three places, rewritten here once so the
package never translates at run time:

- a flag group in the middle (`p8e-(?i)[a-z0-9]{32}`) applies to the rest of its group: `(?i:...)`;
- POSIX classes (`[[:alnum:]]`) become explicit ranges;
- `\\z` (end of text) is Python's `\\Z`.

Every translated regex must compile under Python's `re`; the script fails otherwise.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

OUT = Path(__file__).resolve().parents[1] / "nforensics" / "redaction" / "gitleaks.json"
POSIX = {
    "[:alnum:]": "A-Za-z0-9", "[:alpha:]": "A-Za-z", "[:digit:]": "0-9", "[:lower:]": "a-z",
    "[:upper:]": "A-Z", "[:space:]": r"\s", "[:xdigit:]": "0-9A-Fa-f", "[:word:]": r"\w",
}  # fmt: skip


def _scoped_flags(pattern: str) -> str:
    """`a(?i)b` -> `a(?i:b)`: Go applies a mid-pattern flag to the rest of the enclosing group; Python 3.11
    accepts global flags only at the very start. A leading `(?i)` is left as it is."""
    out: list[str] = []
    opened: list[list[str]] = [[]]  # per open group (the pattern itself first): the flag groups opened in it
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            skip = 1 + (pattern[i + 1 : i + 2] == "^")
            skip += pattern[i + skip : i + skip + 1] == "]"  # a literal ] first in a class
            out.append(pattern[i : i + skip])
            i += skip
            continue
        flag = re.match(r"\(\?([a-zA-Z]+)\)", pattern[i:])
        if flag:
            if i == 0:
                out.append(flag.group(0))
            else:
                out.append(f"(?{flag.group(1)}:")
                opened[-1].append(flag.group(1))
            i += flag.end()
            continue
        if c == "(":
            opened.append([])
        elif c == ")" and len(opened) > 1:
            out.append(")" * len(opened.pop()))
        elif c == "|" and opened[-1]:  # the flags hold in the next alternative too
            out.append(")" * len(opened[-1]) + "|" + "".join(f"(?{f}:" for f in opened[-1]))
            i += 1
            continue
        out.append(c)
        i += 1
    out.append(")" * len(opened[0]))
    return "".join(out)


def translate(pattern: str) -> str:
    for posix, ranges in POSIX.items():
        pattern = pattern.replace(f"[{posix}]", f"[{ranges}]").replace(posix, ranges)
    pattern = pattern.replace(r"\z", r"\Z")
    return _scoped_flags(pattern)


def convert(config: dict, commit: str) -> dict:
    rules = []
    for rule in config["rules"]:
        if "regex" not in rule or "path" in rule:
            continue
        entry: dict = {"id": rule["id"], "regex": rule["regex"], "python": translate(rule["regex"]),
                       "keywords": rule.get("keywords", [])}  # fmt: skip
        re.compile(entry["python"])
        if rule.get("entropy"):
            entry["entropy"] = rule["entropy"]
        if rule.get("secretGroup"):
            entry["secretGroup"] = rule["secretGroup"]
        allowlists = []
        for allow in rule.get("allowlists", []):
            kept = {k: allow[k] for k in ("regexTarget", "condition", "stopwords") if k in allow}
            if allow.get("regexes"):
                kept["regexes"] = [translate(r) for r in allow["regexes"]]
                for r in kept["regexes"]:
                    re.compile(r)
            if allow.get("paths") or allow.get("commits"):
                if allow.get("condition", "OR").upper() == "AND":
                    continue  # only holds for certain files: never for a log
                if not kept.get("regexes") and not kept.get("stopwords"):
                    continue
            if kept.get("regexes") or kept.get("stopwords"):
                allowlists.append(kept)
        if allowlists:
            entry["allowlists"] = allowlists
        rules.append(entry)
    allow = config.get("allowlist", {})
    return {
        "source": "https://github.com/gitleaks/gitleaks/blob/" + commit + "/config/gitleaks.toml",
        "license": "MIT License, Copyright (c) 2019 Zachary Rice (gitleaks)",
        "generated_by": "tools/gitleaks_rules.py",
        "allowlist": {
            "regexes": [translate(r) for r in allow.get("regexes", [])],
            "stopwords": allow.get("stopwords", []),
        },
        "rules": rules,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    data = convert(tomllib.loads(Path(argv[0]).read_text()), argv[1])
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"{OUT}: {len(data['rules'])} rules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
