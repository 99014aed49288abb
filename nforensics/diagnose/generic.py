"""Fallback findings for failures no signature knows: an unknown code is still explained, never dropped.

A coded diagnostic always yields a finding (its code's parts explained); an ICE banner, a BIR verifier
block, a Python exception, an exit status or a runtime ERROR line yields one only when nothing more
specific was found, so a known failure is not buried under its own symptoms.
"""

from __future__ import annotations

import re
import signal


from nforensics.diagnose.evidence import lines_between
from nforensics.diagnose.fingerprint import FINGERPRINT_VERSION, fingerprint
from nforensics.knowledge import table
from nforensics.records import ERROR_LEVELS, Diagnostic, Evidence, Finding, ParsedLog, Severity, SourceLine
from nforensics.vocabulary import CODE_PARTS, says_it_failed



MAX_EVIDENCE = 20  # lines cited for one template group; the count says how many there were
PLAIN_FAILURE_LINES = 20  # with no error-level record, the last this many plain failure lines are grouped
# A line that names a level below error itself (`INFO: job Killed-by-user handler registered`) is not one.
_QUIET_HEAD = re.compile(r"^\W*(?:INFO|DEBUG|TRACE|NOTICE|WARN(?:ING)?)\b")


def explain_code(code: str) -> str:
    parts = CODE_PARTS.match(code) if code.startswith("NCC_") else None
    if not parts:
        return f"{code} is a legacy or tool-specific code; no catalogue entry knows it yet."
    naming = table("codes")
    klass = naming["classes"].get(parts["klass"] or "", "no class letter")
    component = naming["components"].get(parts["component"], f"component {parts['component']} (undocumented)")
    return f"{code}: {klass}; raised by {component}; index {parts['index']}."


def _generic(code: str | None, key: str, title: str, component: str, summary: str, meaning: str,
             line: int, end_line: int, retained: list[SourceLine], severity: Severity = "error") -> Finding:
    evidence = lines_between(retained, line, end_line)
    return Finding.model_construct(
        code=code, signature=f"generic-{key}", title=title, component=component, summary=summary,
        meaning=meaning, severity=severity, generic=True, tier="generic", confidence=0.2, wrapped_by=[],
        hypotheses_undetermined=False,
        fingerprint=fingerprint(code or key, summary),
        fingerprint_version=FINGERPRINT_VERSION,
        evidence=evidence or [Evidence.model_construct(line=line, text=summary)],
    )


def generic_findings(log: ParsedLog, retained: list[SourceLine], claimed: set[int], has_specific: bool) -> list[Finding]:
    """Fallbacks for what no signature or family explains; `claimed` holds the lines those already cover.
    A diagnostic printed again (each rank, each retry, the wrapper echoing the compiler) is the one failure:
    it is explained where any of its copies is, and shown once where none is."""
    explained = {_said(d) for d in log.diagnostics if d.line in claimed}
    unexplained: dict[tuple[str, str], Diagnostic] = {}
    for diagnostic in log.diagnostics:
        if diagnostic.line not in claimed and _said(diagnostic) not in explained:
            unexplained.setdefault(_said(diagnostic), diagnostic)
    findings = [
        _generic(d.code, "coded-diagnostic", f"Unrecognised compiler diagnostic {d.code}",
                 "compiler", d.message or d.code, explain_code(d.code), d.line, d.end_line, retained)
        for d in unexplained.values()
    ]
    if findings or has_specific:
        return findings
    for ice in (i for i in log.ice if i.error_message or i.error_class or i.error_location):  # not bare stars
        return [_generic(None, "internal-compiler-error", f"Internal Compiler Error ({ice.error_class or 'unknown class'})",
                         "compiler", ice.error_message or ice.error_class or "Internal Compiler Error",
                         "The compiler crashed with an unhandled error; the banner names the class and location.",
                         ice.line, ice.end_line, retained)]
    for bir in log.bir:
        return [_generic(None, "bir-verification", "BIR verification failed", "compiler",
                         bir.reason or "BIR verification failed",
                         "The backend verifier rejected an instruction the compiler generated: a compiler bug.",
                         bir.line, bir.end_line, retained)]
    for exit_status in log.exits:
        return [_generic(None, "compiler-exit", f"{exit_status.tool} exited with {exit_status.code}", "framework",
                         f"{exit_status.tool} failed with {exit_status.code}",
                         "The compiler process failed; the root cause is usually printed earlier in its log.",
                         exit_status.line, exit_status.line, retained)]
    for outcome in (o for o in reversed(log.outcomes) if o.kind not in ("hang", "interrupted", "cut")):
        # A process a signal ended printed no error of its own: the signal is the failure (torchrun's
        # ChildFailedError after it only reports it).
        who = outcome.process or "A process"
        said = signal.Signals(outcome.signal).name if outcome.signal else "a signal"
        return [_generic(None, "process-crash", f"{who} was ended by a signal ({said})", "framework",
                         outcome.text, "A process was ended by a signal, not by an error it reported; what it was "
                         "doing when it ended (the lines before) says where to look.", outcome.line, outcome.line, retained)]
    for traceback in reversed(log.tracebacks):
        if traceback.exception:
            return [_generic(None, "python-exception", f"Unrecognised {traceback.exception}", "framework",
                             f"{traceback.exception}: {traceback.message or ''}".strip(),
                             "A Python exception ended the run; no catalogue entry knows its message yet.",
                             traceback.end_line, traceback.end_line, retained)]
    return _template_findings(log, retained) or _cut_traceback(log, retained) or _cut_at_compile(log, retained)


