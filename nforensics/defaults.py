"""Empty containers as pydantic field defaults.

pydantic asks a field's default factory for its signature (does it take the validated data?) each time it
builds a record from it. For a builtin such as `list` that means parsing its text signature, tokenizer and
all (~40 us, and ~30 ms to compile the tokenizer's patterns on first use); for a Python function, ~3 us.
"""

from __future__ import annotations

from typing import Any


def new_list() -> list[Any]:
    return []


def new_dict() -> dict[Any, Any]:
    return {}


def new_set() -> set[Any]:
    return set()
