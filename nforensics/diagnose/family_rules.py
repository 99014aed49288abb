"""How a family's detect rule holds on a log and how sure it makes the finding: every selector of the rule
must hold (each reads FamilyFacts), and the strongest kind of selector it used sets the confidence, because
a code's component letters say more than a word that happens to co-occur with another."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from nforensics.diagnose.families import FamilyFacts
from nforensics.diagnose.family_words import rule_words
from nforensics.knowledge import KnowledgeBase
from nforensics.knowledge.family_schema import Detect, Family

# Recognition confidence by the strongest kind of selector a rule used (see the module docstring).
SELECTOR_CONFIDENCE = {
    "code_components": 0.7, "nrt_statuses": 0.65, "structures": 0.6, "runtime_heads": 0.6, "compiler_heads": 0.6,
    "frame_paths": 0.6, "stages": 0.6,
    "frame_code": 0.55, "exceptions": 0.55, "raised_in": 0.55, "outcomes": 0.55, "words": 0.5, "context_words": 0.0,
}
WILDCARD_CODE_CONFIDENCE = 0.62
# A stage named by a compiler record's component says where the compiler was, as words say what failed; less
# than the deepest frame of its crash, so a family whose words say what failed there ranks first.
RECORD_STAGE_CONFIDENCE = 0.45
UNFINISHED = frozenset({"hang", "interrupted"})  # outcomes of a run that did not end by itself
NEAR_RECORD_LINES = 40  # how far from a record (`runtime_heads`, `compiler_heads`, a code) a rule's words may be
CONTEXT_CONFIDENCE = 0.45  # a rule that needs the run's setting (context_words) says where, not what, failed
HANG_CONFIDENCE = 0.45  # an open operation at the end of a log may also be a paste cut short
EXIT_CODE_CONFIDENCE = 0.45  # a process's exit status says how it ended; words that say what it refused say more


@dataclass
class FamilyHit:
    family: Family
    lines: list[int]
    confidence: float
    fields: dict[str, object] = field(default_factory=dict)
    specificity: int = 1  # how many conditions its rule met: of two equally confident hits, the narrower says more
    envelope: bool = False  # its family wraps a root cause reported elsewhere, and no rule of it read the failure itself


_SELECTORS = (
    ("code_components", FamilyFacts.code_components), ("nrt_statuses", FamilyFacts.nrt_statuses),
    ("structures", FamilyFacts.structures), ("runtime_heads", FamilyFacts.runtime_heads),
    ("compiler_heads", FamilyFacts.compiler_heads), ("frame_paths", FamilyFacts.frame_paths), ("stages", FamilyFacts.stages),
    ("frame_code", FamilyFacts.frame_code), ("exceptions", FamilyFacts.exceptions), ("raised_in", FamilyFacts.raised_in),
    ("outcomes", FamilyFacts.outcomes_),
    ("words", FamilyFacts.words), ("context_words", FamilyFacts.context_words),
)


def _near(records: list[int]) -> Callable[[int], bool]:
    lines = tuple(records)
    return lambda n: any(abs(n - line) <= NEAR_RECORD_LINES for line in lines)


def _rule_hit(facts: FamilyFacts, rule: Detect) -> tuple[list[int], dict[str, object], float, int] | None:
    lines: list[int] = []
    fields: dict[str, object] = {}
    confidence = 0.0
    heads: list[int] = []
    if rule.exceptions and (rule.frame_paths or rule.stages or rule.frame_code or rule.raised_in):
        facts = facts.raising(rule)
    specificity = max(0, len(rule.words) - 1) + bool(rule.signals)  # each selector, group past the first, signal
    for name, selector in _SELECTORS:
        if not getattr(rule, name):
            continue
        specificity += 1
        if name == "words" and heads:
            # Words that say what a runtime or compiler record (or a coded diagnostic) failed at are printed around it, not
            # anywhere in a long log (a warning at start-up is no cause of an error an hour later).
            facts = facts.keeping(_near(heads))
        held = selector(facts, rule)
        if held is None:
            return None
        if name in ("runtime_heads", "compiler_heads", "code_components"):
            heads += held[0]
        lines += held[0]
        fields = held[1] | fields
        placed_by_record = name == "stages" and "crash_component" not in held[1]
        by_exit_code = name == "structures" and "exit_code" in held[1]
        confidence = max(confidence, RECORD_STAGE_CONFIDENCE if placed_by_record else EXIT_CODE_CONFIDENCE if by_exit_code
                         else SELECTOR_CONFIDENCE[name])
    if rule.context_words:
        confidence = min(confidence, CONTEXT_CONFIDENCE)
    if rule.outcomes and set(rule.outcomes) <= UNFINISHED:
        confidence = HANG_CONFIDENCE  # (or the paste was cut, or someone was impatient)
    elif "*" in rule.code_components:  # any component: a family that names the component says more
        confidence = min(confidence, WILDCARD_CODE_CONFIDENCE)
    return sorted(set(lines)), fields, confidence, specificity


def detect_families(kb: KnowledgeBase, facts: FamilyFacts) -> list[FamilyHit]:
    """Every family with a rule that holds, with the lines behind it and the fields its selectors read."""
    errors_only = facts.keeping(lambda n: n not in facts.below_error)
    hits = []
    for family in kb.families.values():
        best: tuple[list[int], dict[str, object], float, int] | None = None
        rooted = False  # a rule that reads the failure itself held: the family's finding is no envelope
        held_lines: list[int] = []  # every line any rule of the family holds: all of them must be overcome
        every_level, errors = (facts, errors_only) if not family.recovered else (
            _unrecovered(facts, family.recovered), _unrecovered(errors_only, family.recovered))
        for rule in family.detect:
            held = _rule_hit(every_level if family.claims_warnings or rule.words_in_warnings else errors, rule)
            if held is not None:
                held_lines += held[0]
                rooted = rooted or rule.root
                if best is None or held[2:] > best[2:]:
                    best = held
        if best is not None and not (family.overcome and held_lines and facts.overcome(family.overcome, held_lines)):
            hits.append(FamilyHit(family, best[0], best[2], best[1], best[3], family.envelope and not rooted))
    return hits


def _unrecovered(facts: FamilyFacts, recovered: list[list[str]]) -> FamilyFacts:
    """The facts without the failure lines that say the program went on without what failed there."""
    patterns = [rule_words(tuple(group)) for group in recovered]
    return facts.keeping(lambda n: not all(p.search(facts.text_of.get(n, "")) for p in patterns))
