"""The per-run findings as a pandas frame, grouped by fingerprint, and labelled between two sides.

One row per (run, finding), plus one row with no fingerprint per run that found nothing, so shares are of
every run read. A finding is dated by the timestamp on its first evidence line, else by its file's mtime.

Labels, between a baseline and a current side (`--since DATE`: before it / from it on; `--compare-release
OLD:NEW`: runs on SDK OLD / on SDK NEW):
- new: seen on the current side, not on the baseline nor before it;
- gone: seen on the baseline, not on the current side;
- regressed: seen on the current side while a run there already has the version that fixed it, or (between
  releases) after it had gone: seen before OLD, not on OLD, back on NEW;
- ongoing: seen on both sides.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

import pandas as pd

from nforensics.diagnose.versions import version_key
from nforensics.errors import InputError
from nforensics.render.triage import TriageGroup, TriageReport, Trend
from nforensics.triage.runs import FileResult

_TEXT = ("sdk", "compiler", "instance", "fingerprint", "signature", "code", "title", "family", "tier", "hypothesis",
         "fixed_in")
COLUMNS = ("run", "seen", *_TEXT, "after_fix")
TREND_DAYS = 62  # runs spanning up to about two months are counted per day on a --plot, longer spans per week


@dataclass(frozen=True)
class Comparison:
    """The two sides: dates (`since`) or SDK releases (`old`, `new`)."""

    since: datetime | None = None
    old: str | None = None
    new: str | None = None

    @property
    def description(self) -> str:
        if self.since is not None:
            return f"before {self.since:%Y-%m-%d} vs since"
        return f"SDK {self.old} vs {self.new}"


def parse_comparison(since: str | None, compare_release: str | None) -> Comparison | None:
    if since and compare_release:
        raise InputError("give --since or --compare-release, not both")
    if since:
        try:
            moment = pd.Timestamp(since)
        except ValueError:
            raise InputError(f"--since {since!r}: not a date (e.g. 2024-05-01 or 2024-05-01T12:00)") from None
        return Comparison(since=(moment.tz_localize("UTC") if moment.tz is None else moment).to_pydatetime())
    if compare_release:
        old, _, new = compare_release.partition(":")
        if not (version_key("", old) and version_key("", new)):
            raise InputError(f"--compare-release {compare_release!r}: give two SDK releases as OLD:NEW, e.g. 2.22:2.24")
        return Comparison(old=old.strip(), new=new.strip())
    return None


def runs_frame(results: Iterable[FileResult]) -> pd.DataFrame:
    """One row per finding of every run (and one empty row per run with none). Skipped files add no row."""
    rows: list[tuple] = []
    run = 0
    for result in results:
        mtime = datetime.fromtimestamp(max(result.mtime_ns, 0) / 1e9, timezone.utc)
        for each in result.runs:
            context = (each.sdk, each.compiler, each.instance)
            for f in each.findings:
                texts = (f.fingerprint, f.signature, f.code, f.title, f.family, f.tier, f.hypothesis, f.fixed_in)
                # Interned: 100,000 runs repeat a few dozen titles and hypotheses.
                rows.append((run, f.seen_at or mtime, *_interned(context + texts), f.after_fix))
            if not each.findings:
                rows.append((run, mtime, *_interned(context), *(None,) * 8, False))
            run += 1
    frame = pd.DataFrame.from_records(rows, columns=list(COLUMNS))
    frame["seen"] = pd.to_datetime(frame["seen"], utc=True)
    return frame


def _interned(values: tuple) -> tuple:
    return tuple(sys.intern(v) if isinstance(v, str) else v for v in values)


def _release_matches(sdks: pd.Series, release: str) -> pd.Series:
    wanted = version_key("", release) or ()
    return sdks.map(lambda sdk: isinstance(sdk, str) and (version_key("", sdk) or ())[: len(wanted)] == wanted)


def _release_before(sdks: pd.Series, release: str) -> pd.Series:
    wanted = version_key("", release) or ()
    return sdks.map(lambda sdk: isinstance(sdk, str) and (version_key("", sdk) or ())[: len(wanted)] < wanted)


def _labels(failures: pd.DataFrame, comparison: Comparison) -> pd.Series:
    """The status of each fingerprint (index) between the two sides."""
    if comparison.since is not None:
        since = pd.Timestamp(comparison.since)
        baseline, current = failures["seen"] < since, failures["seen"] >= since
        earlier = pd.Series(False, index=failures.index)
    else:
        baseline = _release_matches(failures["sdk"], comparison.old or "")
        current = _release_matches(failures["sdk"], comparison.new or "")
        earlier = _release_before(failures["sdk"], comparison.old or "")
    sides = pd.DataFrame({
        "fingerprint": failures["fingerprint"], "baseline": baseline, "current": current, "earlier": earlier,
        "after_fix": current & failures["after_fix"].astype(bool),
    }).groupby("fingerprint").any()

    def label(side: pd.Series) -> str | None:
        if side["current"]:
            if side["after_fix"] or (side["earlier"] and not side["baseline"]):
                return "regressed"
            return "ongoing" if side["baseline"] else "new"
        return "gone" if side["baseline"] else None

    return sides.apply(label, axis=1)


def _versions(values: pd.Series) -> list[str]:
    return sorted(set(values.dropna()), key=lambda v: (version_key("", v) or (), v))


def _mode(values: pd.Series) -> str | None:
    counts = values.dropna().value_counts()
    return str(counts.index[0]) if len(counts) else None


def group_table(frame: pd.DataFrame, comparison: Comparison | None = None) -> pd.DataFrame:
    """One row per fingerprint: names, count, share, first and last seen, versions, instances, top
    hypothesis, fixed-in and status; most frequent first."""
    failures = frame.dropna(subset=["fingerprint"])
    grouped = failures.groupby("fingerprint", sort=False)
    table = grouped.agg(
        signature=("signature", "first"), code=("code", "first"), title=("title", "first"), family=("family", "first"),
        tier=("tier", "first"), count=("run", "nunique"), first_seen=("seen", "min"), last_seen=("seen", "max"),
        sdk_versions=("sdk", _versions), compiler_versions=("compiler", _versions),
        instance_types=("instance", lambda v: sorted(set(v.dropna()))), top_hypothesis=("hypothesis", _mode),
        fixed_in=("fixed_in", "first"),
    )  # fmt: skip
    runs = frame["run"].nunique()
    table["share"] = table["count"] / runs if runs else 0.0
    table["status"] = _labels(failures, comparison) if comparison and len(failures) else None
    return table.reset_index().sort_values(["count", "last_seen", "fingerprint"], ascending=[False, False, True])


def _missing(value: object) -> bool:
    """pandas' marks of a missing value (NaN, NA, NaT) in a text column."""
    return value is None or (not isinstance(value, (list, str)) and bool(pd.isna(value)))


