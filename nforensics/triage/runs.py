"""One file in, a small result out: what triage keeps of each run (a log, or an analysis in explain's JSON).

This is the unit the process pool (or Ray) runs and the store keeps, so it holds only what the groups need:
per finding its fingerprint, names, top hypothesis, fix and when it was seen; per run the versions and the
instance. Logs go through the one front door (nforensics.pipeline); JSON that `explain --format json` wrote
earlier is read back as the same records.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from nforensics.diagnose.versions import is_older, releases, seen_version, version_key
from nforensics.errors import InputError
from nforensics.pipeline import analyze_path
from nforensics.records import Analysis, AnalysisSet, Environment, Finding
from nforensics.redact import Redactor

# Timestamp shapes Neuron logs print (those nforensics.masking masks as <ts>): ISO and Python logging
# (2024-08-15T14:51:04Z, 2024-08-21 11:03:52,118), NRT (2024-Oct-15 18:01:17.728750), US (11/18/2021 04:51:25 PM).
_ISO_TS = re.compile(
    r"(?P<y>\d{4})-(?P<mo>\d\d|[A-Z][a-z]{2})-(?P<d>\d\d)[T ](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"(?:[.,](?P<f>\d+))?(?P<tz>Z|[+-]\d\d:?\d\d)?"
)
_US_TS = re.compile(r"(?P<mo>\d\d)/(?P<d>\d\d)/(?P<y>\d{4}),? (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?: (?P<ampm>[AP]M))?")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# Packages whose version names the Neuron SDK release a run used, when the log does not name the release.
_SDK_CARRIERS = ("neuronx-cc", "torch-neuronx", "libneuronxla", "aws-neuronx-runtime-lib")


class RunFinding(BaseModel):
    model_config = ConfigDict(frozen=True)

    fingerprint: str
    signature: str
    code: str | None
    title: str
    family: str | None
    tier: str
    hypothesis: str | None  # the top-ranked hypothesis, unless the input favours none
    fixed_in: str | None  # "neuronx-cc 2.24.5133.0 (SDK 2.29.0)"
    after_fix: bool  # the run shows the fixing version or a newer one: the fix did not hold
    seen_at: datetime | None  # the timestamp printed on its first evidence line, in UTC


class Run(BaseModel):
    model_config = ConfigDict(frozen=True)

    source: str
    sdk: str | None
    compiler: str | None
    instance: str | None
    findings: list[RunFinding]


class FileResult(BaseModel):
    """The runs one file holds (one for a log; one per input for explain's JSON of several), or why it
    was skipped. Keyed in the store by path, size and mtime."""

    model_config = ConfigDict(frozen=True)

    path: str
    size: int
    mtime_ns: int
    runs: list[Run] = []
    error: str | None = None


def timestamp_in(text: str) -> datetime | None:
    """The first timestamp printed in `text`, in UTC (a time without a zone is taken as UTC)."""
    for pattern in (_ISO_TS, _US_TS):
        match = pattern.search(text)
        if match:
            try:
                return _datetime(match)
            except ValueError:  # 2024-13-45: digits in a timestamp's shape, not a time
                continue
    return None


def _datetime(match: re.Match[str]) -> datetime:
    parts = match.groupdict()
    month = int(parts["mo"]) if parts["mo"].isdigit() else _MONTHS.index(parts["mo"]) + 1 if parts["mo"] in _MONTHS else 0
    hour = int(parts["h"])
    if parts.get("ampm"):
        hour = hour % 12 + (12 if parts["ampm"] == "PM" else 0)
    micro = int((parts.get("f") or "0")[:6].ljust(6, "0"))
    zone = timezone.utc
    if parts.get("tz") and parts["tz"] != "Z":
        sign = -1 if parts["tz"][0] == "-" else 1
        digits = parts["tz"][1:].replace(":", "")
        zone = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0)))
    return datetime(int(parts["y"]), month, int(parts["d"]), hour, int(parts["mi"]), int(parts["s"]), micro,
                    tzinfo=zone).astimezone(timezone.utc)


def sdk_of(environment: Environment) -> str | None:
    """The Neuron SDK release a run used: named in the log, else the release that ships the exact version
    of a package the log shows (releases.toml)."""
    named = environment.packages.get("neuron-sdk")
    if named:
        return named
    for package in _SDK_CARRIERS:
        seen = seen_version(environment, package)
        wanted = version_key(package, seen) if seen else None
        if wanted is None:
            continue
        for sdk, packages in releases():
            if any(version_key(package, version) == wanted for version in packages.get(package, ())):
                return sdk
    return None


def _finding(finding: Finding, redactor: Redactor) -> RunFinding:
    fix = finding.fixed_in
    fixed_in = after_fix = None
    if fix is not None:
        fixed_in = f"{fix.component} {fix.version}" + (f" (SDK {fix.sdk})" if fix.sdk else "")
        after_fix = fix.seen_version is not None and is_older(fix.component, fix.seen_version, fix.version) is False
    top = finding.hypotheses[0].title if finding.hypotheses and not finding.hypotheses_undetermined else None
    stamps = (timestamp_in(e.text) for e in sorted(finding.evidence, key=lambda e: e.line or 0))
    return RunFinding(
        fingerprint=finding.fingerprint, signature=finding.signature, code=finding.code,
        title=redactor.redact(finding.title), family=finding.family, tier=finding.tier,
        hypothesis=redactor.redact(top) if top else None, fixed_in=fixed_in, after_fix=bool(after_fix),
        seen_at=next((stamp for stamp in stamps if stamp), None),
    )  # fmt: skip


def run_of(analysis: Analysis, redact: bool = True) -> Run:
    environment = analysis.environment
    compiler = seen_version(environment, "neuronx-cc") or seen_version(environment, "neuron-cc")
    redactor = Redactor(enabled=redact)
    return Run(
        source=analysis.source, sdk=sdk_of(environment), compiler=compiler.split("+")[0] if compiler else None,
        instance=environment.instance_type or environment.target,
        findings=[_finding(finding, redactor) for finding in analysis.findings],
    )  # fmt: skip


def read_explain_json(path: str) -> list[Analysis]:
    """The analyses in a file `explain --format json` wrote: one Analysis, or an AnalysisSet of several."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        if isinstance(data, dict) and "inputs" in data:
            return AnalysisSet.model_validate(data).inputs
        return [Analysis.model_validate(data)]
    except (UnicodeDecodeError, json.JSONDecodeError, ValidationError):
        raise InputError(f"{path}: not the JSON of `nforensics explain --format json`") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None


def analyse_file(path: str, redact: bool = True) -> FileResult:
    """The runs in one file; never raises for a bad file (the result says why it was skipped), so one bad
    file in a folder of thousands costs only itself."""
    try:
        info = os.stat(path)
    except OSError as exc:
        return FileResult(path=path, size=-1, mtime_ns=-1, error=f"{path}: cannot read ({exc.strerror or exc})")
    try:
        is_json = Path(path).suffix.lower() == ".json"
        analyses = read_explain_json(path) if is_json else [analyze_path(path)]
        runs = [run_of(analysis, redact) for analysis in analyses]
    except InputError as exc:
        return FileResult(path=path, size=info.st_size, mtime_ns=info.st_mtime_ns, error=str(exc))
    except Exception as exc:  # a bug on one odd file must not lose the other files' results
        error = f"{path}: internal error: {type(exc).__name__}: {exc}"
        return FileResult(path=path, size=info.st_size, mtime_ns=info.st_mtime_ns, error=error)
    return FileResult(path=path, size=info.st_size, mtime_ns=info.st_mtime_ns, runs=runs)
