"""Glue for the experiment commands of the CLI: settings -> journal, backend and progress bar -> strategy ->
text (nforensics/render/experiments.py) or the issue's JSON shapes, plus CSV (stdlib) / Parquet (pyarrow) export. Returns text;
the CLI prints it. The progress bar draws on the console the CLI hands in.
"""

from __future__ import annotations

import json
import shlex
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Callable, Iterator

from rich.console import Console

from nforensics.errors import InputError
from nforensics.experiments import strategies
from nforensics.experiments.compilers import COMPILER
from nforensics.experiments.journal import Journal, check_export, export
from nforensics.experiments.oracle import REPRODUCES, Expectation, exit_code, expectation
from nforensics.experiments.plan import DEFAULT_TIMEOUT, Settings, Template, parse_assignment, settings
from nforensics.experiments.slots import plan_pool, starvation
from nforensics.experiments.backends import make_backend
from nforensics.experiments.runner import (
    Experiment,
    RunSpec,
    VariantResult,
    execute,
    terminate_runs_on_signal,
)
from nforensics.render.experiments import (
    ProgressBar, bisect_text, confirm_plan_text, confirm_text, reduce_text, sweep_text,
)


@dataclass
class CommandOutput:
    stdout: str
    stderr: str = ""
    exit_code: int = 0


def oracle(expect: str, command: list[str], timeout: float | None, env: list[str], cwd: str | None,
           mode: str = "interesting") -> CommandOutput:
    """One run, judged. Exit status per `mode` (oracle.EXIT_CODES): interesting 0 reproduces / 1 does not /
    125 untestable (reducers); bisect 1 reproduces / 0 passes / 125 otherwise (`git bisect run`)."""
    exit_code(REPRODUCES, mode)  # an unknown mode is refused before anything runs
    if not command:
        raise InputError("no command to run: give it after `--`")
    wanted = expectation(expect)
    template = Template(argv=tuple(command), env=tuple(parse_assignment(e, "--env") for e in env), cwd=cwd)
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    with terminate_runs_on_signal():
        outcome = execute(RunSpec(template.variant({}), wanted, timeout))
    detail = ", ".join(x for x in (outcome.code, outcome.note, f"{outcome.seconds:.1f} s") if x)
    return CommandOutput(f"{outcome.verdict} ({detail})\n", exit_code=exit_code(outcome.verdict, mode))


# Exit status when most runs were untestable for lack of a resource (slots.starvation): whatever the
# strategy concluded, it tested next to nothing.
EXIT_STARVED = 3


@contextmanager
def _experiment(s: Settings, expect: Expectation, console: Console) -> Iterator[tuple[Experiment, int]]:
    pool = plan_pool(s.workers, s.cores_per_run, s.compile_only, s.mem_per_run, local=s.backend != "ray")
    for warning in pool.warnings:
        console.print(f"nforensics: warning: {warning}", markup=False, highlight=False)
    journal = Journal(s.journal)
    backend = None
    try:
        backend = make_backend(s.backend, pool, s.address)
        session = journal.open_session(s.strategy, s.expect, s.identity(), s.resume)
        with ProgressBar(console, s.strategy, getattr(backend, "why", pool.why)) as bar:
            yield Experiment(journal, session, backend, expect, s.timeout, s.repeat, bar, pool.cores_per_run), session
    finally:
        if backend is not None:
            backend.close()
        journal.close()


def _run_json(result: VariantResult, repeat: int, evidence: bool = False) -> dict:
    data: dict[str, object] = {"knobs": result.knobs, "verdict": result.verdict, "code": result.code,
                               "seconds": round(result.seconds, 3)}
    if repeat > 1:
        data["flaky"] = result.flaky
    if evidence:
        data.update(command=list(result.variant.argv), env=dict(result.variant.env),
                    unset_env=list(result.variant.unset_env))  # fmt: skip
    return data


def run(strategy: str, options: dict, console: Console, color: bool = False) -> CommandOutput:
    """Run one strategy command. `options` are the CLI's values (None = not given)."""
    fmt, csv, parquet = options.pop("format"), options.pop("csv", None), options.pop("parquet", None)
    if fmt not in ("text", "json"):
        raise InputError(f"unknown format {fmt!r}: use text or json")
    check_export(csv, parquet)
    log, repro = options.pop("log", None), options.pop("repro", None)
    only_plan = options.pop("show_plan", False)  # confirm --plan (the other strategies' --plan is a plan file)
    if strategy == "confirm":
        options["command"] = shlex.split(repro)
        from nforensics.pipeline import analyze_path

        finding = _top_finding(analyze_path(log), log)
        options["expect"] = options.get("expect") or finding.signature
    s = settings(strategy, **options)
    wanted = expectation(s.expect)  # checked against the catalogue before anything runs
    s = replace(s, expect=wanted.canonical)  # `IXLV002` and `NCC_IXLV002` are one session to --resume
    if only_plan:
        return _confirm_plan(s, fmt, finding)
    with terminate_runs_on_signal(), _experiment(s, wanted, console) as (exp, session):
        output = _STRATEGIES[strategy](exp, s, fmt, color, *([finding] if strategy == "confirm" else []))
        starved = starvation(exp.records())
    if starved:
        output.stderr += f"nforensics: warning: {starved}\n"
        output.exit_code = EXIT_STARVED
    if csv or parquet:
        export(s.journal, session, csv=csv, parquet=parquet)
    return output


def _top_finding(analysis, log: str):
    if not analysis.findings:
        raise InputError(f"nothing recognised in {log}: no hypotheses to confirm")
    return analysis.findings[0]


