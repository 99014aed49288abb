"""Stable fingerprints: the same failure from two machines and days hashes the same, two failures don't.

A fingerprint is sha256 over (version, code or signature, compiler pass, the message with its variable
parts masked), like Sentry's parameterized grouping (reference/ci-and-reports.md §12). What varies between
runs of one failure is masked: timestamps, paths and temp dirs, MODULE hashes, uuids, hex, instruction and
barrier ids, device/core tags, memory locations, measured numbers. What tells failures apart is kept:
words, identifiers with digits in them (trn2, float32), status and exit numbers (status=4, failed with -9).

Bump FINGERPRINT_VERSION whenever masking or material changes: fingerprints of different versions never
compare (findings carry `fingerprint_version`).
"""

from __future__ import annotations

import hashlib

from nforensics.linear_regex import compile_linear
from nforensics.masking import mask

FINGERPRINT_VERSION = 2

# The compiler pass named in a message: "Internal tensorizer error: BirCodeGenLoop: ...", "[ModuleForkPass]".
_PASS_IN_MESSAGE = compile_linear(r"(?:Internal tensorizer error|[Ee]rror in pass|Transformation error in):?\s*(\w+)")


def compiler_pass(message: str, fields: dict[str, object] | None = None) -> str | None:
    """The compiler pass a failure happened in: an extracted `pass_name` field, else the one the message names."""
    named = (fields or {}).get("pass_name")
    if isinstance(named, str) and named:
        return named
    found = _PASS_IN_MESSAGE.search(message)
    return found.group(1) if found else None


def fingerprint(key: str, message: str, compiler_pass: str | None = None) -> str:
    """16 hex digits over (version, code or signature, compiler pass, masked message)."""
    material = "\x1f".join((str(FINGERPRINT_VERSION), key, compiler_pass or "", mask(message)))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:16]
