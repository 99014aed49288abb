"""Words that mean something failed, one list for every layer: parse keeps a plain line that has one, the
matcher tries message templates on those lines, and family word rules read only them.

Substrings, not whole words, on purpose: exception classes glue the word on (`RuntimeError`,
`BrokenProcessPool`... `KeyError`), and `fail` must find `failed`, `failure` and `FAILED`."""

from __future__ import annotations

import re

from nforensics.linear_regex import compile_linear

# XLA's and gRPC's error status names heading a message (`INTERNAL: during context [NeuronHloVerifier]: ...`).
_STATUS_NAMES = (r"(?-i:\b(?:INTERNAL|UNIMPLEMENTED|RESOURCE_EXHAUSTED|OUT_OF_RANGE|DATA_LOSS|INVALID_ARGUMENT|"
                 r"FAILED_PRECONDITION|DEADLINE_EXCEEDED|UNAVAILABLE|ABORTED|PERMISSION_DENIED): )")

# Python's TypeError for a call that does not fit the callee, also pasted without the class name
# ("NeuronWorker.__init__() missing 1 required positional argument: 'cache_config'").
_CALL_MISMATCH = (r"takes (?:from )?\d+ (?:to \d+ )?positional arguments? but \d+ (?:were|was) given|"
                  r"missing \d+ required (?:positional|keyword-only) arguments?|got an unexpected keyword argument|"
                  r"got multiple values for (?:keyword )?argument")
# A rule and the value that broke it, in one clause: "AccessPatterns must MATCH, but got in=17776640 and out=128",
# "input dtype must be torch.bfloat16 but got torch.float32" (a dot inside a name or a number is no clause's end).
# ("expected a lock file but found none, creating it" is a notice, "you should set X but got nothing, using the
# default" a fallback: only a rule that must hold, or an expectation, broken by what was got or received.)
_RULE_BROKEN = r"\b(?:must|expected)\b(?:[^.;:\n]|\.\S){0,120}?\bbut (?:got|received)\b"

# RE2 (linear time): a line is read by these before anything else, whatever its length or content.
FAILURE_WORDS = compile_linear(
    r"(?i)error|fail|fatal|critical|exception|assert|abort|abnormal|panic|crash|killed|segmentation fault|"
    r"cannot|can't|could not|unable|not found|no such|invalid|unsupported|not supported|not available|unavailable|corrupt|"
    r"(?:does|do|did) not (?:support|exist)|(?:doesn't|don't|didn't) (?:support|exist)|"
    r"\bno package\b|"
    r"not initiali[sz]ed|not implemented|incompatible|unexpected|missing|denied|timed? ?out|"
    r"insufficient|not enough|exceed|too (?:many|large)|mismatch|out[- ]of[- ]bound|undefined|\bno (?:\S+ ){1,3}found|"
    r"\[errno [1-9]\d*\]|no space left|broken pipe|"  # what the operating system refused, as Python prints it
    + _STATUS_NAMES + "|" + _CALL_MISMATCH + "|" + _RULE_BROKEN
)

# Words that say outright that something broke, not that something is absent or unsupported ("TVM not
# available", "weights not initialized" are start-up chatter): a plain line with one of these is a failure
# even when its producer printed no level.
# Whole words (`\b` counts `_` as a word character): `exceptiongroup`, `test_error_handling`, `allow_failure`
# are names, not failures.
OUTRIGHT_FAILURE = compile_linear(
    r"(?i)\b(?:\w*error|errors?|fail(?:s|ed|ure|ures)?|fatal|abort(?:ed)?|panic(?:ked)?|crash(?:ed|es)?|"
    r"segmentation fault|core dumped|killed|\w*exception|out of memory)\b|" + _STATUS_NAMES + "|" + _CALL_MISMATCH + "|"
    + _RULE_BROKEN
)
# "no exceptions raised", "0 errors": a statement that nothing broke.
_NOTHING_BROKE = compile_linear(r"(?i)\bno (?:\w+ )?(?:errors?|exceptions?|failures?)\b")

# "Total failed compilations: 0", "0 errors", "no errors found": a count of no failures is a success line.
# (A `0` ends the count: next comes the end or a character that is neither a word character nor a `.`.)
# (`Check failed: 0 == create_eg_rsp.status().code()` is a failed C++ CHECK comparing with 0, not a count of 0.)
_ZERO_FAILURES = compile_linear(
    r"(?i)(?:fail\w*|error\w*)[^:\n]{0,30}[:=]\s*0(?:$|[^\w.\s=!<>]|\s+(?:$|[^\s=!<>]))|\b0(?:\s*/\s*\d+|\s+of\s+\d+)?\s+(?:errors?|failures?|failed)\b|"
    r"\bno (?:errors?|failures?|issues?|problems?) (?:were )?found"
)
# ... unless the 0 numbers who failed: "Worker 0 of 8 failed", "rank 0 failed", "Process 0/4 failed: ...".
_NUMBERED_BEFORE = compile_linear(
    r"(?i)\b(?:rank|worker|process|proc|node|device|core|neuroncore|nc|replica|host|task|shard|gpu|job|thread|"
    r"instance|step|batch|epoch|graph|subgraph|module|layer|partition|client|server|pod|container)\s*[#:]?\s*$")