def _sweep(exp: Experiment, s: Settings, fmt: str, color: bool) -> CommandOutput:
    if not (s.knobs or s.cases):
        raise InputError("sweep needs --knob NAME=V1,V2,... (or knobs/cases in the plan)")
    results = strategies.sweep(exp, s.template, s.knobs, s.cases)
    if fmt == "json":
        return CommandOutput(json.dumps({"runs": [_run_json(r, s.repeat) for r in results]}, indent=2) + "\n")
    return CommandOutput(sweep_text(results, s.expect, color))


def _one_knob(s: Settings, what: str) -> tuple[str, list[str]]:
    if len(s.knobs) != 1:
        raise InputError(f"{what} needs exactly one --knob NAME=LO..HI (or V1,V2,... in order)")
    return next(iter(s.knobs.items()))


def _fixed(s: Settings) -> dict[str, str]:
    """Knobs held at one value while another strategy varies something else (from the plan's first case)."""
    return dict(s.cases[0]) if s.cases else {}


def _bisect(exp: Experiment, s: Settings, fmt: str, color: bool) -> CommandOutput:
    knob, values = _one_knob(s, "bisect")
    result = strategies.bisect(exp, s.template, knob, values, _fixed(s), either_way=knob == COMPILER)
    warnings = "".join(f"nforensics: warning: {w}\n" for w in result.warnings)
    code = 0 if result.boundary is not None else 1
    if fmt == "json":
        data = {"boundary": result.boundary, "runs": result.runs, "monotone": result.monotone, "fixes": result.fixes}
        return CommandOutput(json.dumps(data, indent=2) + "\n", warnings, code)
    text = bisect_text(result, knob, s.expect, strategies.bisect_budget(len(values)), color)
    return CommandOutput(text, warnings, code)


def _reduce(exp: Experiment, s: Settings, fmt: str, color: bool) -> CommandOutput:
    if s.hlo:
        from nforensics.experiments.hlo_output import reduce_hlo_command

        return reduce_hlo_command(exp, s, fmt, _fixed(s))
    result = strategies.reduce(exp, s.template, s.items, exp.backend.workers, _fixed(s))
    warnings = "".join(f"nforensics: warning: {w}\n" for w in result.warnings)
    code = 0 if result.minimal is not None else 1
    if fmt == "json":
        return CommandOutput(json.dumps({"minimal": result.minimal, "runs": result.runs}, indent=2) + "\n", warnings, code)
    return CommandOutput(reduce_text(result, s.expect, len(s.items)), warnings, code)


def _confirm(exp: Experiment, s: Settings, fmt: str, color: bool, finding) -> CommandOutput:
    signature = _signature(finding)
    knobs = {name: values[0] for name, values in s.knobs.items()}
    result = strategies.confirm(exp, s.template, knobs, signature, finding.code)
    code = 0 if result.baseline.reproduces else 1
    if fmt == "json":
        data = {
            "signature": result.signature,
            "code": result.code,
            "baseline": _run_json(result.baseline, s.repeat, evidence=True),
            "hypotheses": [
                {"id": c.id, "title": c.title, "expect": c.expect, "status": c.status, "reason": c.reason, "tier": c.tier,
                 "run": _run_json(c.result, s.repeat, evidence=True) if c.result else None,
                 "runs": [_run_json(r, s.repeat, evidence=True) for r in c.results]}  # fmt: skip
                for c in result.checks
            ],
        }
        return CommandOutput(json.dumps(data, indent=2) + "\n", exit_code=code)
    return CommandOutput(confirm_text(result, color), exit_code=code)


def _confirm_plan(s: Settings, fmt: str, finding) -> CommandOutput:
    """`confirm --plan`: the runs confirm would make, and what they cost, without making any."""
    signature = _signature(finding)
    knobs = {name: values[0] for name, values in s.knobs.items()}
    planned = [(h.id, h.confirm.description if h.confirm else None, h.confirm.expect if h.confirm else None,
                strategies.check_tier(h, signature), variants, why)
               for h, variants, why in strategies.confirm_plan(s.template, knobs, signature)]
    per_tier = {"compile": 0, "device": 0}
    per_tier[strategies.baseline_tier(signature)] += 1
    for _, _, _, tier, variants, _ in planned:
        per_tier[tier] += len(variants)
    runs = (per_tier["compile"] + per_tier["device"]) * s.repeat
    device_runs = 0 if s.compile_only else per_tier["device"] * s.repeat
    cost = {"runs": runs, "compiles": runs, "device_runs": device_runs,
            "neuron_cores_per_run": s.cores_per_run or 1 if device_runs else 0}
    if fmt == "json":
        data = {"signature": signature.id, "baseline": list(s.template.variant(knobs).argv), "cost": cost,
                "baseline_tier": strategies.baseline_tier(signature),
                "hypotheses": [{"id": hid, "change": what, "expect": expect, "tier": tier, "why_not": why or None,
                                "runs": [{"command": list(v.argv), "env": dict(v.env), "unset_env": list(v.unset_env),
                                          "knobs": dict(v.knobs)} for v in variants]}
                               for hid, what, expect, tier, variants, why in planned]}
        return CommandOutput(json.dumps(data, indent=2) + "\n")
    return CommandOutput(confirm_plan_text(signature.id, planned, cost))


def _signature(finding):  # type: ignore[no-untyped-def]
    from nforensics.knowledge import load_kb

    signature = load_kb().get(finding.signature)
    if signature is None:
        raise InputError(f"{finding.signature} is not in the knowledge base: no declared checks to run")
    return signature


_STRATEGIES: dict[str, Callable[..., CommandOutput]] = {
    "sweep": _sweep, "bisect": _bisect, "reduce": _reduce, "confirm": _confirm}
