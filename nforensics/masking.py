"""Masking of run-specific parts of a message, shared by fingerprints (one failure from two machines hashes
the same) and signature templates (one failure printed with other numbers, paths and ids still matches).

Like Sentry's parameterized grouping (reference/ci-and-reports.md §12): what varies between runs is masked
(timestamps, paths and temp dirs, MODULE hashes, uuids, hex, instruction and barrier ids, device/core tags,
memory locations, measured numbers); what tells failures apart is kept (words, identifiers with digits in
them such as trn2 or float32, status and exit numbers). Changing a mask changes every fingerprint: bump
diagnose.fingerprint.FINGERPRINT_VERSION with it.
"""

from __future__ import annotations

from collections.abc import Callable

from nforensics.linear_regex import LinearPattern, Match, compile_linear

_NUMBER = r"-?\d+(?:\.\d+)*"
# Applied in order: whole tokens first, then the numbers left inside the remaining text.
_UUID = (compile_linear(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>")
_MODULE_HASH = (compile_linear(r"MODULE_[0-9a-f]+(?:\+[0-9a-f]+)?"), "MODULE_<id>")
_HEX_RUN = (
    # A run of 8+ lower-case hex digits with at least one digit and one letter (not a word, not a count).
    compile_linear(r"\b[0-9a-f]{8,}\b"),
    lambda m: "<hex>" if any(c.isdigit() for c in m.group()) and not m.group().isdigit() else m.group())
_MASKS: list[tuple[LinearPattern, str | Callable[[Match], str]]] = [
    # 2024-08-15T14:51:04Z, 2024-Oct-15 18:01:17.728750, 2022-11-22T15:27:23.003+00:00, 11/18/2021 04:51:25 PM
    (compile_linear(r"\d{4}-(?:\d\d|[A-Z][a-z]{2})-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<ts>"),
    (compile_linear(r"\d\d/\d\d/\d{4},? \d\d:\d\d:\d\d(?: [AP]M)?"), "<ts>"),
    _UUID,
    # Absolute or elided paths keep their last part (libnrt.so.1 vs libneuronxla.so differ); temp dirs,
    # users and workdir uuids before it go. Relative module paths (neuronxcc/starfish/...) are stable.
    # A path starts the text or follows a space, quote, bracket, '=', ':' or ',' (kept as group 1).
    (compile_linear(r"(^|[\s'\"(\[=:,])(?:~|\.\.\.|…|\.)?(?:/[^/\s'\"()\[\],:;]+)+/"), r"\1<path>/"),
    (compile_linear(r"neuronxcc-[0-9A-Za-z_.+]+"), "neuronxcc-<id>"),
    _MODULE_HASH,
    (compile_linear(r"\{[^{}]*\}@[A-Za-z]+<[^<>]*>(?:\([^()]*\))?"), "<memloc>"),  # {t604_i0}@SB<0,185856>(8x2)
    (compile_linear(r"#Internal DebugInfo: <[^<>]*>"), "#Internal DebugInfo: <…>"),
    (compile_linear(r"\bI-\d+(?:-\d+)*(?:-[A-Z]+)?(?:_sg\d+)?\b"), "I-<n>"),  # I-545-0, I-50114-4-PWP
    (compile_linear(r"\b(CoreBarrier|LocalSendRecv|Barrier)-\d+_\d+"), r"\1-<n>"),  # numbers vary per core
    (compile_linear(r"\b(nd|nc|vnc|sg|ND|NC|rank|worker|id)(\s?)\d+\b"), r"\1\2<n>"),  # nd0:nc2:h_model.id1006
    (compile_linear(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    _HEX_RUN,
]
# The generated identifiers alone (work-directory uuids, module hashes, hex runs): they spell hex words
# (`efa5`) but say nothing, while the rest of the text keeps its paths and numbers.
_ID_MASKS = (_UUID, _MODULE_HASH, _HEX_RUN)
# Numbers that name the failure rather than measure it stay; every other free-standing number goes: one
# not glued to a letter, digit, '_' or '<' before it (that character is group `before`, kept).
# (`ERROR 8812` is a level and a pid: an error number needs `=` or `:` as in `error:5`, `err: 1006`.)
_KEPT_NUMBER = (rf"(?:[Ss]tatus|exitcode|exit status|exit code|failed with|[Ss]ignal|code)\s*[=:]?\s*{_NUMBER}"
                rf"|(?:err|error|Error)\s*[=:]\s*{_NUMBER}")
_NUMBERS = compile_linear(rf"(?P<keep>\b(?:{_KEPT_NUMBER}))|(?P<before>^|[^A-Za-z_\d<])(?P<number>{_NUMBER})")
# Linear time by construction (RE2): with Python's re this one took 14 s on `a` + 3,000 spaces + `b`.
_TAILS = compile_linear(
    r"\s*-?\s*Please open a support ticket at \S+|\s*You may also be able to obtain more information using.*$"
)


def mask_ids(text: str) -> str:
    """The text with only its generated identifiers masked (see _ID_MASKS)."""
    for pattern, replacement in _ID_MASKS:
        text = pattern.sub(replacement, text)
    return text


def mask(message: str) -> str:
    """The message with its run-specific parts replaced by placeholders, whitespace collapsed."""
    text = _TAILS.sub("", message)
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    text = _NUMBERS.sub(lambda m: m.group("keep") or m.group("before") + "<n>", text)
    return " ".join(text.split())
