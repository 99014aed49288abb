"""The experiment commands of the CLI (oracle, sweep, bisect, reduce, confirm): confirm a diagnosis by
re-running variants. Wiring only, like nforensics/cli.py, which registers them; the work is in
nforensics/experiments/. Typer declares options as default values (B008): its documented idiom."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from nforensics.render.style import wants_color

experiments = typer.Typer()

# Options shared by the experiment commands (typer reads these as metadata, so they can be reused).
_COMMAND = typer.Argument(None, help="The command template after `--`; {NAME} placeholders are filled per variant.")
_EXPECT = typer.Option(None, "--expect", help="The code or signature that counts as reproducing, e.g. NCC_IXLV002.")
_TIMEOUT = typer.Option(None, "--timeout", help="Seconds per run before its whole process group is killed (default 3600).")
_ENV = typer.Option([], "--env", help="KEY=VALUE set for each run (repeatable); the value may use {NAME}.")
_INPUTS = typer.Option([], "--input", help="A file the command reads: its content is part of a variant's identity.")
_CWD = typer.Option(None, "--cwd", help="Run in this directory instead of a fresh temporary directory per run.")
_WORKERS = typer.Option(None, "--workers", help="Runs at a time (default: the NeuronCores neuron-ls reports / "
                        "--cores-per-run; compile-only runs: free memory / --mem-per-run; no device: the CPUs).")
_JOURNAL = typer.Option(None, "--journal", help="SQLite journal of every run (default .nforensics/journal.sqlite).")
_RESUME = typer.Option(False, "--resume", help="Continue the last session with the same plan; finished runs are reused.")
_REPEAT = typer.Option(None, "--repeat", help="Run each variant N times and mark flaky verdicts.")
_PLAN = typer.Option(None, "--plan", help="A TOML plan (command, knobs, cases, items, env, ...); options override it.")
_EXP_FORMAT = typer.Option("text", "--format", "-f", help="text or json.")
_CSV = typer.Option(None, "--csv", help="Also export this session's runs as CSV.")
_PARQUET = typer.Option(None, "--parquet", help="Also export this session's runs as Parquet.")
_CORES_PER_RUN = typer.Option(None, "--cores-per-run", help="NeuronCores one run needs (default 1): its slice is "
                              "NEURON_RT_VISIBLE_CORES and {cores}; the pool is neuron-ls's cores / this.")
_COMPILE_ONLY = typer.Option(False, "--compile-only", help="Runs need no device (neuronx-cc): no cores, the pool is "
                             "capped by free host memory / --mem-per-run.")
_MEM_PER_RUN = typer.Option(None, "--mem-per-run", help="Host memory one compile-only run may take (default 8G).")
_BACKEND = typer.Option(None, "--backend", help="local (a pool on this host, default) or ray.")
_COMPILERS = typer.Option(None, "--compiler-versions", help="V1,V2,... neuronx-cc releases (2.21 or 2.21.18209.0): "
                          "each variant runs with each, installed once into a cached venv by your pip's index.")
_SDK_RELEASES = typer.Option(None, "--sdk-releases", help="R1,R2,... Neuron SDK releases: the neuronx-cc each shipped "
                             "(as --compiler-versions).")
_ADDRESS = typer.Option(None, "--address", help="Ray cluster: HOST:PORT, ray://HOST:PORT or auto (default: "
                        "$RAY_ADDRESS, else a `ray start` cluster of this host, else a new local one).")


def _experiment(strategy: str, options: dict) -> None:
    from rich.console import Console

    from nforensics.experiments.commands import run as run_strategy

    output = run_strategy(strategy, options, Console(stderr=True), color=wants_color(sys.stdout))
    sys.stderr.write(output.stderr)
    sys.stdout.write(output.stdout)
    raise typer.Exit(output.exit_code)


@experiments.command()
def oracle(
    command: List[str] = _COMMAND,
    expect: str = typer.Option(..., "--expect", help="The code or signature that counts as reproducing."),
    timeout: Optional[float] = _TIMEOUT,
    env: List[str] = _ENV,
    cwd: Optional[str] = _CWD,
    mode: str = typer.Option("interesting", "--mode", help="interesting: exit 0 reproduces, 1 not, 125 untestable "
                             "(reducers); bisect: 1 reproduces, 0 passes, 125 otherwise (git bisect run)."),
) -> None:
    """Run a command once and judge it; the exit status depends on --mode (interesting by default)."""
    from nforensics.experiments.commands import oracle as judge_once

    output = judge_once(expect, command or [], timeout, env, cwd, mode)
    sys.stdout.write(output.stdout)
    raise typer.Exit(output.exit_code)


@experiments.command()
def sweep(
    command: List[str] = _COMMAND,
    knobs: List[str] = typer.Option([], "--knob", help="NAME=V1,V2,... (repeatable): every combination is run."),  # noqa: B008
    expect: Optional[str] = _EXPECT, timeout: Optional[float] = _TIMEOUT, env: List[str] = _ENV,
    inputs: List[str] = _INPUTS, cwd: Optional[str] = _CWD, workers: Optional[int] = _WORKERS,
    journal: Optional[str] = _JOURNAL, resume: bool = _RESUME, repeat: Optional[int] = _REPEAT,
    plan: Optional[str] = _PLAN, format: str = _EXP_FORMAT, csv: Optional[str] = _CSV, parquet: Optional[str] = _PARQUET,
    cores_per_run: Optional[int] = _CORES_PER_RUN, compile_only: bool = _COMPILE_ONLY, mem_per_run: Optional[str] = _MEM_PER_RUN,
    backend: Optional[str] = _BACKEND, address: Optional[str] = _ADDRESS,
    compiler_versions: Optional[str] = _COMPILERS, sdk_releases: Optional[str] = _SDK_RELEASES,
) -> None:
    """Run the full matrix of knob values (and compiler releases) and judge every variant."""
    _experiment("sweep", locals())


@experiments.command()
def bisect(
    command: List[str] = _COMMAND,
    knobs: List[str] = typer.Option([], "--knob", help="NAME=LO..HI or NAME=V1,V2,... in order."),  # noqa: B008
    expect: Optional[str] = _EXPECT, timeout: Optional[float] = _TIMEOUT, env: List[str] = _ENV,
    inputs: List[str] = _INPUTS, cwd: Optional[str] = _CWD, workers: Optional[int] = _WORKERS,
    journal: Optional[str] = _JOURNAL, resume: bool = _RESUME, repeat: Optional[int] = _REPEAT,
    plan: Optional[str] = _PLAN, format: str = _EXP_FORMAT, csv: Optional[str] = _CSV, parquet: Optional[str] = _PARQUET,
    cores_per_run: Optional[int] = _CORES_PER_RUN, compile_only: bool = _COMPILE_ONLY, mem_per_run: Optional[str] = _MEM_PER_RUN,
    backend: Optional[str] = _BACKEND, address: Optional[str] = _ADDRESS,
    compiler_versions: Optional[str] = _COMPILERS, sdk_releases: Optional[str] = _SDK_RELEASES,
) -> None:
    """Find the smallest value of an ordered knob that reproduces, in at most ceil(log2(n))+2 runs; over
    --compiler-versions (put oldest first), the release that broke it or the first that fixed it."""
    _experiment("bisect", locals())


@experiments.command()
def reduce(
    command: List[str] = _COMMAND,
    items: Optional[str] = typer.Option(None, "--items", help='"A B C ...": flags, env assignments, kernel names.'),
    hlo: Optional[str] = typer.Option(None, "--hlo", help="Shrink this HLO module (.pb) instead: {hlo} in the command is "
                                      "each candidate's .pb, {hlo_text} its text."),
    out: Optional[str] = typer.Option(None, "--out", help="With --hlo: the smallest failing module's .pb (default "
                                      "NAME.reduced.pb here); its text is written beside it as .hlo."),
    budget: Optional[int] = typer.Option(None, "--budget", help="With --hlo: at most this many compiles."),
    expect: Optional[str] = _EXPECT, timeout: Optional[float] = _TIMEOUT, env: List[str] = _ENV,
    inputs: List[str] = _INPUTS, cwd: Optional[str] = _CWD, workers: Optional[int] = _WORKERS,
    journal: Optional[str] = _JOURNAL, resume: bool = _RESUME, repeat: Optional[int] = _REPEAT,
    plan: Optional[str] = _PLAN, format: str = _EXP_FORMAT, csv: Optional[str] = _CSV, parquet: Optional[str] = _PARQUET,
    cores_per_run: Optional[int] = _CORES_PER_RUN, compile_only: bool = _COMPILE_ONLY, mem_per_run: Optional[str] = _MEM_PER_RUN,
    backend: Optional[str] = _BACKEND, address: Optional[str] = _ADDRESS,
) -> None:
    """Delta debugging: a 1-minimal subset of --items ({items} in the command), or with --hlo the smallest module
    that still fails ({hlo} in the command)."""
    _experiment("reduce", locals())


@experiments.command()
def confirm(
    log: str = typer.Argument(..., help="The failure log to diagnose."),
    repro: str = typer.Option(..., "--repro", help='The reproducer command, e.g. "python repro.py --layers {n_layers}".'),
    knobs: List[str] = typer.Option([], "--knob", help="NAME=VALUE: the baseline value of a {NAME} in --repro."),  # noqa: B008
    expect: Optional[str] = _EXPECT, timeout: Optional[float] = _TIMEOUT, env: List[str] = _ENV,
    inputs: List[str] = _INPUTS, cwd: Optional[str] = _CWD, workers: Optional[int] = _WORKERS,
    journal: Optional[str] = _JOURNAL, resume: bool = _RESUME, repeat: Optional[int] = _REPEAT,
    format: str = _EXP_FORMAT, csv: Optional[str] = _CSV, parquet: Optional[str] = _PARQUET,
    cores_per_run: Optional[int] = _CORES_PER_RUN, compile_only: bool = _COMPILE_ONLY, mem_per_run: Optional[str] = _MEM_PER_RUN,
    backend: Optional[str] = _BACKEND, address: Optional[str] = _ADDRESS,
    show_plan: bool = typer.Option(False, "--plan", help="Print the runs it would make and their cost (compiles, "
                                   "device runs), and run nothing."),
) -> None:
    """Diagnose LOG, then run the knowledge base's checks for it: each hypothesis confirmed or refuted."""
    _experiment("confirm", locals())


