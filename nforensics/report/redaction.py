"""Every text of a `BugReport` through the report's `Redactor`: the one shared with the log and the bundle,
so the same secret keeps the same placeholder in the report, its JSON and URL, the log and the bundle."""

from __future__ import annotations

from typing import Any


from nforensics.walk import map_strings
from nforensics.redact import Redactor
from nforensics.report.model import BugReport, Redaction


def _texts(value: Any) -> list[str]:
    found: list[str] = []

    def keep(text: str) -> str:
        found.append(text)
        return text

    map_strings(value, keep)
    return found


def redacted(report: BugReport, redactor: Redactor) -> BugReport:
    """The report with its texts masked and the placeholders they carry listed (render counts them in what
    it writes: a value shown twice is two occurrences masked)."""
    if not redactor.enabled:
        return report
    redactor.learn(*_texts(report))  # a user name anywhere (/home/<u>) is masked everywhere (/tmp/<u>/)
    masked = map_strings(report, redactor.redact)
    placeholders = redactor.carried(_texts(masked))
    return masked.model_copy(update={"redaction": Redaction(enabled=True, placeholders=placeholders)})
