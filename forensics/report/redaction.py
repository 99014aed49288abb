"""Every text of a `BugReport` through the report's `Redactor`: the one shared with the log and the bundle,
so the same secret keeps the same placeholder in the report, its JSON and URL, the log and the bundle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from forensics.redact import Redactor
from forensics.report.model import BugReport, Redaction


def _map_texts(value: Any, change: Callable[[str], str]) -> Any:
    """`value` with `change` applied to each string in it (model fields, list items, dict keys and values),
    in field order."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, BaseModel):
        return value.model_copy(update={name: _map_texts(getattr(value, name), change) for name in type(value).model_fields})
    if isinstance(value, list):
        return [_map_texts(item, change) for item in value]
    if isinstance(value, dict):
        return {_map_texts(key, change): _map_texts(item, change) for key, item in value.items()}
    return value


def _texts(value: Any) -> list[str]:
    found: list[str] = []

    def keep(text: str) -> str:
        found.append(text)
        return text

    _map_texts(value, keep)
    return found


def redacted(report: BugReport, redactor: Redactor) -> BugReport:
    """The report with its texts masked and the placeholders they carry listed (render counts them in what
    it writes: a value shown twice is two occurrences masked)."""
    if not redactor.enabled:
        return report
    redactor.learn(*_texts(report))  # a user name anywhere (/home/<u>) is masked everywhere (/tmp/<u>/)
    masked = _map_texts(report, redactor.redact)
    placeholders = redactor.carried(_texts(masked))
    return masked.model_copy(update={"redaction": Redaction(enabled=True, placeholders=placeholders)})