@experiments.command()
def selftest(
    workdir: Optional[str] = typer.Option(None, "--workdir", help="Where the tiny graph, its NEFF and the journal "
                                          "go (default: a temporary folder, removed after)."),
    target: str = typer.Option("trn1", "--target", help="The compiler's --target (trn1, trn2, inf2): this host's."),
    timeout: float = typer.Option(600, "--timeout", help="Seconds per run."),
    format: str = _EXP_FORMAT,
) -> None:
    """Check the host's Neuron toolchain where nforensics meets it: a compile that works, a compile the compiler
    refuses (read by nforensics' parser), the NEFF, neuron-ls, a run on the device, the journal. Exit 0 when every
    check that could run passed, 1 when one failed, 2 without neuronx-cc."""
    import json
    import tempfile
    from dataclasses import asdict
    from pathlib import Path

    from nforensics.experiments.selftest import run_selftest
    from nforensics.render.experiments import selftest_text

    with tempfile.TemporaryDirectory(prefix="nforensics-selftest-") as scratch:
        checks = run_selftest(Path(workdir or scratch), target, timeout)
    if format == "json":
        sys.stdout.write(json.dumps([asdict(check) for check in checks], indent=2) + "\n")
    else:
        sys.stdout.write(selftest_text(checks, color=wants_color(sys.stdout)))
    raise typer.Exit(1 if any(check.status == "fail" for check in checks) else 0)
