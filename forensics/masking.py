"""Masking of run-specific parts of a message, shared by fingerprints (one failure from two machines hashes
the same) and signature templates (one failure printed with other numbers, paths and ids still matches).

Like Sentry's parameterized grouping (reference/ci-and-reports.md §12): what varies between runs is masked
(timestamps, paths and temp dirs, MODULE hashes, uuids, hex, instruction and barrier ids, device/core tags,
memory locations, measured numbers); what tells failures apart is kept (words, identifiers with digits in
them such as trn2 or float32, status and exit numbers). Changing a mask changes every fingerprint: bump
diagnose.fingerprint.FINGERPRINT_VERSION with it.
"""

from __future__ import annotations

import re

_NUMBER = r"-?\d+(?:\.\d+)*"
# Applied in order: whole tokens first, then the numbers left inside the remaining text.
_MASKS: list[tuple[re.Pattern[str], str]] = [
    # 2024-08-15T14:51:04Z, 2024-Oct-15 18:01:17.728750, 2022-11-22T15:27:23.003+00:00, 11/18/2021 04:51:25 PM
    (re.compile(r"\d{4}-(?:\d\d|[A-Z][a-z]{2})-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<ts>"),
    (re.compile(r"\d\d/\d\d/\d{4},? \d\d:\d\d:\d\d(?: [AP]M)?"), "<ts>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    # Absolute or elided paths keep their last part (libnrt.so.1 vs libneuronxla.so differ); temp dirs,
    # users and workdir uuids before it go. Relative module paths (neuronxcc/starfish/...) are stable.
    (re.compile(r"(?:(?<=^)|(?<=[\s'\"(\[=:,]))(?:~|\.\.\.|…|\.)?(?:/[^/\s'\"()\[\],:;]+)+/(?=[^/\s'\"()\[\],:;]*)"), "<path>/"),
    (re.compile(r"neuronxcc-[0-9A-Za-z_.+]+"), "neuronxcc-<id>"),
    (re.compile(r"MODULE_[0-9a-f]+(?:\+[0-9a-f]+)?"), "MODULE_<id>"),
    (re.compile(r"\{[^{}]*\}@[A-Za-z]+<[^<>]*>(?:\([^()]*\))?"), "<memloc>"),  # {t604_i0}@SB<0,185856>(8x2)
    (re.compile(r"#Internal DebugInfo: <[^<>]*>"), "#Internal DebugInfo: <…>"),
    (re.compile(r"\bI-\d+(?:-\d+)*(?:-[A-Z]+)?(?:_sg\d+)?\b"), "I-<n>"),  # I-545-0, I-50114-4-PWP
    (re.compile(r"\b(CoreBarrier|LocalSendRecv|Barrier)-\d+_\d+"), r"\1-<n>"),  # numbers vary per core
    (re.compile(r"\b(nd|nc|vnc|sg|ND|NC|rank|worker|id)(\s?)\d+\b"), r"\1\2<n>"),  # nd0:nc2:h_model.id1006
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b"), "<hex>"),
]
# Numbers that name the failure rather than measure it stay; every other free-standing number goes.
# (`ERROR 8812` is a level and a pid: an error number needs `=` or `:` as in `error:5`, `err: 1006`.)
_KEPT_NUMBER = (rf"(?:[Ss]tatus|exitcode|exit status|exit code|failed with|[Ss]ignal|code)\s*[=:]?\s*{_NUMBER}"
                rf"|(?:err|error|Error)\s*[=:]\s*{_NUMBER}")
_NUMBERS = re.compile(rf"(?P<keep>\b(?:{_KEPT_NUMBER}))|(?<![A-Za-z_\d<])(?P<number>{_NUMBER})")
_TAILS = re.compile(
    r"\s*-?\s*Please open a support ticket at \S+|\s*You may also be able to obtain more information using.*$"
)


def mask(message: str) -> str:
    """The message with its run-specific parts replaced by placeholders, whitespace collapsed."""
    text = _TAILS.sub("", message)
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    text = _NUMBERS.sub(lambda m: m.group("keep") or "<n>", text)
    return " ".join(text.split())
