"""Experiment output: the live progress bar, the text answers of sweep, bisect, reduce and confirm, and the
journal as Markdown for a bug report. Results in, text out; nforensics/experiments decides what to run."""

from __future__ import annotations

import io
import shutil
from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

# Verdict -> style, in the oracle's order (nforensics.experiments.oracle.VERDICTS), which counts follow.
_STYLE = {"REPRODUCES": "bold red", "PASSES": "green", "DIFFERENT_FAILURE": "yellow", "UNTESTABLE": "dim"}
_STATUS_STYLE = {"confirmed": "bold green", "refuted": "red", "inconclusive": "yellow", "not checked": "dim"}


class ProgressBar:
    """Runs done / planned, a count per verdict and the ETA; `detail` (where the runs go: the pool's slots)
    is one line above the bar."""

    def __init__(self, console: Console, label: str, detail: str = "") -> None:
        self._detail = detail
        self._counts: Counter[str] = Counter()
        self._total = 0
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self._task = self._progress.add_task(label, total=None, counts="")

    def planned(self, count: int) -> None:
        self._total += count
        self._progress.update(self._task, total=self._total)

    def finished(self, record) -> None:
        self._counts[record.verdict] += 1
        counts = "  ".join(f"[{style}]{v} {self._counts[v]}[/]" for v, style in _STYLE.items() if self._counts[v])
        self._progress.update(self._task, advance=1, counts=counts)

    def __enter__(self) -> "ProgressBar":
        if self._detail:
            self._progress.console.print(f"{self._progress.tasks[0].description}: {self._detail}", markup=False,
                                         highlight=False, style="dim")
        self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self._progress.stop()


def _text(renderables, color: bool) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=color, width=shutil.get_terminal_size((120, 24)).columns)
    for r in renderables:
        console.print(r)
    return buffer.getvalue()


def _runs_table(results, title: str | None = None) -> Table:
    """One row per variant (runner.VariantResult): its knobs, verdict, code, time and note."""
    knob_names = list(dict.fromkeys(k for r in results for k in r.knobs))
    table = Table(title=title)
    for name in ["#", *knob_names, "verdict", "code", "seconds", "note"]:
        table.add_column(name, justify="right" if name in ("#", "seconds") else "left")
    for n, r in enumerate(results, 1):
        note = r.flaky and f"flaky: {r.flaky}" or r.runs[0].note
        cells = [*(r.knobs.get(k, "") for k in knob_names), r.code or ""]
        table.add_row(str(n), *map(escape, cells[:-1]), f"[{_STYLE[r.verdict]}]{r.verdict}[/]", escape(cells[-1]),
                      f"{r.seconds:.2f}", escape(note))  # fmt: skip
    return table


def sweep_text(results, expect: str, color: bool) -> str:
    counts = Counter(r.verdict for r in results)
    summary = f"{len(results)} variants: " + ", ".join(f"{counts[v]} {v}" for v in _STYLE if counts[v])
    return _text([_runs_table(results, escape(f"sweep expecting {expect}")), summary], color)


def bisect_text(result, knob: str, expect: str, budget: int, color: bool) -> str:
    """The runs of a strategies.BisectResult and the boundary they found, or that there is none."""
    answer = (f"boundary: {knob}={result.boundary} is the first value that no longer reproduces {expect}" if result.fixes
              else f"boundary: {knob}={result.boundary} is the smallest value that reproduces {expect}"
              if result.boundary is not None else f"no value of {knob} reproduces {expect}")  # fmt: skip
    line = escape(f"{answer} ({result.runs} runs, budget {budget})")
    return _text([_runs_table(result.results, f"bisect {knob}"), line], color)


