"""Rank a signature's hypotheses by the evidence present in the input and the artifact facts.

Score = prior + the weights of the evidence rules that hold. Every rule that holds cites the lines it saw;
a hypothesis with no supporting evidence keeps its `check`, which tells the user what to look at.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from itertools import islice
from operator import attrgetter

from nforensics.diagnose.versions import is_older, normalise_package, seen_version
from nforensics.fact_records import HLO_FACT_PREFIX, HloObservation
from nforensics.knowledge import compiled
from nforensics.knowledge.schema import EvidenceRule, HypothesisSpec
from nforensics.records import Environment, Evidence, Finding, Hypothesis, SourceLine
from nforensics.vocabulary import reads_as_failure

Facts = Mapping[str, object]
_MAX_CITED = 3
_LINE_NUMBER = attrgetter("line")


def _compare(value: object, rule: EvidenceRule) -> bool:
    if value is None:
        return False
    if rule.equals is not None:
        return str(value).lower() == str(rule.equals).lower()
    try:  # (an int is compared as it is: a count of 400 digits does not fit a float)
        number = value if isinstance(value, int) else float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return bool(value) and rule.min is None and rule.max is None
    return (rule.min is None or number >= rule.min) and (rule.max is None or number <= rule.max)


def _flag_matches(flag: str, wanted: str) -> bool:
    normalised = flag.replace(" ", "=")
    return normalised == wanted or normalised.startswith(wanted + "=") or (wanted.endswith("=") and normalised.startswith(wanted))


def _observe(rule: EvidenceRule, finding: Finding, env: Environment, retained: list[SourceLine],
             facts: Facts, defining: frozenset[int]) -> list[Evidence] | None:
    """The evidence lines when the rule's fact is present (empty list: present, no line to cite); None if absent."""
    if rule.pattern:
        search = compiled(rule.pattern).search
        # A signature's own message defines it: words every instance prints prove nothing about why, so
        # only a rule that says it reads inside the message (a barrier name, a violated condition) sees it.
        own = frozenset() if rule.in_message else defining
        hits = islice((line for line in retained if line.line not in own and search(line.text)), _MAX_CITED)
        return [Evidence.model_construct(line=line.line, text=line.text, note=rule.note) for line in hits] or None
    if rule.env:
        value = env.env_vars.get(rule.env)
        if value is None or (rule.value is not None and value != rule.value):
            return None
        return _cite(env, f"env:{rule.env}", f"{rule.env}={value}", rule.note)
    if rule.flag:
        flag = next((f for f in env.compiler_flags if _flag_matches(f, rule.flag)), None)
        return None if flag is None else _cite(env, f"flag:{flag}", flag, rule.note)
    if rule.target:
        if (env.target or "").lower() != rule.target.lower():
            return None
        return _cite(env, "target", f"target {env.target}", rule.note)
    if rule.package:
        version = seen_version(env, rule.package)
        if version is None or not is_older(rule.package, version, rule.below or ""):
            return None
        package = normalise_package(rule.package)
        return _cite(env, f"pkg:{package}", f"{package} {version}", rule.note)
    if rule.field:  # a field has no line of its own to cite: its value says what held
        value = finding.fields.get(rule.field)
        return [Evidence.model_construct(text=f"{rule.field} = {value}", note=rule.note)] if _compare(value, rule) else None
    if rule.fact:
        return [] if _compare(facts.get(rule.fact), rule) else None
    if rule.hlo:
        return _observe_hlo(rule, facts)
    return None


def _hlo_holds(value: object, rule: EvidenceRule) -> bool:
    if rule.equals is None and rule.min is None and rule.max is None:
        return bool(value)  # a bare `hlo = NAME`: the module has some
    return _compare(value, rule)


def _observe_hlo(rule: EvidenceRule, facts: Facts) -> list[Evidence] | None:
    """The observations of the named HLO fact that satisfy the rule, each in the module's own words."""
    found = facts.get(HLO_FACT_PREFIX + str(rule.hlo))
    held = [o for o in found if isinstance(o, HloObservation) and _hlo_holds(o.value, rule)] if isinstance(found, list) else []
    return [Evidence.model_construct(line=None, text=o.detail, note=rule.note, artifact=o.module)
            for o in held[:_MAX_CITED]] or None


def _hlo_modules(facts: Facts) -> str | None:
    """The HLO modules read (None: none was, and an `hlo` rule can tell nothing)."""
    found = facts.get(HLO_FACT_PREFIX + "instructions")
    if not isinstance(found, list) or not found:
        return None
    return ", ".join(dict.fromkeys(o.module for o in found if isinstance(o, HloObservation)))


def lines_between(retained: list[SourceLine], first: int, last: int) -> list[Evidence]:
    """The retained lines numbered first..last as evidence; `retained` is sorted by line number. Where one
    physical line held several (a notebook stream decoded), its lines that read as a failure stand for it."""
    start = bisect_left(retained, first, key=_LINE_NUMBER)
    stop = bisect_right(retained, last, lo=start, key=_LINE_NUMBER)
    lines = retained[start:stop]
    if len({line.line for line in lines}) < len(lines):
        failing = [line for line in lines if reads_as_failure(line.text)]
        lines = failing or lines
    return [Evidence.model_construct(line=line.line, text=line.text) for line in lines]


def _cite(env: Environment, key: str, text: str, note: str) -> list[Evidence]:
    line = env.lines.get(key)
    return [Evidence.model_construct(line=line, text=text, note=note)] if line else []


def rank_hypotheses(specs: list[HypothesisSpec], finding: Finding, env: Environment,
                    retained: list[SourceLine], facts: Facts, defining: frozenset[int] = frozenset()) -> list[Hypothesis]:
    """`defining`: the lines a signature's code, status or pattern matched; a family's message varies
    between instances, so a family finding passes none."""
    ranked = []
    modules = _hlo_modules(facts)
    for order, spec in enumerate(specs):
        score = spec.prior
        cited: list[Evidence] = []
        supported = False
        for rule in spec.evidence:
            if rule.hlo and modules is None:
                continue  # no HLO module: the rule can say nothing, neither present nor absent
            observed = _observe(rule, finding, env, retained, facts, defining)
            holds = (observed is None) if rule.absent else (observed is not None)
            if not holds:
                continue
            score += rule.weight
            supported |= rule.weight > 0
            if rule.absent and rule.hlo:
                cited.append(Evidence.model_construct(text=f"not in the HLO: {rule.note}", note=rule.note, artifact=modules))
            elif rule.absent:
                cited.append(Evidence.model_construct(text=f"not in the input: {rule.note}", note=rule.note))
            else:
                # Facts from artifacts and fields have no input line to cite: the note says what held.
                cited.extend(observed or [Evidence.model_construct(text=rule.note, note=rule.note)])
        ranked.append((-round(score, 6), order, Hypothesis.model_construct(
            id=spec.id, title=spec.title, score=round(score, 3), explanation=spec.explanation,
            evidence=cited, check=None if supported else spec.check)))
    return [h for _, _, h in sorted(ranked, key=lambda item: (item[0], item[1]))]
