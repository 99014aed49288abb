"""The `nforensics triage` command: options in, the failure-group table out. Registered by nforensics/cli.py;
it imports only typer at start, so `explain` pays nothing for it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, List, Optional

import typer

from nforensics.errors import InputError, install_extra
from nforensics.render.style import wants_color

if TYPE_CHECKING:
    import pandas as pd

    from nforensics.render.triage import TriageReport
    from nforensics.triage.scan import ScanStats


def triage(
    inputs: Annotated[List[str], typer.Argument(
        help="Log files, folders (recursive, .gz included) and explain --format json files.")],
    format: Annotated[str, typer.Option(
        "--format", "-f", help="table, markdown, csv, json or parquet (parquet needs -o).")] = "table",
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here instead of standard output.")] = None,
    since: Annotated[Optional[str], typer.Option(help="Label groups new / regressed / gone since this date.")] = None,
    compare_release: Annotated[Optional[str], typer.Option(
        help="OLD:NEW SDK releases, e.g. 2.22:2.24: label groups new / regressed / gone.")] = None,
    store: Annotated[Optional[Path], typer.Option(
        help="Folder of the triage store (default: nforensics' private cache folder).")] = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Analyse every file; keep nothing.")] = False,
    jobs: Annotated[Optional[int], typer.Option(
        "--jobs", "-j", help="Processes analysing files (default: the cores); with --backend ray, tasks at a time "
                             "(default: twice the cluster's CPUs).")] = None,
    glob: Annotated[str, typer.Option(help="Which files to read inside folders, e.g. '*.log'.")] = "*",
    no_redact: Annotated[bool, typer.Option(
        "--no-redact", help="Do not mask keys, hosts and user names in titles.")] = False,
    backend: Annotated[Optional[str], typer.Option(
        help="local (a process pool on this host, default) or ray (Ray tasks over a cluster).")] = None,
    address: Annotated[Optional[str], typer.Option(
        help="Ray cluster: HOST:PORT, ray://HOST:PORT or auto (default: $RAY_ADDRESS, else a `ray start` "
             "cluster of this host, else a new local one).")] = None,
    plot: Annotated[Optional[Path], typer.Option(
        help="Also draw the top groups over time into FILE.png or FILE.svg (needs matplotlib).")] = None,
) -> None:
    """Failures across many runs: groups by fingerprint with count, share, first/last seen, versions, fixes."""
    from nforensics.rayconnect import check_backend

    backend = check_backend(backend, address)
    _check_output(format, output)
    _check_plot(plot)
    from nforensics.triage.frame import parse_comparison, triage_report  # pandas: known to be installed now
    from nforensics.triage.scan import triage_files
    from nforensics.triage.store import default_store_dir

    comparison = parse_comparison(since, compare_release)
    if jobs is not None and jobs < 1:
        raise InputError("--jobs must be 1 or more")
    paths, named = triage_files(inputs, glob)
    frame, stats = _runs(paths, store=None if no_store else (store or default_store_dir()), backend=backend,
                         address=address, jobs=jobs, redact=not no_redact)
    for path, reason in stats.skipped.items():
        if path in named:
            raise InputError(reason)  # a file named on the command line must be readable
        sys.stderr.write(f"nforensics: skipped {reason}\n")
    report = triage_report(frame, comparison, files=stats.files, analysed=stats.analysed,
                           skipped=list(stats.skipped.values()))
    _write(report, format, output)
    if plot is not None:
        _draw(plot, frame, report)


def _runs(paths: list[str], *, store: Path | None, backend: str, address: str | None, jobs: int | None,
          redact: bool) -> tuple[pd.DataFrame, ScanStats]:
    """Every file's result (from the store, or analysed on the backend) as one frame of runs."""
    from nforensics.triage.frame import runs_frame
    from nforensics.triage.scan import analysers, scan
    from nforensics.triage.store import TriageStore

    opened = TriageStore(store) if store else None
    try:
        with analysers(backend, address, jobs) as (mapper, where):
            if where:
                sys.stderr.write(f"nforensics: {where}\n")
            results, stats = scan(paths, store=opened, mapper=mapper, redact=redact)
            return runs_frame(results), stats
    finally:
        if opened:
            opened.close()


def _check_output(format: str, output: Path | None) -> None:
    """Refused before any file is read: a run over 100,000 logs must not end in 'cannot write that'."""
    from nforensics.render.triage import FORMATS

    if importlib.util.find_spec("pandas") is None:  # an extra: the base install is explain, report and CI formats
        raise InputError(f"nforensics triage needs pandas, which is not installed: {install_extra('triage')}")
    if format not in FORMATS:
        raise InputError(f"unknown format {format!r}: choose from {', '.join(FORMATS)}")
    if format == "parquet":
        if output is None:
            raise InputError("--format parquet writes a file: give it with --output FILE.parquet")
        if importlib.util.find_spec("pyarrow") is None:
            raise InputError(f"--format parquet needs pyarrow: {install_extra('parquet')}")
    if output is not None and not output.parent.is_dir():
        raise InputError(f"--output {output}: no such folder {output.parent}")


def _check_plot(plot: Path | None) -> None:
    """Refused before any file is read, like the output."""
    from nforensics.render.triage_plot import PLOT_FORMATS

    if plot is None:
        return
    if plot.suffix.lower() not in PLOT_FORMATS:
        raise InputError(f"--plot {plot}: give a file ending in {' or '.join(PLOT_FORMATS)}")
    if not plot.parent.is_dir():
        raise InputError(f"--plot {plot}: no such folder {plot.parent}")
    if importlib.util.find_spec("matplotlib") is None:  # an extra: only --plot draws
        raise InputError(f"--plot needs matplotlib, which is not installed: {install_extra('plot')}")


def _draw(plot: Path, frame: pd.DataFrame, report: TriageReport) -> None:
    from nforensics.render.triage_plot import PLOT_GROUPS, write_plot
    from nforensics.triage.frame import trend

    top = report.groups[:PLOT_GROUPS]
    write_plot(plot, trend(frame, [group.fingerprint for group in top]), top)


def _write(report: TriageReport, format: str, output: Path | None) -> None:
    from nforensics.render import triage as render

    if format == "parquet":
        render.write_parquet(report, str(output))
        return
    if format == "table":
        text = render.render_table(report, color=output is None and wants_color(sys.stdout))
    else:
        text = {"markdown": render.render_markdown, "csv": render.render_csv, "json": render.render_json}[format](report)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
