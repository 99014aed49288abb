"""The recognition order (nforensics/knowledge/order.py, docs/architecture.md "Recognition order"): named tiers
derived from each signature's [match], specificity within a tier, and `before` for the rare exception."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from nforensics.pipeline import analyze_text
from nforensics.errors import InputError
from nforensics.knowledge import BUILTIN_DIR, build, builtin_kb
from nforensics.knowledge.order import TIERS, derived_tier, required_literals, specificity, tier_of
from nforensics.knowledge.schema import Signature

KB = builtin_kb()


def signature(sid: str, **match: object) -> Signature:
    return Signature.model_validate({"id": sid, "title": sid, "component": "runtime", "summary": "s", "meaning": "m",
                                     "sample_log": f"{sid}.log", "match": match})


def _commented(text: str, key: str) -> list[bool]:
    """For each `key = ` line of a TOML text: whether a comment line right above it says why."""
    lines = text.splitlines()
    return [i > 0 and lines[i - 1].lstrip().startswith("#") for i, line in enumerate(lines) if line.startswith(f"{key} = ")]


def test_every_builtin_signature_has_a_tier_and_explicit_ones_are_rare_and_explained():
    explicit = []
    for sig in KB.signatures:
        assert tier_of(sig.match) in TIERS
        if sig.match.tier:
            assert sig.match.tier != derived_tier(sig.match), sig.id  # the schema refuses it too
            explicit.append(sig.id)
    assert len(explicit) <= len(KB.signatures) // 20, explicit
    for path in BUILTIN_DIR.glob("*.toml"):
        text = path.read_text(encoding="utf-8")
        assert "priority" not in text, path.name
        assert all(_commented(text, "tier")) and all(_commented(text, "before")), f"{path.name}: say why, above the line"


def test_builtin_relations_name_loaded_signatures_without_a_circle():
    ids = {s.id for s in KB.signatures}
    for sig in KB.signatures:
        assert set(sig.match.before) <= ids - {sig.id}, sig.id
    build(KB.signatures, families={})  # RecognitionOrder refuses unknown names and circles when the catalogue loads


def test_one_codes_signatures_are_tried_in_recognition_order():
    """The message-qualified causes of a code before the bare code; a legacy alias after the current code."""
    assert [s.id for s in KB.by_code["NCC_ITEN404"]][-1] == "ncc-iten404-internal-tensorizer-error"
    assert all(s.match.message for s in KB.by_code["NCC_ITEN404"][:-1])
    extp004 = [s.id for s in KB.by_code["NCC_EXTP004"]]
    assert extp004[0] == "ncc-extp004-instruction-limit-exceeded" and "legacy-lur015-too-many-instructions" in extp004
    ranks = [KB.order.rank(s) for s in KB.by_status]
    assert ranks == sorted(ranks)


@pytest.mark.parametrize(("match", "tier"), [
    ({"codes": ["NCC_EXYZ001"]}, "code"),
    ({"codes": ["NCC_EXYZ001"], "nrt_statuses": ["NRT_FAILURE"]}, "code"),
    ({"nrt_statuses": ["NRT_EXEC_OOB"], "patterns": ["scatter/gather"]}, "status"),
    ({"exit_codes": [137], "patterns": ["SIGKILL"]}, "status"),
    ({"nrt_statuses": ["NRT_RESOURCE"]}, "fallback"),
    ({"patterns": ["widget overflow"]}, "pattern"),
    ({"codes": ["F134"], "envelope": True}, "envelope"),
])
def test_the_tier_follows_from_how_a_signature_matches(match, tier):
    assert tier_of(signature("s", **match).match) == tier


def test_an_explicit_tier_changes_the_derived_one():
    assert tier_of(signature("s", nrt_statuses=["NRT_FAILURE"], patterns=["failed"], tier="fallback").match) == "fallback"


@pytest.mark.parametrize(("match", "message"), [
    ({"patterns": ["x"], "tier": "urgent"}, "Input should be 'code', 'status', 'pattern'"),  # an unknown name
    ({"codes": ["NCC_EXYZ001"], "tier": "code"}, "what [match] derives already"),
    ({"patterns": ["x"], "tier": "fallback"}, "needs a code, status or exit code"),
    ({"patterns": ["x"], "tier": "code"}, "needs codes"),
    ({"codes": ["F134"], "tier": "envelope"}, "envelope = true"),
    ({"patterns": ["x"], "priority": 80}, "`priority` is gone"),
])
def test_the_schema_refuses_a_tier_that_is_unknown_redundant_or_unfit(match, message):
    with pytest.raises(ValidationError, match=re.escape(message)):
        signature("s", **match)


@pytest.mark.parametrize(("pattern", "literals"), [
    ("Timestamp program stop timeout", 30),
    (r"nrt_init failed\.?\s*Status\s*=\s*\d+", 22),  # optional dot, spaces and digits count nothing
    (r"(?:inference|execution) timeout", 17),  # an alternation counts its shortest branch
    (r"(?<!Ignoring\) )[A-Z_]+: x{3}", 5),  # lookarounds and classes count nothing, a fixed repeat counts
])
def test_a_patterns_specificity_is_the_literal_text_it_requires(pattern, literals):
    assert required_literals(pattern) == literals


def test_specificity_within_a_tier():
    bare = signature("bare", codes=["NCC_ITEN404", "TEN404"]).match
    narrowed = signature("narrowed", codes=["NCC_ITEN404"], message="BirCodeGenLoop").match
    broad = signature("broad", nrt_statuses=["NRT_EXEC_OOB", "NRT_RESOURCE"], patterns=["failed to run"]).match
    narrow = signature("narrow", nrt_statuses=["NRT_EXEC_OOB"], patterns=["failed"]).match
    assert specificity(narrowed) > specificity(bare)  # the message narrows the code
    assert specificity(bare)[1] == -1  # NCC_ITEN404 and TEN404 are one code
    assert specificity(narrow) > specificity(broad)  # one status is narrower than two, before any wording
    long_words = signature("long", patterns=["failed to run embedding table update", "embedding update oob"]).match
    short_words = signature("short", patterns=["failed to run"]).match
    assert specificity(long_words) > specificity(short_words)


def test_before_puts_a_signature_just_ahead_of_the_one_it_names():
    general = signature("general", nrt_statuses=["NRT_EXEC_OOB"], patterns=["failed to run scatter/gather"])
    tied = signature("tied", nrt_statuses=["NRT_EXEC_NC_BUSY"], patterns=["failed to run scatter/gather"])
    team = signature("team", patterns=["gather"])
    assert build([general, tied, team], families={}).order.rank(team) > build([general], families={}).order.rank(general)
    ahead = signature("team", patterns=["gather"], before=["general"])
    order = build([general, tied, ahead], families={}).order
    assert order.rank(ahead) < order.rank(general) == order.rank(tied)  # so ahead of what ties with it too


def test_before_must_name_a_loaded_signature_and_not_go_round_in_a_circle():
    with pytest.raises(InputError, match=r"'a': \[match\]\.before names \['nobody'\]"):
        build([signature("a", patterns=["x"], before=["nobody"])], families={})
    circle = [signature("a", patterns=["x"], before=["b"]), signature("b", patterns=["y"], before=["c"]),
              signature("c", patterns=["z"], before=["a"])]
    with pytest.raises(InputError, match="goes round in a circle: a -> b -> c -> a"):
        build(circle, families={})
    with pytest.raises(InputError, match="circle: a -> a"):
        build([signature("a", patterns=["x"], before=["a"])], families={})


WRAPPED_BIR = """\
2025-03-26T03:43:31Z ERROR 42759 [neuronxcc.driver.CommandDriver]: ***************************************************************
2025-03-26T03:43:31Z ERROR 42759 [neuronxcc.driver.CommandDriver]:  An Internal Compiler Error has occurred
2025-03-26T03:43:31Z ERROR 42759 [neuronxcc.driver.CommandDriver]: ***************************************************************
[NLA001]  Unhandled exception with message: === BIR error ===
Reason: Access pattern out of bound.
Instruction: I-6012-337-accel_sg0000
Opcode: Memset
Access Pattern: [[231,27],[1,460]]
Offset: 0
Memory Location: {bias_memset.719}@SB<0,0>(128x2)
"""


def test_a_wrapper_code_gives_way_to_the_signature_of_what_it_wraps():
    # NLA001 is the backend's catch-all for an exception it has no code for: the wrapped BIR block says what failed.
    findings = analyze_text(WRAPPED_BIR).findings
    assert findings[0].signature == "bir-verification-access-pattern-out-of-bound"
    assert analyze_text("[NLA001]  Unhandled exception with message: Unsupported free dims\n").findings[0].signature \
        == "ncc-inla001-unhandled-exception"