def counts_no_failures(text: str) -> bool:
    """The line is a count of zero failures ("Total failed compilations: 0", "0/6 failed, 6 succeeded")."""
    found = _ZERO_FAILURES.search(text)
    return found is not None and not (found.group(0)[:1] == "0" and _NUMBERED_BEFORE.search(text[:found.start()]))

# A section's heading between rules names what the section holds ("=========== errors from kernel tracing
# my_kernel ===========", pytest's "===== FAILURES ====="): the failures, if any, are the lines below it.
# ("=== BIR verification failed ===" says what failed: it is no list's heading.)
SECTION_HEADING = compile_linear(r"(?i)^\s*[=\-]{3,}\s*(?:errors|warnings|messages|failures)\b[^=\n]{0,200}?[=\-]{3,}\s*$")


# Notices tools print on the normal path in failure words: docker's first pull of an image ("Unable to find
# image 'x:latest' locally", then it pulls it).
_ROUTINE_NOTICE = compile_linear(r"(?i)unable to find image '[^']{1,400}' locally")
# A setting a library says it will ignore ("X is not supported in NeuronTrainer and will be ignored") is its notice
# that it goes on without it, on a line that says nothing else failed.
_IGNORED_SETTING = compile_linear(r"(?i)\band will be ignored\b")


# A command line's option names (`--inject-error=NONE`, `--enable-data-race-checker=false`) name switches, not
# what happened: a tool echoing the command it runs says nothing failed. (Their values still count.) So do the
# names of a settings dump, `name=value` pairs joined by commas (`Namespace(model='llama', timeout=600,
# ready_check_timeout_sec=0)`), and elsewhere an identifier set to a literal (`fail_fast=True`); a report's own
# words stay (`passed=10 failed=3`, `killed=True`, `error=ECONNRESET`, `error_message="Timed out"`).
_OPTION_NAMES = compile_linear(r"(?:^|\s)--[A-Za-z][\w-]*")
_SETTINGS_DUMP = compile_linear(r"\b[A-Za-z_][\w.]*=[^,\n]*,\s*[A-Za-z_][\w.]*=[^,\n]*,\s*[A-Za-z_][\w.]*=")
_DUMPED_NAMES = compile_linear(r"\b[A-Za-z_][\w.]*=")
_SETTING_NAMES = compile_linear(r"\b[A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+=(?:-?\d[\w.]*|True|False|None)\b")


# A numbered source line in rich's traceback panel, the failing one marked `❱`: code, not a message.
_RICH_SOURCE_ROW = compile_linear(r"^│\s*(?:❱\s*)?\d+\s")
# A row of a framework's operator summary (torch-neuron's `=> aten::embedding: 3 [not supported]`): how a trace
# split the model between Neuron and CPU, printed by traces that succeed as well; no failure by itself.
_OPERATOR_SUMMARY_ROW = compile_linear(r"^(?:[A-Z]+:[\w.]*:|\[[A-Z]+\])?\s*=>\s*[\w:.]+:\s*\d+\s*\[(?:not )?supported\]\s*$")


def reads_as_failure(text: str) -> bool:
    """The line says something failed (and is not a count of zero failures, a section's heading, a routine
    notice, a numbered source line a rich traceback panel quotes (`│ 410 │ raise RuntimeError("Failed ...`) or a
    row of a framework's operator summary)."""
    if text[:1] == "│" and _RICH_SOURCE_ROW.match(text) or "supported]" in text and _OPERATOR_SUMMARY_ROW.search(text):
        return False
    if "--" in text:
        text = _OPTION_NAMES.sub(" ", text)
    if "=" in text:
        text = (_DUMPED_NAMES if _SETTINGS_DUMP.search(text) else _SETTING_NAMES).sub(" ", text)
    return (bool(FAILURE_WORDS.search(text)) and not counts_no_failures(text) and not SECTION_HEADING.search(text)
            and not _ROUTINE_NOTICE.search(text) and not (_IGNORED_SETTING.search(text) and not says_it_failed(text)))


def says_it_failed(text: str) -> bool:
    """The line says outright that something broke (not only that something is missing or unsupported)."""
    return (bool(OUTRIGHT_FAILURE.search(text)) and not counts_no_failures(text) and not _NOTHING_BROKE.search(text)
            and not SECTION_HEADING.search(text))


# The documented naming scheme NCC_<class><component><index>, also printed bare by older compilers (TEN404);
# what the letters mean is in knowledge/codes.toml.
CODE_PARTS = re.compile(r"^(?:NCC_)?(?P<klass>[EIW])?(?P<component>[A-Z]{2,5}?)(?P<index>\d{3})$")
_LEGACY_CODE = re.compile(r"^[A-Z]{3}\d{3}$")
# A code or status as printed anywhere in a line: NCC_ITEN404, TEN404, F134, NRT_EXEC_OOB, NERR_RESOURCE.
PRINTED_CODE = re.compile(r"\b(?:NCC_)?[A-Z]{3,4}\d{3}\b|\bF1\d\d\b|\bNRT_[A-Z_]+\b|\bNERR_[A-Z_]+\b")


def code_parts(code: str) -> tuple[str | None, str] | None:
    """(class letter, component letters) of a printed code, or None for a code of another scheme (F134)."""
    parts = CODE_PARTS.match(code.upper())
    if not parts or not (code.upper().startswith("NCC_") or _LEGACY_CODE.match(code.upper())):
        return None
    return parts["klass"], parts["component"]
