"""Words that mean something failed, one list for every layer: parse keeps a plain line that has one, the
matcher tries message templates on those lines, and family word rules read only them.

Substrings, not whole words, on purpose: exception classes glue the word on (`RuntimeError`,
`BrokenProcessPool`... `KeyError`), and `fail` must find `failed`, `failure` and `FAILED`."""

from __future__ import annotations

from forensics.linear_regex import compile_linear

# RE2 (linear time): a line is read by these before anything else, whatever its length or content.
FAILURE_WORDS = compile_linear(
    r"(?i)error|fail|fatal|critical|exception|assert|abort|abnormal|panic|crash|killed|segmentation fault|"
    r"cannot|can't|could not|unable|not found|no such|invalid|unsupported|not supported|not available|"
    r"not initiali[sz]ed|not implemented|incompatible|unexpected|missing|denied|timed? ?out|"
    r"insufficient|not enough|exceed|too (?:many|large)|mismatch|out[- ]of[- ]bound|undefined|\bno (?:\S+ ){1,3}found"
)

# "Total failed compilations: 0", "0 errors", "no errors found": a count of no failures is a success line.
# (A `0` ends the count: next comes the end or a character that is neither a word character nor a `.`.)
ZERO_FAILURES = compile_linear(
    r"(?i)(?:fail\w*|error\w*)[^:\n]{0,30}[:=]\s*0(?:$|[^\w.])|\b0\s+(?:errors?|failures?|failed)\b|"
    r"\bno (?:errors?|failures?|issues?|problems?) (?:were )?found"
)


def reads_as_failure(text: str) -> bool:
    """The line says something failed (and is not a count of zero failures)."""
    return bool(FAILURE_WORDS.search(text)) and not ZERO_FAILURES.search(text)