def reduce_text(result, expect: str, items: int) -> str:
    """A strategies.ReduceResult: the 1-minimal subset of `items` items, or that the full set passes."""
    if result.minimal is None:
        return f"no reduction: the full set does not reproduce {expect} ({result.runs} runs)\n"
    shown = " ".join(result.minimal) or "(nothing: it reproduces without any of the items)"
    return (f"minimal: {shown}\n1-minimal subset of {items} items that still reproduces "
            f"{expect}, found in {result.runs} runs\n")  # fmt: skip


def confirm_text(result, color: bool) -> str:
    """A strategies.ConfirmResult: the baseline, each hypothesis' status, and the runs behind them."""
    table = Table(title=escape(f"{result.code or result.signature}: hypotheses checked by re-running"))
    for name in ("hypothesis", "status", "verdict", "why"):
        table.add_column(name)
    for c in result.checks:
        verdict = c.result.verdict if c.result else ""
        table.add_row(escape(c.id), f"[{_STATUS_STYLE[c.status]}]{c.status}[/]", verdict, escape(c.reason))
    runs = [result.baseline] + [r for c in result.checks for r in c.results]
    head = escape(f"baseline: {result.baseline.verdict} ({' '.join(result.baseline.variant.argv)})")
    return _text([head, table, _runs_table(runs, "runs (evidence)")], color)


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ") if text not in (None, "") else ""


def journal_markdown(sessions) -> str:
    """Journal sessions, as (strategy, expect, [journal.RunRecord]), as Markdown: one table per session."""
    parts = []
    for strategy, expect, runs in sessions:
        if not runs:
            continue
        knob_names = list(dict.fromkeys(k for r in runs for k in r.knobs))
        head = ["#", *knob_names, "command", "env", "verdict", "code", "seconds"]
        lines = [
            f"`nforensics {strategy}` expecting `{expect}` ({len(runs)} runs):",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
        ]
        for n, r in enumerate(runs, 1):
            env = " ".join(f"{k}={v}" for k, v in r.env.items())
            env += "".join(f" -{k}" for k in r.unset_env)
            cells = [n, *(r.knobs.get(k, "") for k in knob_names), f"`{' '.join(r.argv)}`",
                     f"`{env.strip()}`" if env.strip() else "", r.verdict, r.code, f"{r.seconds:.1f}"]  # fmt: skip
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n" if parts else ""


_CHECK_STYLE = {"pass": "green", "fail": "bold red", "skip": "yellow"}


def selftest_text(checks, color: bool) -> str:
    """`nforensics selftest`: one row per check (name, pass/fail/skip, what was seen), then the verdict."""
    table = Table(title="nforensics selftest: the Neuron toolchain on this host", show_lines=False)
    for column in ("check", "status", "what was seen"):
        table.add_column(column)
    for check in checks:
        table.add_row(check.name, f"[{_CHECK_STYLE[check.status]}]{check.status}[/]", escape(check.detail))
    failed = [check.name for check in checks if check.status == "fail"]
    verdict = f"FAILED: {', '.join(failed)}" if failed else "every check that could run passed"
    return _text([table, verdict], color)


def confirm_plan_text(signature: str, planned, cost: dict) -> str:
    """`confirm --plan`: each hypothesis' run (what it changes, the verdict that confirms it) or why it has
    none, then the cost: runs, compiles, device runs."""
    lines = [f"confirm plan for {signature}: the baseline run, then each hypothesis' declared runs, the compile tier "
             "first (no NeuronCore), the device tier only when no compile-tier check confirmed"]
    for hypothesis, change, expect, tier, variants, why in planned:
        runs = f" ({len(variants)} runs)" if len(variants) > 1 else ""
        said = f"[{tier}] {change} -> confirmed if {expect}{runs}" if variants else f"not run: {why}"
        lines.append(f"  {hypothesis}: {said}")
    device = (f"{cost['device_runs']} device runs ({cost['neuron_cores_per_run']} NeuronCore(s) each)"
              if cost["device_runs"] else "no device run")
    lines.append(f"cost: {cost['runs']} runs: {cost['compiles']} compiles, {device}. Nothing was run.")
    return "\n".join(lines) + "\n"
