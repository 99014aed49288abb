"""The case base as `nforensics cases` prints it: a table of public reports, or one report in full."""

from __future__ import annotations

import json
from collections.abc import Sequence

from nforensics.knowledge.cases import Case


def select(cases: Sequence[Case], *, text: str | None = None, code: str | None = None, family: str | None = None,
           repo: str | None = None) -> list[Case]:
    """Cases matching every filter given: words of `text` in the title or the masked error lines, a code
    (with or without NCC_), a family id, a repository (owner/name or just name)."""
    found = list(cases)
    if code:
        wanted = _code_key(code)
        found = [c for c in found if wanted in {_code_key(k) for k in c.codes}
                 or any(wanted in t.upper() for t in c.templates)]
    if family:
        found = [c for c in found if c.family == family]
    if repo:
        found = [c for c in found if c.repo == repo or c.repo.split("/")[-1] == repo]
    if text:
        words = text.lower().split()
        found = [c for c in found if all(w in (c.title + " " + " ".join(c.templates)).lower() for w in words)]
    return sorted(found, key=lambda c: (c.repo, c.number))


def _code_key(code: str) -> str:
    """NCC_ITEN404, ITEN404 and TEN404 name one code: without the prefix and the class letter."""
    key = code.upper().removeprefix("NCC_")
    return key[1:] if len(key) == 7 and key[0] in "EIW" and key[1:4].isalpha() else key


def render_list(cases: Sequence[Case], format: str) -> str:
    if format == "json":
        return json.dumps([c.model_dump(mode="json") for c in cases], indent=2) + "\n"
    rows = [f"{c.repo}#{c.number}".ljust(44) + f" {(c.state or '?'):6} {c.family:30} {c.title}" for c in cases]
    return "\n".join(rows + [f"{len(cases)} report(s)"]) + "\n"


def render_case(case: Case, format: str) -> str:
    if format == "json":
        return case.model_dump_json(indent=2) + "\n"
    lines = [f"{case.repo}#{case.number}: {case.title}", case.url, "",
             f"state: {case.state or 'unknown'}" + (f" (opened {case.opened})" if case.opened else "")
             + (f", closed {case.closed}" if case.closed else ""),
             f"family: {case.family}" + (f" · signature: {case.signature}" if case.signature else ""),
             f"component: {case.component}" + (f" · instance: {case.instance}" if case.instance else "")]
    if case.codes:
        lines.append(f"codes: {', '.join(case.codes)}")
    if case.versions:
        lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in case.versions.items()))
    if case.fixed_in:
        lines.append(f"fixed in: {case.fixed_in}")
    lines += ["", "error lines (masked):", *(f"  {t}" for t in case.templates)]
    who = "maintainers" if case.maintainer_answered else "thread"
    if case.answer:
        lines += ["", f"what the {who} said: {case.answer}"]
    if case.workaround:
        lines += [f"workaround: {case.workaround}"]
    return "\n".join(lines) + "\n"
