"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Alerts stay stable across runs: the rule id is the signature id (never a code-plus-hash), the partial
fingerprint is our own masked fingerprint, and the location is the log's repo-relative path, so a
nightly job that fails the same way again updates one alert instead of opening a new one.
Limits and required properties: ../shared/reference/ci-and-reports.md section 6.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from nforensics import __version__
from nforensics.records import Analysis, Finding
from nforensics.render.groups import Occurrence, label, occurrences
from nforensics.render.markdown import workaround_lines

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
DESCRIPTION_LIMIT = 1024  # GitHub truncates/rejects longer short and full descriptions
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "note": "recommendation"}


def _clip(text: str) -> str:
    return text if len(text) <= DESCRIPTION_LIMIT else text[: DESCRIPTION_LIMIT - 1] + "…"


def _help(finding: Finding) -> tuple[str, str]:
    """Plain and Markdown help: what to try, then where to read more."""
    text, markdown = [finding.meaning or finding.summary], [finding.meaning or finding.summary]
    for workaround in finding.workarounds:
        line = f"{workaround.title}: {workaround.description}" if workaround.description else workaround.title
        text.append(f"Workaround: {line}")
        if workaround.code:
            text.append(workaround.code)
    if finding.workarounds:
        markdown.append("\n".join(["**Workarounds**", "", *workaround_lines(finding.workarounds)]))
    for reference in finding.references:
        text.append(f"{reference.title}: {reference.url}")
        markdown.append(f"[{reference.title}]({reference.url})")
    return "\n\n".join(text), "\n\n".join(markdown)


def _rule(finding: Finding) -> dict:
    help_text, help_markdown = _help(finding)
    tags = [finding.component] + ([finding.code] if finding.code else []) + (["generic"] if finding.generic else [])
    return {
        "id": finding.signature,
        "name": finding.signature,
        "shortDescription": {"text": _clip(finding.title)},
        "fullDescription": {"text": _clip(finding.meaning or finding.summary)},
        "help": {"text": help_text, "markdown": help_markdown},
        "defaultConfiguration": {"level": finding.severity},
        "properties": {
            "tags": tags,
            "precision": "medium" if finding.generic else "high",
            "problem.severity": PROBLEM_SEVERITY[finding.severity],
        },
    }


def _message(finding: Finding) -> str:
    parts = [f"{label(finding)}. {finding.summary}"]
    if finding.hypotheses:
        parts.append(f"Most likely: {finding.hypotheses[0].title}.")
    if finding.workarounds:
        parts.append(f"Try: {finding.workarounds[0].title}.")
    return " ".join(parts)


def _result(occurrence: Occurrence, rule_index: int) -> dict:
    finding = occurrence.finding
    result = {
        "ruleId": finding.signature,
        "ruleIndex": rule_index,
        "level": finding.severity,
        "message": {"text": _message(finding)},
        "partialFingerprints": {f"nforensics/v{finding.fingerprint_version}": finding.fingerprint},
        "properties": {"component": finding.component, "fields": finding.fields}
        | ({"code": finding.code} if finding.code else {}),
    }
    if occurrence.path:
        physical: dict = {"artifactLocation": {"uri": quote(occurrence.path)}}  # spaces etc. are not URI characters
        if occurrence.line:
            physical["region"] = {"startLine": occurrence.line}
        result["locations"] = [{"physicalLocation": physical}]
    return result


def to_sarif(analyses: list[Analysis]) -> dict:
    rules: list[dict] = []
    rule_index: dict[str, int] = {}
    results = []
    for occurrence in occurrences(analyses):
        signature = occurrence.finding.signature
        if signature not in rule_index:
            rule_index[signature] = len(rules)
            rules.append(_rule(occurrence.finding))
        results.append(_result(occurrence, rule_index[signature]))
    driver = {
        "name": "nforensics",
        "semanticVersion": __version__,
        "rules": rules,
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results, "columnKind": "unicodeCodePoints"}],
    }


def render_sarif(analyses: list[Analysis]) -> str:
    return json.dumps(to_sarif(analyses), indent=2, ensure_ascii=False) + "\n"
