"""Walking records as data: every string in a record, in a fixed order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """`value` (a record, or records dumped as JSON data) with `change` applied to every string in it: model
    fields in field order, list items, dict keys and values, each key before its value. What redaction,
    placeholder renumbering and terminal cleaning walk; the order matters (placeholders number by it)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, BaseModel):
        return value.model_copy(update={name: map_strings(getattr(value, name), change) for name in type(value).model_fields})
    if isinstance(value, list):
        return [map_strings(item, change) for item in value]
    if isinstance(value, dict):
        return {map_strings(key, change): map_strings(item, change) for key, item in value.items()}
    return value
