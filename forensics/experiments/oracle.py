"""The oracle: one run of a variant, judged by nforensics' own diagnosis.

Every reducer reduces to one predicate, "does it still fail the same way?" (Zeller & Hildebrandt 2002;
C-Vise and llvm-reduce interestingness tests). A different crash must never count as reproducing, or a
reducer drifts to a new bug (bugpoint's classic failure), so the expected code or signature is pinned.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from forensics.knowledge.schema import Verdict

REPRODUCES: Verdict = "REPRODUCES"
PASSES: Verdict = "PASSES"
DIFFERENT_FAILURE: Verdict = "DIFFERENT_FAILURE"
UNTESTABLE: Verdict = "UNTESTABLE"
VERDICTS: tuple[Verdict, ...] = (REPRODUCES, PASSES, DIFFERENT_FAILURE, UNTESTABLE)

# `git bisect run` convention: 0 good-for-us (reproduces), 1 does not, 125 cannot test.
EXIT_CODES: dict[Verdict, int] = {REPRODUCES: 0, PASSES: 1, DIFFERENT_FAILURE: 1, UNTESTABLE: 125}

# Exit statuses that say the run never really happened: the shell could not execute or find the
# command, or the host killed it (SIGKILL, typically the OOM killer), reported directly or by a shell.
_INFRASTRUCTURE_EXITS = {
    126: "the command could not be executed (exit 126)",
    127: "command not found (exit 127)",
    -signal.SIGKILL: "killed by signal 9 (host out of memory?)",
    128 + signal.SIGKILL: "killed by signal 9 (exit 137, host out of memory?)",
}


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    code: str | None = None  # the finding that decided it: upstream code, else our signature id
    note: str = ""  # why a run was untestable or failed differently


@dataclass(frozen=True)
class Expectation:
    """The names that count as "the same failure": what the user typed plus, when the knowledge base knows
    it, the signature id, upstream code and legacy aliases (TEN404 for NCC_ITEN404). `infrastructure`
    holds the signatures the knowledge base files as environment problems (no device, host OOM kill,
    driver mismatch, hardware errors): a run that only hit those never tested anything."""

    names: frozenset[str]
    infrastructure: frozenset[str] = frozenset()

    def matches(self, code: str | None, signature: str | None) -> bool:
        return any(n and n.casefold() in self.names for n in (code, signature))


def expectation(expect: str) -> Expectation:
    from forensics.knowledge import load_kb

    wanted = expect.strip().casefold()
    names = {wanted}
    signatures = load_kb().signatures
    for sig in signatures:
        known = {n.casefold() for n in (sig.id, sig.code, *sig.aliases) if n}
        if wanted in known:
            names |= known
    infrastructure = frozenset(sig.id for sig in signatures if sig.status == "environment")
    return Expectation(frozenset(names), infrastructure)


def judge(exit_code: int, output: str, expect: Expectation) -> Judgement:
    """Judge a finished run from its exit status and its combined stdout+stderr."""
    if exit_code in _INFRASTRUCTURE_EXITS:
        return Judgement(UNTESTABLE, note=_INFRASTRUCTURE_EXITS[exit_code])
    from forensics.pipeline import analyze_text

    findings = analyze_text(output, source="<run>").findings
    for finding in findings:
        if expect.matches(finding.code, finding.signature):
            return Judgement(REPRODUCES, finding.code or finding.signature)
    errors = [f for f in findings if f.severity == "error"]
    if exit_code == 0 and not errors:
        return Judgement(PASSES)
    if errors and errors[0].signature in expect.infrastructure:  # the top-ranked cause: the run never got going
        return Judgement(UNTESTABLE, errors[0].code or errors[0].signature, f"infrastructure: {errors[0].title}")
    culprit = errors[0].code or errors[0].signature if errors else None
    return Judgement(DIFFERENT_FAILURE, culprit, note=f"exit {exit_code}")
