"""`nforensics triage` output: the failure groups as a terminal table, Markdown, CSV, JSON or Parquet.

The table's shape (TriageGroup, TriageReport, and Trend for --plot: triage_plot.py draws it) is defined
here, with the formats that print it, as render/groups.py defines the groups of `explain`; nforensics/triage
decides what goes in it.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel

TRIAGE_SCHEMA_VERSION = "1"
FORMATS = ("table", "markdown", "csv", "json", "parquet")
Status = Literal["new", "regressed", "gone", "ongoing"]


class TriageGroup(BaseModel):
    """One failure across runs: every finding with this fingerprint."""

    fingerprint: str
    signature: str
    code: str | None
    title: str
    family: str | None
    tier: str
    count: int  # runs it was seen in
    share: float  # count / runs read (0-1)
    first_seen: datetime
    last_seen: datetime
    sdk_versions: list[str]
    compiler_versions: list[str]
    instance_types: list[str]
    top_hypothesis: str | None
    fixed_in: str | None
    status: Status | None = None  # between the two sides of --since / --compare-release; None without one


class TriageReport(BaseModel):
    schema_version: str = TRIAGE_SCHEMA_VERSION
    runs: int  # runs read (a log is one run; explain's JSON of several inputs is several)
    files: int
    analysed: int  # files analysed in this run; the others came from the store unchanged
    skipped: list[str]
    comparison: str | None = None  # "before 2024-05-01 vs since", "SDK 2.22 vs 2.24"
    groups: list[TriageGroup]


@dataclass(frozen=True)
class Trend:
    """Runs per period (day or week) in which each group was seen, over every period of the runs read."""

    unit: str  # "day" or "week"
    periods: list[datetime]  # the start of each period (UTC), oldest first, empty ones included
    counts: dict[str, list[int]]  # fingerprint -> runs per period


_HEAD = ("group", "count", "share", "first seen", "last seen", "SDK", "compiler", "instances", "top hypothesis",
         "fixed in", "status")


def group_name(group: TriageGroup) -> str:
    return f"{group.code}: {group.title}" if group.code and group.code not in group.title else group.title


def _cells(group: TriageGroup) -> tuple[str, ...]:
    return (
        f"{group_name(group)} [{group.fingerprint}]", str(group.count), f"{group.share:.1%}", _day(group.first_seen),
        _day(group.last_seen), ", ".join(group.sdk_versions), ", ".join(group.compiler_versions),
        ", ".join(group.instance_types), group.top_hypothesis or "", group.fixed_in or "", group.status or "",
    )  # fmt: skip


def _day(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M")


def _footer(report: TriageReport) -> str:
    reused = report.files - report.analysed
    text = f"{len(report.groups)} failure groups in {report.runs} runs ({report.files} files, {report.analysed} analysed"
    text += f", {reused} unchanged from the store)" if reused else ")"
    return text + (f"; {report.comparison}" if report.comparison else "")


def render_table(report: TriageReport, color: bool = False, width: int = 200) -> str:
    from rich.console import Console
    from rich.table import Table

    table = Table(*_HEAD, caption=_footer(report), show_lines=False)
    for group in report.groups:
        table.add_row(*_cells(group))
    out = io.StringIO()
    Console(file=out, force_terminal=color, no_color=not color, width=width).print(table)
    return out.getvalue()


def render_markdown(report: TriageReport) -> str:
    def row(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    lines = [row(_HEAD), "|" + "---|" * len(_HEAD)] + [row(_cells(g)) for g in report.groups]
    return "\n".join(lines) + f"\n\n{_footer(report)}\n"


def groups_frame(report: TriageReport):  # type: ignore[no-untyped-def]
    """The groups as a pandas DataFrame (list columns kept as lists) for CSV and Parquet."""
    import pandas as pd

    return pd.DataFrame([g.model_dump() for g in report.groups], columns=list(TriageGroup.model_fields))


def render_csv(report: TriageReport) -> str:
    frame = groups_frame(report)
    for column in ("sdk_versions", "compiler_versions", "instance_types"):
        frame[column] = frame[column].map("; ".join)
    return frame.to_csv(index=False)


def render_json(report: TriageReport) -> str:
    return report.model_dump_json(indent=2) + "\n"


def write_parquet(report: TriageReport, path: str) -> None:
    groups_frame(report).to_parquet(path, index=False)