def _said(diagnostic: Diagnostic) -> tuple[str, str]:
    """What a diagnostic says, whichever copy: its code and the head of its message (a copy may be cut)."""
    return diagnostic.code.upper(), " ".join((diagnostic.message or "").split())[:60]


def _cut_traceback(log: ParsedLog, retained: list[SourceLine]) -> list[Finding]:
    """A paste that stops inside a traceback (`Process Process-1:`, `Traceback (most recent call last):`, maybe
    some frames) shows that something raised, not what: say so rather than "nothing recognised"."""
    if not log.tracebacks:
        return []
    traceback = log.tracebacks[-1]
    where = traceback.frames[-1] if traceback.frames else None
    summary = f"the last frame: {where.file}, line {where.lineno}" if where else "no frames were pasted"
    return [_generic(None, "python-traceback-cut", "A Python traceback whose exception the paste does not show", "framework",
                     summary, "Something raised an exception; the paste ends before the exception line that says "
                     "what. Paste the whole traceback, down to its last line.", traceback.line, traceback.end_line, retained)]


def _cut_at_compile(log: ParsedLog, retained: list[SourceLine]) -> list[Finding]:
    """A log whose last line is the compiler's command line shows no failure and no hang (nothing shows the compile
    ran): a note that says where the log stops and what to paste, not "nothing recognised"."""
    for outcome in (o for o in log.outcomes if o.kind == "cut"):
        return [_generic(None, "ends-at-compile", "The log ends at the compiler's command line", "compiler", outcome.text,
                         "Nothing after the command shows the compile running, finishing or failing: the paste may stop "
                         "there, or the compile ran without a word and the job was stopped. Paste what follows it, or "
                         "the compiler's own log (log-neuron-cc.txt in the work directory the command names).",
                         outcome.line, outcome.line, retained, severity="note")]
    return []


def _template_findings(log: ParsedLog, retained: list[SourceLine]) -> list[Finding]:
    """Error lines no signature knows, one finding per Drain template (nforensics/diagnose/templates.py): the
    lines a producer printed at an error level, else the plain lines that say outright something broke (a bare
    `Segmentation fault`, `runtimeError: 507 - System out of memory`): a log that failed is never silent."""
    errors: list[tuple[int, str, str | None]] = [
        (e.line, e.message, e.producer) for e in log.events if (e.level or "").upper() in ERROR_LEVELS]
    if not errors:
        levelled = log.with_repeats({e.line for e in log.events if e.level})
        errors = [(line.line, line.text.strip(), None) for line in retained
                  if line.line not in levelled and not _QUIET_HEAD.match(line.text) and says_it_failed(line.text)]
        errors = errors[-PLAIN_FAILURE_LINES:]
    if not errors:
        return []
    from nforensics.diagnose.templates import group_by_template

    producer = {line: who for line, _, who in errors}
    text_of = {line.line: line.text for line in retained}
    findings = []
    for group in group_by_template([(line, message) for line, message, _ in errors]):
        first, message = group.lines[0]
        component = {"runtime": "runtime", "compiler": "compiler"}.get(producer[first] or "", "framework")
        count = len(group.lines)
        finding = _generic(None, f"{component}-error", f"Unrecognised {component} error: {_shorten(group.template)}",
                           component, message,
                           f"An error line no catalogue entry knows yet; {count} line(s) share its template "
                           "(<*> marks the parts that differ between them).", first, first, retained)
        finding.fields = {"template": group.template, "occurrences": count}
        finding.evidence = [Evidence.model_construct(line=n, text=text_of.get(n, text)) for n, text in group.lines[:MAX_EVIDENCE]]
        findings.append(finding)
    return findings


def _shorten(text: str, width: int = 100) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
