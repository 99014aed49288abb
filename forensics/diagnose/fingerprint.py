"""Stable fingerprints: the same failure from two machines and days hashes the same.

Version 1: sha256 over (code or signature, compiler pass, the message with its variable parts masked).
Bump FINGERPRINT_VERSION whenever the masking changes: fingerprints of different versions never compare.
"""

from __future__ import annotations

import hashlib
import re

FINGERPRINT_VERSION = 1

# Order matters: paths and ids before the bare numbers inside them (reference/ci-and-reports.md §12).
_MASKS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\d{4}-(?:\d\d|[A-Z][a-z]{2})-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?Z?"), "<ts>"),
    (re.compile(r"(?:/[\w.+\-<>]+)+/?"), "<path>"),
    (re.compile(r"MODULE_[0-9a-f]+(?:\+[0-9a-f]+)?"), "MODULE_<id>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\bI-\d+(?:-\d+)*(?:-[A-Z]+)?(?:_sg\d+)?\b"), "I-<n>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b[0-9a-f]{8,}\b"), "<hex>"),
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
    (re.compile(r"\s+"), " "),
]
_TAILS = re.compile(
    r"\s*-?\s*Please open a support ticket at \S+|\s*You may also be able to obtain more information using.*$"
)


def mask(message: str) -> str:
    text = _TAILS.sub("", message)
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text.strip()


def fingerprint(key: str, message: str, compiler_pass: str | None = None) -> str:
    material = "\x1f".join((str(FINGERPRINT_VERSION), key, compiler_pass or "", mask(message)))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:16]