def triage_report(frame: pd.DataFrame, comparison: Comparison | None, *, files: int, analysed: int,
                  skipped: list[str]) -> TriageReport:
    table = group_table(frame, comparison)
    groups = [TriageGroup.model_validate({key: None if _missing(value) else value for key, value in row.items()})
              for row in table.to_dict("records")]
    return TriageReport(runs=int(frame["run"].nunique()), files=files, analysed=analysed, skipped=skipped,
                        comparison=comparison.description if comparison else None, groups=groups)


def trend(frame: pd.DataFrame, fingerprints: list[str]) -> Trend:
    """Runs per day (per week from Monday, when the runs span more than TREND_DAYS days) in which each of
    these groups was seen, over every period from the first run read to the last; a run counts once per
    group, in the period of its first finding of that group."""
    seen = frame["seen"].dt.tz_convert(None)
    weekly = len(frame) > 0 and seen.max() - seen.min() > pd.Timedelta(days=TREND_DAYS)
    period = seen.dt.to_period("W").dt.start_time if weekly else seen.dt.floor("D")
    every = pd.date_range(period.min(), period.max(), freq="7D" if weekly else "D") if len(frame) else []
    unit = "week" if weekly else "day"
    if not fingerprints:
        return Trend(unit, [moment.to_pydatetime() for moment in every], {})
    chosen = frame["fingerprint"].isin(fingerprints)
    firsts = pd.DataFrame({"fingerprint": frame["fingerprint"], "run": frame["run"], "period": period})[chosen]
    firsts = firsts.groupby(["fingerprint", "run"])["period"].min().reset_index()
    counts = pd.crosstab(firsts["period"], firsts["fingerprint"]).reindex(index=every, columns=fingerprints, fill_value=0)
    return Trend(unit, [moment.to_pydatetime() for moment in every],
                 {fingerprint: [int(n) for n in counts[fingerprint]] for fingerprint in fingerprints})
