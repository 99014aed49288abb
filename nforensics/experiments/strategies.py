"""Strategies over the runner: the full sweep, bisection of an ordered knob, delta debugging (ddmin) of a
set, and the knowledge base's hypothesis checks. Each asks the oracle "does it still reproduce?"; a
different failure never counts as reproducing.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Callable, Sequence, TypeVar

from nforensics.experiments.compilers import COMPILER, PACKAGE
from nforensics.experiments.oracle import PASSES, UNTESTABLE
from nforensics.experiments.plan import Template, Variant, confirm_variants
from nforensics.knowledge.schema import Confirm, HypothesisSpec
from nforensics.experiments.runner import Experiment, VariantResult

T = TypeVar("T")
FIXED_IN = "@fixed_in"  # in a check's matrix of releases: the one the signature's [fixed_in] names


def sweep(exp: Experiment, template: Template, knobs: dict[str, list[str]], cases: list[dict[str, str]]) -> list[VariantResult]:
    """Every combination of the knobs (or the plan's explicit cases), in a stable order."""
    points = cases or [dict(zip(knobs, combo, strict=True)) for combo in itertools.product(*knobs.values())]
    return exp.run(template.variant(p) for p in points)


@dataclass
class BisectResult:
    boundary: str | None  # the smallest value that reproduces (with `fixes`: that no longer reproduces)
    runs: int
    monotone: bool
    warnings: list[str] = field(default_factory=list)
    results: list[VariantResult] = field(default_factory=list)
    fixes: bool = False  # the failure goes away along the knob: the boundary is where it stops


def bisect(
    exp: Experiment, template: Template, knob: str, values: list[str], fixed: dict[str, str] | None = None,
    either_way: bool = False,
) -> BisectResult:
    """The smallest value of an ordered knob that reproduces, in at most ceil(log2(n)) + 2 runs.

    Both ends are checked first: if the first value already reproduces while the last does not, the
    failure is not monotone in the knob and the answer cannot be trusted; unless the knob goes `either_way`
    (compiler releases: a later release may fix what an earlier one broke), and then the answer is the first
    value that no longer reproduces.
    """
    fixed = fixed or {}
    tested: dict[int, VariantResult] = {}

    def check(*indexes: int) -> list[VariantResult]:
        results = exp.run(template.variant({**fixed, knob: values[i]}) for i in indexes)
        tested.update(zip(indexes, results, strict=True))
        return results

    def done(boundary: int | None, monotone: bool = True, *warnings: str, fixes: bool = False) -> BisectResult:
        ordered = [tested[i] for i in sorted(tested)]
        answer = None if boundary is None else values[boundary]
        return BisectResult(answer, len(tested), monotone, list(warnings), ordered, fixes)

    lo, hi = 0, len(values) - 1
    first, last = check(lo, hi) if hi > lo else check(lo) * 2
    for end, result in ((values[lo], first), (values[hi], last)):
        if result.verdict == UNTESTABLE:
            return done(None, True, f"{knob}={end} is untestable ({result.runs[0].note}): no boundary")
    fixes = either_way and first.reproduces and not last.reproduces
    if first.reproduces and not fixes:
        if not last.reproduces:
            why = f"the failure is not monotone in {knob}: {values[lo]} reproduces but {values[hi]} does not"
            return done(lo, False, why)
        return done(lo)
    if not (last.reproduces or fixes):
        return done(None)
    # Invariant: values[lo] does not reproduce and values[hi] does (with `fixes`: the other way round).
    skipped: set[int] = set()
    while hi - lo > 1:
        candidates = sorted((i for i in range(lo + 1, hi) if i not in skipped), key=lambda i: abs(i - (lo + hi) // 2))
        if not candidates:
            why = f"every {knob} between {values[lo]} and {values[hi]} is untestable: boundary is at most {values[hi]}"
            return done(hi, True, why, fixes=fixes)
        mid = candidates[0]
        (result,) = check(mid)
        if result.verdict == UNTESTABLE:
            skipped.add(mid)
        elif result.reproduces != fixes:
            hi = mid
        else:
            lo = mid
    return done(hi, fixes=fixes)


def bisect_budget(n: int) -> int:
    return math.ceil(math.log2(max(n, 1))) + 2


@dataclass
class ReduceResult:
    minimal: list[str] | None  # None: the full set does not reproduce
    runs: int
    warnings: list[str] = field(default_factory=list)


def reduce(
    exp: Experiment, template: Template, items: Sequence[str], batch: int, fixed: dict[str, str] | None = None
) -> ReduceResult:
    """ddmin (Zeller & Hildebrandt 2002): a 1-minimal subset of `items` that still reproduces.

    Candidates of one round are tried `batch` at a time in parallel and the first reproducing one in
    order wins, so the answer is the same as sequential ddmin whatever the pool size (C-Reduce's
    deterministic speculation).
    """
    fixed = fixed or {}
    items = list(items)

    def first_reproducing(candidates: list[list[str]]) -> int | None:
        for start in range(0, len(candidates), max(1, batch)):
            chunk = candidates[start : start + batch]
            for offset, result in enumerate(exp.run(template.variant(fixed, s) for s in chunk)):
                if result.reproduces:
                    return start + offset
        return None

    full, empty = exp.run([template.variant(fixed, items), template.variant(fixed, [])])
    if not full.reproduces:
        why = f"the full set does not reproduce ({full.verdict}): nothing to reduce"
        return ReduceResult(None, len(exp.tested), [why])
    if empty.reproduces:
        return ReduceResult([], len(exp.tested))
    return ReduceResult(ddmin(items, first_reproducing), len(exp.tested))


def ddmin(items: list[T], first_reproducing: Callable[[list[list[T]]], int | None]) -> list[T]:
    """The ddmin loop over `items`, known to reproduce: a 1-minimal subset. `first_reproducing` is asked for the
    index of the first candidate (in order) that still reproduces, or None; the flag reducer above and the HLO
    reducer (nforensics/experiments/hlo_reduce.py) each say what a candidate is and how it is tried."""
    current, n = list(items), 2
    while len(current) >= 2:
        chunks = [current[i * len(current) // n : (i + 1) * len(current) // n] for i in range(n)]
        # With two chunks each complement is the other chunk: nothing new to try.
        complements = [[x for j, c in enumerate(chunks) if j != i for x in c] for i in range(n)] if n > 2 else []
        found = first_reproducing(chunks + complements)
        if found is not None and found < n:  # a chunk alone reproduces: restart on it
            current, n = chunks[found], 2
        elif found is not None:  # a complement reproduces: drop that chunk, keep the granularity
            current, n = complements[found - n], max(n - 1, 2)
        elif n < len(current):
            n = min(2 * n, len(current))
        else:
            break  # every single item is needed: 1-minimal
    return current


@dataclass
class HypothesisCheck:
    id: str
    title: str
    expect: str | None  # the verdict that confirms it
    status: str  # confirmed | refuted | inconclusive | not checked
    reason: str
    result: VariantResult | None  # the run that decided it (the first that did not give `expect`, else the first)
    results: list[VariantResult] = field(default_factory=list)  # every run of its plan (a matrix has several)
    tier: str = "device"


@dataclass
class ConfirmResult:
    signature: str
    code: str | None
    baseline: VariantResult
    checks: list[HypothesisCheck]


def confirm_plan(template: Template, knobs: dict[str, str], signature) -> list[tuple[HypothesisSpec, list[Variant], str]]:
    """Per hypothesis: the variants its `confirm` block asks for (one per matrix cell), or none and why; then,
    when the knowledge base says which neuronx-cc release fixed the failure, the same run with that release."""
    fixed = getattr(signature, "fixed_in", None)
    release = fixed.version if fixed is not None and fixed.component == PACKAGE else None
    planned: list[tuple[HypothesisSpec, list[Variant], str]] = []
    for h in [*signature.hypotheses, *_fixed_in_check(signature, release)]:
        if h.confirm is None:
            planned.append((h, [], "no re-run declared"))
        elif FIXED_IN in h.confirm.matrix.get(COMPILER, ()) and release is None:
            planned.append((h, [], "the knowledge base names no neuronx-cc release that fixed it"))
        else:
            planned.append((h, *confirm_variants(template, knobs, _with_release(h.confirm, release))))
    return planned


def _with_release(confirm: Confirm, release: str | None) -> Confirm:
    releases = confirm.matrix.get(COMPILER)
    if not releases or FIXED_IN not in releases:
        return confirm
    named = [release if r == FIXED_IN else r for r in releases]
    return confirm.model_copy(update={"matrix": {**confirm.matrix, COMPILER: named}})


def _fixed_in_check(signature, release: str | None) -> list[HypothesisSpec]:
    if release is None or any(FIXED_IN in h.confirm.matrix.get(COMPILER, ()) or release in h.confirm.matrix.get(COMPILER, ())
                              for h in signature.hypotheses if h.confirm):
        return []  # (a hypothesis of its own runs that release already)
    fixed = signature.fixed_in
    sdk = f" (Neuron SDK {fixed.sdk})" if fixed.sdk else ""
    return [HypothesisSpec(
        id=f"fixed-in-{PACKAGE}-{fixed.version}", title=f"Fixed in {PACKAGE} {fixed.version}{sdk}",
        confirm=Confirm(description=f"The same run with {PACKAGE} {fixed.version}, the release the knowledge base says "
                                    "fixed it: it should pass.", expect=PASSES, matrix={COMPILER: [fixed.version]}))]


def baseline_tier(signature) -> str:
    """A failure the compiler reports (on the graph or on a kernel) reproduces without a device: its baseline,
    and every check that does not say otherwise, is a compile-tier run."""
    return "compile" if signature.component in ("compiler", "nki") else "device"


def check_tier(hypothesis: HypothesisSpec, signature) -> str:
    return (hypothesis.confirm.tier if hypothesis.confirm else None) or baseline_tier(signature)


def confirm(exp: Experiment, template: Template, knobs: dict[str, str], signature, code: str | None) -> ConfirmResult:
    """Run the baseline and each hypothesis' declared variants, the compile tier first (no NeuronCore) and the
    device tier only when no compile-tier check confirmed its hypothesis. A hypothesis is confirmed when every
    run of its plan gets the verdict the knowledge base predicts (and the baseline reproduces)."""
    planned = confirm_plan(template, knobs, signature)
    by_tier = {tier: [(h, variants) for h, variants, _ in planned if variants and check_tier(h, signature) == tier]
               for tier in ("compile", "device")}
    compile_runs = [v for _, variants in by_tier["compile"] for v in variants]
    no_failure = "not run: the baseline did not reproduce ({})"  # (then no run can decide anything)
    if baseline_tier(signature) == "compile":  # the baseline is a compile too: one batch
        baseline, *compiled = exp.run([template.variant(knobs), *compile_runs], cores=0)
        checks = _judged_tier(by_tier["compile"], iter(compiled), baseline, "compile")
    else:
        (baseline,) = exp.run([template.variant(knobs)])
        checks = (_judged_tier(by_tier["compile"], iter(exp.run(compile_runs, cores=0)), baseline, "compile")
                  if baseline.reproduces else _not_run(by_tier["compile"], no_failure.format(baseline.verdict), "compile"))
    decided = next((c.id for c in checks.values() if c.status == "confirmed"), None)
    if decided or not baseline.reproduces:
        why = f"not run: the compile tier decided ({decided} confirmed)" if decided else no_failure.format(baseline.verdict)
        checks |= _not_run(by_tier["device"], why, "device")
    else:
        device_runs = [v for _, variants in by_tier["device"] for v in variants]
        checks |= _judged_tier(by_tier["device"], iter(exp.run(device_runs)), baseline, "device")
    ordered = [checks.get(h.id) or _unchecked(h, why, "device") for h, _, why in planned]
    return ConfirmResult(signature.id, code, baseline, ordered)


def _unchecked(hypothesis: HypothesisSpec, why: str, tier: str) -> HypothesisCheck:
    expect = hypothesis.confirm.expect if hypothesis.confirm else None
    return HypothesisCheck(hypothesis.id, hypothesis.title, expect, "not checked", why, None, [], tier)


def _not_run(wanted, why: str, tier: str) -> dict[str, HypothesisCheck]:
    return {h.id: _unchecked(h, why, tier) for h, _ in wanted}


def _judged_tier(wanted, results, baseline: VariantResult, tier: str) -> dict[str, HypothesisCheck]:
    return {h.id: _judged(h, [next(results) for _ in variants], baseline, tier) for h, variants in wanted}


def _judged(hyp: HypothesisSpec, results: list[VariantResult], baseline: VariantResult, tier: str) -> HypothesisCheck:
    assert hyp.confirm is not None  # variants are planned only for a declared check
    expect, what = hyp.confirm.expect, hyp.confirm.description
    missed = [r for r in results if r.verdict != expect]  # runs that did not give the predicted verdict
    refuting = [r for r in missed if r.verdict != UNTESTABLE]
    decisive = (refuting or missed or results)[0]
    cells = f" ({len(results) - len(missed)}/{len(results)} runs)" if len(results) > 1 else ""
    if not baseline.reproduces:
        status, reason = "inconclusive", f"the baseline did not reproduce ({baseline.verdict})"
    elif refuting:  # one tested run against the prediction refutes it, whatever another run could not test
        status, reason = "refuted", f"{what}: {decisive.verdict}, predicted {expect}{cells}"
    elif missed:
        status, reason = "inconclusive", f"a variant was untestable ({decisive.runs[0].note})"
    else:
        status, reason = "confirmed", f"{what}: {expect} as predicted{cells}"
    flaky = [r.flaky for r in results if r.flaky]
    if flaky:
        reason += f" (flaky: {flaky[0]})"
    return HypothesisCheck(hyp.id, hyp.title, expect, status, reason, decisive, results, tier)
