"""Recognition order: which signature claims a line when several match it (docs/architecture.md, "Recognition
order").

Every signature sits in a named tier, derived from how its `[match]` recognises it (`tier = ...` only where
the derivation is wrong); within a tier the more specific signature comes first, and specificity is read off
the signature itself, never a number per file. A named relation (`before`) orders the rare pair neither can.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, get_args

from nforensics.errors import InputError
from nforensics.linear_regex.necessary import sre_parse  # the stdlib's regex parser, by either name

if TYPE_CHECKING:
    from nforensics.knowledge.schema import Match, Signature

# Best first. `fallback`: the general meaning of a printed code or status, which any more specific signature
# on the same lines explains first. `envelope`: a wrapper's report of a failure (exit 70, [F134]).
Tier = Literal["code", "status", "pattern", "fallback", "envelope"]
TIERS: tuple[Tier, ...] = get_args(Tier)


def reject_priority(match_table: Any) -> Any:
    """A pack written for the numbered order is told what replaced it (the schema forbids unknown keys)."""
    if isinstance(match_table, dict) and "priority" in match_table:
        raise ValueError(
            "`priority` is gone: the order is the signature's tier, derived from [match] (set `tier = "
            f"{' | '.join(repr(t) for t in TIERS)}` only where that is wrong), then its specificity "
            "(docs/architecture.md, 'Recognition order')")
    return match_table


def derived_tier(match: Match) -> Tier:
    """The tier how the signature matches puts it in. A bare runtime status (or exit code) is `fallback`: it
    is a call's report of a failure whose cause the runtime printed before it; with wording it is `status`."""
    if match.envelope:
        return "envelope"
    if match.codes:
        return "code"
    if match.nrt_statuses or match.exit_codes:
        return "status" if match.patterns else "fallback"
    return "pattern"


def tier_of(match: Match) -> Tier:
    return match.tier or derived_tier(match)


def check_tier(match: Match) -> None:
    """An explicit tier must change the derived one and fit what the signature matches on."""
    if match.tier is None:
        return
    if match.envelope or match.tier == "envelope":
        raise ValueError("an envelope's tier comes from `envelope = true` alone: drop `tier`")
    if match.tier == derived_tier(match):
        raise ValueError(f"tier {match.tier!r} is what [match] derives already: drop `tier`")
    printed = match.nrt_statuses or match.exit_codes
    present, wanted = {"code": (match.codes, "codes"), "status": (printed, "nrt_statuses or exit_codes"),
                       "pattern": (match.patterns, "patterns"),
                       "fallback": (match.codes or printed, "a code, status or exit code to explain")}[match.tier]
    if not present:
        raise ValueError(f"tier {match.tier!r} needs {wanted} in [match]")


_SCHEME_CODE = re.compile(r"^[EIW]?([A-Z]{3}\d{3})$")


def code_key(code: str) -> str:
    """NCC_ITEN404, ITEN404 and TEN404 name one diagnostic: compare on component letters and index."""
    bare = code.upper().removeprefix("NCC_")
    scheme = _SCHEME_CODE.match(bare)
    return scheme.group(1) if scheme else bare


@cache
def required_literals(pattern: str) -> int:
    """How many literal characters a line must hold for the pattern to match: an alternation counts its
    shortest branch; classes, lookarounds and parts that may be absent count nothing."""
    return _literals(sre_parse.parse(pattern).data)


def _literals(items: Iterable[tuple[Any, Any]]) -> int:
    total = 0
    for op, arg in items:
        if op is sre_parse.LITERAL:
            total += 1
        elif op is sre_parse.SUBPATTERN:
            total += _literals(arg[-1])
        elif op is sre_parse.BRANCH:
            total += min(_literals(branch) for branch in arg[1])
        elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT):
            total += arg[0] * _literals(arg[2])
    return total


def specificity(match: Match) -> tuple[int, int, int]:
    """Greater is more specific: a code qualified by its message; fewer codes, statuses and exit codes (one
    code's spellings count once); then the literal text its least specific pattern requires."""
    keys = {code_key(c) for c in match.codes} | set(match.nrt_statuses) | {str(c) for c in match.exit_codes}
    anchor = min((required_literals(p) for p in match.patterns), default=0)
    return int(bool(match.message)), -len(keys), anchor


def own_rank(match: Match) -> tuple[int, ...]:
    """Sorts best first: by tier, then by specificity."""
    return TIERS.index(tier_of(match)), *(-part for part in specificity(match))


class RecognitionOrder:
    """The order of one catalogue's signatures. `before = [ids]` in a signature's [match] puts it just ahead of
    each named signature wherever both match the same lines, for the rare pair specificity cannot order."""

    def __init__(self, by_id: Mapping[str, Signature]) -> None:
        self._by_id = by_id
        self._ranks: dict[str, tuple[int, ...]] = {}
        for signature in by_id.values():
            unknown = [other for other in signature.match.before if other not in by_id]
            if unknown:
                raise InputError(f"signature {signature.id!r}: [match].before names {unknown}, which no loaded signature is")
        acyclic: set[str] = set()
        for signature in by_id.values():
            self._no_cycle(signature.id, (), acyclic)

    def _no_cycle(self, sid: str, path: tuple[str, ...], acyclic: set[str]) -> None:
        if sid in path:
            raise InputError(f"[match].before goes round in a circle: {' -> '.join((*path[path.index(sid):], sid))}")
        if sid not in acyclic:
            for other in self._by_id[sid].match.before:
                self._no_cycle(other, (*path, sid), acyclic)
            acyclic.add(sid)

    def rank(self, signature: Signature) -> tuple[int, ...]:
        """Smaller is first: the signature's own rank, or one step ahead of a signature it is `before`."""
        if signature.id not in self._ranks:
            ahead = [(*rank[:-1], rank[-1] - 1) for rank in (self.rank(self._by_id[other]) for other in signature.match.before)]
            self._ranks[signature.id] = min([(*own_rank(signature.match), 0), *ahead])
        return self._ranks[signature.id]

    def sort(self, signatures: Iterable[Signature]) -> tuple[Signature, ...]:
        listed = tuple(signatures)
        return listed if len(listed) < 2 else tuple(sorted(listed, key=self.rank))  # most codes have one: no rank
