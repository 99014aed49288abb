"""The oracle: one run of a variant, judged by nforensics' own diagnosis.

Every reducer reduces to one predicate, "does it still fail the same way?" (Zeller & Hildebrandt 2002;
C-Vise and llvm-reduce interestingness tests). A different crash must never count as reproducing, or a
reducer drifts to a new bug (bugpoint's classic failure), so the expected code or signature is pinned.
"""

from __future__ import annotations

import difflib
import signal
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable

from nforensics.errors import InputError
from nforensics.knowledge.order import code_key
from nforensics.knowledge.schema import Verdict

REPRODUCES: Verdict = "REPRODUCES"
PASSES: Verdict = "PASSES"
DIFFERENT_FAILURE: Verdict = "DIFFERENT_FAILURE"
UNTESTABLE: Verdict = "UNTESTABLE"
VERDICTS: tuple[Verdict, ...] = (REPRODUCES, PASSES, DIFFERENT_FAILURE, UNTESTABLE)

# What `nforensics oracle` exits with, per `--mode`; 125 is "cannot test" (skip) to git bisect and reducers.
# interesting: 0 = still interesting (reproduces), the contract of C-Vise, creduce and llvm-reduce scripts.
# bisect: `git bisect run` hunting the change that introduced a failure, where reproducing is "bad" (1) and
# passing is "good" (0). A different failure is neither: it may hide the expected one, so it is skipped.
EXIT_CODES: dict[str, dict[Verdict, int]] = {
    "interesting": {REPRODUCES: 0, PASSES: 1, DIFFERENT_FAILURE: 1, UNTESTABLE: 125},
    "bisect": {REPRODUCES: 1, PASSES: 0, DIFFERENT_FAILURE: 125, UNTESTABLE: 125},
}
MODES = tuple(EXIT_CODES)


def exit_code(verdict: Verdict, mode: str) -> int:
    """The oracle's exit status for a verdict in `mode` (interesting | bisect)."""
    if mode not in EXIT_CODES:
        raise InputError(f"unknown --mode {mode!r}: use interesting (reducers) or bisect (git bisect run)")
    return EXIT_CODES[mode][verdict]

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
    it, the signature id, upstream code and legacy aliases (TEN404 for NCC_ITEN404). Names compare as the
    catalogue compares codes (knowledge.order.code_key: `IXLV002`, `ixlv002` and `NCC_IXLV002` are one).
    `infrastructure` holds the signatures the knowledge base files as environment problems (no device, host
    OOM kill, driver mismatch, hardware errors): a run that only hit those never tested anything.
    `canonical` is the name the journal and the answers use (the catalogue's code, else its signature id)."""

    names: frozenset[str]
    infrastructure: frozenset[str] = frozenset()
    canonical: str = ""

    @cached_property
    def _keys(self) -> frozenset[str]:
        return frozenset(code_key(n) for n in self.names)

    def matches(self, code: str | None, signature: str | None) -> bool:
        return any(n and code_key(n) in self._keys for n in (code, signature))


def expectation(expect: str) -> Expectation:
    """Resolve `--expect` against the catalogue and its aliases: a signature id or any of its codes, with or
    without the NCC_ prefix and in any case. Anything else is an input error naming the nearest known name:
    a code the catalogue does not know is never a finding's code, so every run would count as a different
    failure."""
    from nforensics.knowledge import load_kb

    wanted = expect.strip()
    if not wanted:
        raise InputError("--expect is empty: give a code or signature id, e.g. NCC_IXLV002 (list them with `nforensics codes`)")
    signatures = load_kb().signatures
    known = {sig.id: [n for n in (sig.code, *sig.aliases, *sig.match.codes, sig.id) if n] for sig in signatures}
    matched = [sid for sid, names in known.items() if code_key(wanted) in {code_key(n) for n in names}]
    if not matched:
        raise InputError(f"--expect {wanted}: no signature in the catalogue has this code or id"
                         f"{_did_you_mean(wanted, known.values())} (list them with `nforensics codes`)")
    names = {wanted, *(n for sid in matched for n in known[sid])}
    infrastructure = frozenset(sig.id for sig in signatures if sig.status == "environment")
    canonical = known[matched[0]][0]  # the upstream code when it has one, else the signature id
    if code_key(canonical) != code_key(wanted):  # several signatures share the code typed: keep the user's word
        canonical = next((n for n in known[matched[0]] if code_key(n) == code_key(wanted)), canonical)
    return Expectation(frozenset(names), infrastructure, canonical)


def _did_you_mean(wanted: str, known: Iterable[list[str]]) -> str:
    """`; did you mean NCC_IXLV002?` for a near miss (a dropped digit, a swapped letter), else nothing."""
    by_key: dict[str, str] = {}
    for names in known:
        for name in names:
            by_key.setdefault(code_key(name), name)
            by_key.setdefault(name.upper(), name)
    close = difflib.get_close_matches(wanted.upper(), list(by_key), n=1, cutoff=0.75)
    close = close or difflib.get_close_matches(code_key(wanted), list(by_key), n=1, cutoff=0.75)
    return f"; did you mean {by_key[close[0]]}?" if close else ""


_HANG_FAMILY = "process-hang"  # knowledge/families/process-hang.toml


def judge(exit_code: int, output: str, expect: Expectation) -> Judgement:
    """Judge a finished run from its exit status and its combined stdout+stderr."""
    if exit_code in _INFRASTRUCTURE_EXITS:
        return Judgement(UNTESTABLE, note=_INFRASTRUCTURE_EXITS[exit_code])
    from nforensics.pipeline import analyze_text

    findings = analyze_text(output, source="<run>").findings
    for finding in findings:
        if expect.matches(finding.code, finding.signature):
            return Judgement(REPRODUCES, finding.code or finding.signature)
    # A log that stops inside an operation reads as a hang; a run that exited did not hang there.
    errors = [f for f in findings if f.severity == "error" and not (exit_code == 0 and f.family == _HANG_FAMILY)]
    if exit_code == 0 and not errors:
        return Judgement(PASSES)
    if errors and errors[0].signature in expect.infrastructure:  # the top-ranked cause: the run never got going
        return Judgement(UNTESTABLE, errors[0].code or errors[0].signature, f"infrastructure: {errors[0].title}")
    culprit = errors[0].code or errors[0].signature if errors else None
    return Judgement(DIFFERENT_FAILURE, culprit, note=f"exit {exit_code}")
