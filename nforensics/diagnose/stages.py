"""Which part of the toolchain a crash happened in, by where it ran (knowledge/stages.toml): a stack frame's
file, or the component a compiler stage names in its own abort record."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from nforensics.knowledge import table
from nforensics.linear_regex import compile_linear
from nforensics.records import Frame, ParsedLog

# A compiler stage aborts at these levels; at ERROR it also relays how its process ended ("Backend exited
# with code -6", "neuronx-cc failed running hlo2penguin"), which says how it ended, not where it failed.
STAGE_ABORT_LEVELS = frozenset({"CRITICAL", "FATAL"})
_PROCESS_END = re.compile(r"(?i)\bexit(?:ed)?(?: with)?(?: exit)? ?(?:code|status)\b|\bexitcode\b|\bkilled\b|\bsignal\b")
# A check of the compiler's own source that failed names its file, at ERROR: as the record's component
# (`[/.../neuronxcc/walrus/coloring_allocator/src/linearize.cpp:174]: Assertion failure: false`), or in the
# backend's SG-ERROR (`SG-ERROR: File /.../be/tongacodegen/src/x.cpp:207, Assertion 'deltaElems <= max' failed`).
_SOURCE_LOCATION = compile_linear(r"/\S+\.\w+:\d+$")
_ASSERTION = compile_linear(r"(?i)^assertion (?:failure|failed)")
_SG_ASSERTION = compile_linear(r"^File (/\S+\.\w+):\d+, Assertion\b")


@dataclass(frozen=True)
class StageRule:
    pattern: re.Pattern[str]
    component: str
    stage: str


@cache
def stage_rules() -> tuple[StageRule, ...]:
    return tuple(StageRule(re.compile(r["path"]), r["component"], r["stage"]) for r in table("stages")["stage"])


def place(where: str) -> StageRule | None:
    """The part of the toolchain a file path or a stage's component name belongs to, or None."""
    return next((rule for rule in stage_rules() if rule.pattern.search(where)), None)


def place_frame(frame: Frame) -> StageRule | None:
    return place(frame.file)


def aborted_stage(log: ParsedLog) -> tuple[int, StageRule] | None:
    """The compiler stage the first abort record names by its component (`CRITICAL [WalrusDriver]`,
    `FATAL (sg00) [ColoringAllocator::Rep]`), or the source file of a failed assertion, placed by the paths
    that place a frame; the driver is no stage. A record that reports how the stage's process ended ("Backend
    exited with code -9") says nothing of where it failed: a kill from outside, or a crash whose own record is
    elsewhere."""
    for event in log.events:
        if event.producer == "compiler" and event.component and not _PROCESS_END.search(event.message):
            where = _failed_check(event.component, event.message) or (
                event.component if (event.level or "").upper() in STAGE_ABORT_LEVELS else None)
            stage = place(where) if where else None
            if stage is not None and stage.component == "compiler" and stage.stage != "driver":
                return event.line, stage
    return None


def _failed_check(component: str, message: str) -> str | None:
    """The source file of the compiler's own check that a record says failed, if it says so."""
    if _SOURCE_LOCATION.search(component) and _ASSERTION.match(message):
        return component
    if component == "SG-ERROR" and (check := _SG_ASSERTION.match(message)):
        return check.group(1)
    return None
