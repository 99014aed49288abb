"""The typer app: one thin function per command. Wiring only; the work happens in the rooms below.

Heavy imports (pandas, the experiment runner, artifact readers) stay inside the commands that need them,
so `nforensics explain` starts fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from forensics import __version__
from forensics.errors import InputError

app = typer.Typer(
    name="nforensics",
    help="Explain, confirm and report AWS Neuron toolchain failures.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_USAGE = 2  # usage or input error; explain's 0/1 come from forensics.ci.exit_code


def _version(value: bool) -> None:
    if value:
        typer.echo(f"nforensics {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Explain, confirm and report AWS Neuron toolchain failures."""


_KB = typer.Option([], "--kb", help="Extra signature pack: a folder of TOML files (repeatable).")


@app.command()
def explain(
    inputs: List[str] = typer.Argument(..., help="Log files, folders (searched recursively) or '-' for standard input."),
    format: List[str] = typer.Option(
        ["text"], "--format", "-f", help="NAME[=FILE], repeatable: text, json, sarif, github, junit, gitlab, markdown. "
        "Without FILE it goes to stdout."
    ),
    glob: str = typer.Option("*", "--glob", help="Which files to read inside folders, e.g. '*.log'."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when failures are diagnosed (advisory CI)."),
    kb: List[Path] = _KB,
    neff: Optional[Path] = typer.Option(
        None, "--neff", help="The NEFF that failed: its target and features feed the hypotheses."),
    source: Optional[Path] = typer.Option(
        None, "--source", help="The NKI kernel / calling script (.py): kernel facts feed the hypotheses."),
    device: Optional[str] = typer.Option(
        None, "--device", help="The device it ran on (trn1, inf2, trn2 or an instance type); default: what the log says."),
    no_redact: bool = typer.Option(
        False, "--no-redact", help="Print log text as it is: keys, hosts and user names are masked by default."),
) -> None:
    """Explain what failed in a neuronx-cc / Neuron Runtime / torch-neuronx / NKI log."""
    from forensics.ci import analyze_inputs, exit_code, parse_formats, write_outputs
    from forensics.pipeline import Artifacts

    requests = parse_formats(format)
    artifacts = Artifacts(neff, source, device) if neff or source or device else None
    analyses, skipped = analyze_inputs(inputs, glob, kb, artifacts)
    for reason in skipped:
        sys.stderr.write(f"nforensics: skipped {reason}\n")
    write_outputs(analyses, requests, sys.stdout, redact=not no_redact)
    raise typer.Exit(exit_code(analyses, exit_zero))


@app.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
def run(
    command: List[str] = typer.Argument(..., help="The command and its arguments (after `--`)."),
    format: List[str] = typer.Option(
        [], "--format", "-f", help="NAME[=FILE], repeatable: text, json, sarif, github, junit, gitlab, markdown. "
        "Without FILE it goes to stderr (stdout stays the command's); text goes there unless another format does."
    ),
    log: Optional[str] = typer.Option(None, "--log", help="Also save the command's output here; locations point at it."),
    no_redact: bool = typer.Option(
        False, "--no-redact", help="Explain without masking keys, hosts and user names (the passthrough is never changed)."),
) -> None:
    """Run a command, pass its output through unchanged, explain it if it fails; exit with its status."""
    from forensics.runcmd import run_and_explain

    raise typer.Exit(run_and_explain(command, format, log, sys.stdout.buffer, sys.stderr.buffer, sys.stderr,
                                     redact=not no_redact))  # fmt: skip


@app.command()
def report(
    file: str = typer.Argument(..., help="The failing log, or '-' for standard input."),
    instance: Optional[str] = typer.Option(None, "--instance", help="EC2 instance type, e.g. trn2.48xlarge."),
    repro: Optional[str] = typer.Option(None, "--repro", help="Reproducer script: embedded if small, else attached."),
    url: bool = typer.Option(False, "--url", help="Print a prefilled new-issue URL for aws-neuron/aws-neuron-sdk."),
    bundle: Optional[str] = typer.Option(None, "--bundle", help="Write a folder + .tar.gz to share (redacted)."),
    hlo: Optional[str] = typer.Option(None, "--hlo", help="HLO file to include in the bundle."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Do not mask keys, hosts, user names (not advised)."),
    env_here: bool = typer.Option(False, "--env-here", help="Also probe this machine (run it where the job failed)."),
    journal: Optional[str] = typer.Option(None, "--journal", help="Experiment journal to cite under reproduction."),
    format: str = typer.Option("markdown", "--format", "-f", help="markdown or json."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the report here instead of stdout."),
) -> None:
    """Write a bug report for aws-neuron/aws-neuron-sdk, shaped like its issue form, redacted, offline."""
    from forensics.bundle import ReportOptions, make_report, stdout_text, write_report_file

    options = ReportOptions(
        log=file, instance=instance, repro=repro, url=url, bundle=bundle, hlo=hlo, redact=not no_redact,
        env_here=env_here, journal=journal, format=format,
    )
    result = make_report(options)
    for line in write_report_file(result, output, file):
        sys.stderr.write(f"nforensics: {line}\n")
    sys.stdout.write(stdout_text(result, options, output))


@app.command()
def env(format: str = typer.Option("text", "--format", "-f", help="text or json.")) -> None:
    """Probe this machine like collect_env: OS, Python, Neuron compiler, tools and packages. Offline."""
    from forensics.envprobe import probe
    from forensics.redact import Redactor
    from forensics.render import check_format
    from forensics.render.probe import render_probe

    check_format(format)
    sys.stdout.write(render_probe(probe(), format, Redactor()))


@app.command()
def codes(
    key: Optional[str] = typer.Argument(
        None, help="A code (NCC_EOOM001, TEN404, NRT_EXEC_OOB) or signature id: print its entry."),
    component: Optional[str] = typer.Option(None, "--component", help="compiler, runtime, framework, nki or environment."),
    prefix: Optional[str] = typer.Option(None, "--prefix", help="Only codes starting with this, e.g. NCC_E."),
    status: Optional[str] = typer.Option(None, "--status", help="open, fixed, user-error or environment."),
    format: str = typer.Option("text", "--format", "-f", help="text or json."),
    kb: List[Path] = _KB,
) -> None:
    """List the signature catalogue, or print one entry in full (like `ruff rule`)."""
    import shutil

    from forensics.diagnose.versions import catalogue_fixed_in
    from forensics.knowledge import load_kb
    from forensics.render import check_format
    from forensics.render.catalogue import lookup, render_entries, render_table, select

    check_format(format)
    knowledge = load_kb(kb)
    if key is None:
        listing = select(knowledge.signatures, component=component, prefix=prefix, status=status)
        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else 200  # piped: one row per line
        sys.stdout.write(render_table(listing, catalogue_fixed_in(listing), format, width=width))
        return
    entries = lookup(knowledge, key)
    if not entries:
        raise InputError(f"no signature has the code or id {key!r} (list them with `nforensics codes`)")
    sys.stdout.write(render_entries(entries, catalogue_fixed_in(entries), format))


@app.command()
def cases(
    query: Optional[str] = typer.Argument(None, help="Words to find in titles and error lines, or REPO#N to print one report."),
    code: Optional[str] = typer.Option(None, "--code", help="Reports that print this code (TEN404, NCC_EOOM001, NRT_EXEC_OOB)."),
    family: Optional[str] = typer.Option(None, "--family", help="Reports of this failure family (see `nforensics codes`)."),
    repo: Optional[str] = typer.Option(None, "--repo", help="Reports of this repository (owner/name or name)."),
    format: str = typer.Option("text", "--format", "-f", help="text or json."),
    kb: List[Path] = _KB,
) -> None:
    """Search the public reports nforensics knows (the case base), or print one: `cases aws-neuron-sdk#1298`."""
    from forensics.knowledge import load_kb
    from forensics.knowledge.cases import find_case, load_cases
    from forensics.render import check_format
    from forensics.render.cases import render_case, render_list, select

    check_format(format)
    known = load_cases(load_kb(kb))
    if query and "#" in query:
        sys.stdout.write(render_case(find_case(known, query), format))
    else:
        sys.stdout.write(render_list(select(known, text=query, code=code, family=family, repo=repo), format))


# ---------------------------------------------------------------- artifacts: NEFF files, compile cache, NKI source


class _DefaultToShow(typer.core.TyperGroup):
    """`nforensics neff FILE` means `neff show FILE`; `nforensics neff diff A B` stays a subcommand."""

    def parse_args(self, ctx, args):  # type: ignore[no-untyped-def]
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["show", *args]
        return super().parse_args(ctx, args)


neff_app = typer.Typer(cls=_DefaultToShow, no_args_is_help=True, help="Read NEFF files: `neff FILE`, `neff diff A B`.")
app.add_typer(neff_app, name="neff")


@neff_app.command("show")
def neff_show(
    file: Path = typer.Argument(..., help="The .neff file."),
    format: str = typer.Option("text", "--format", "-f", help="text or json."),
    device: Optional[str] = typer.Option(
        None, "--device",
        help="Device meant to run it (trn1, inf2, trn2 or an instance type): flags a NEFF built for a newer NeuronCore."
    ),
    extract: Optional[Path] = typer.Option(
        None, "--extract", help="Also unpack the payload into this new or empty folder (unsafe members are refused)."
    ),
) -> None:
    """Header, hash, compiler, target, subgraphs, features, tables of a NEFF. Writes nothing unless --extract."""
    from forensics.artifacts.neff import read_neff
    from forensics.artifacts.neff_extract import extract_neff
    from forensics.render import check_format
    from forensics.render.artifacts import render_artifact

    check_format(format)
    report = read_neff(file, device=device)
    if extract:
        report.extracted_to = str(extract_neff(file, extract))
    sys.stdout.write(render_artifact(report, format, color=sys.stdout.isatty()))


@neff_app.command("diff")
def neff_diff(
    a: Path = typer.Argument(..., help="First .neff file."),
    b: Path = typer.Argument(..., help="Second .neff file."),
    format: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """What changed between two NEFFs: compiler, target, features, subgraphs, tables, sizes."""
    from forensics.artifacts.neff import diff_neffs
    from forensics.render.artifacts import render_artifact

    sys.stdout.write(render_artifact(diff_neffs(a, b), format, color=sys.stdout.isatty()))


@app.command()
def cache(
    directory: Optional[Path] = typer.Argument(
        None, help="Cache folder (default: NEURON_CC_FLAGS --cache_dir, NEURON_COMPILE_CACHE_URL, /var/tmp/neuron-compile-cache)."
    ),
    failed: bool = typer.Option(False, "--failed", help="Only failed entries, each with the explanation of its log."),
    format: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """List compile-cache entries: compiler, MODULE, flags, state (done/failed/incomplete), size, age. Read-only."""
    from forensics.artifacts.cache import cache_root, scan_cache
    from forensics.pipeline import explain_failed_entries
    from forensics.render import check_format
    from forensics.render.artifacts import render_artifact

    check_format(format)
    root, root_from = cache_root(directory)
    report = scan_cache(root, root_from=root_from, failed_only=failed)
    if failed:
        explain_failed_entries(report)
    sys.stdout.write(render_artifact(report, format, color=sys.stdout.isatty()))


@app.command()
def nki(
    file: Path = typer.Argument(..., help="Python source with @nki.jit kernels and/or the code calling them."),
    format: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """Facts from NKI kernel source (Python ast, nothing imported): matmuls, buffers, grids, calls per graph."""
    from forensics.artifacts.nki_source import read_nki_source
    from forensics.render.artifacts import render_artifact

    sys.stdout.write(render_artifact(read_nki_source(file), format, color=sys.stdout.isatty()))


# ---------------------------------------------------------------- experiments: confirm by re-running variants
# Options shared by the experiment commands (typer reads these as metadata, so they can be reused).
_COMMAND = typer.Argument(None, help="The command template after `--`; {NAME} placeholders are filled per variant.")
_EXPECT = typer.Option(None, "--expect", help="The code or signature that counts as reproducing, e.g. NCC_IXLV002.")
_TIMEOUT = typer.Option(None, "--timeout", help="Seconds per run before its whole process group is killed (default 3600).")
_ENV = typer.Option([], "--env", help="KEY=VALUE set for each run (repeatable); the value may use {NAME}.")
_INPUTS = typer.Option([], "--input", help="A file the command reads: its content is part of a variant's identity.")
_CWD = typer.Option(None, "--cwd", help="Run in this directory instead of a fresh temporary directory per run.")
_WORKERS = typer.Option(None, "--workers", help="Runs at a time (default: the number of cores).")
_JOURNAL = typer.Option(None, "--journal", help="SQLite journal of every run (default .nforensics/journal.sqlite).")
_RESUME = typer.Option(False, "--resume", help="Continue the last session with the same plan; finished runs are reused.")
_REPEAT = typer.Option(None, "--repeat", help="Run each variant N times and mark flaky verdicts.")
_PLAN = typer.Option(None, "--plan", help="A TOML plan (command, knobs, cases, items, env, ...); options override it.")
_EXP_FORMAT = typer.Option("text", "--format", "-f", help="text or json.")
_CSV = typer.Option(None, "--csv", help="Also export this session's runs as CSV.")
_PARQUET = typer.Option(None, "--parquet", help="Also export this session's runs as Parquet.")


def _experiment(strategy: str, options: dict) -> None:
    from rich.console import Console

    from forensics.experiments.commands import run as run_strategy

    output = run_strategy(strategy, options, Console(stderr=True), color=sys.stdout.isatty())
    sys.stderr.write(output.stderr)
    sys.stdout.write(output.stdout)
    raise typer.Exit(output.exit_code)


@app.command()
def oracle(
    command: List[str] = _COMMAND,
    expect: str = typer.Option(..., "--expect", help="The code or signature that counts as reproducing."),
    timeout: Optional[float] = _TIMEOUT,
    env: List[str] = _ENV,
    cwd: Optional[str] = _CWD,
) -> None:
    """Run a command once and judge it: exit 0 reproduces, 1 passes or fails differently, 125 untestable."""
    from forensics.experiments.commands import oracle as judge_once

    output = judge_once(expect, command or [], timeout, env, cwd)
    sys.stdout.write(output.stdout)
    raise typer.Exit(output.exit_code)


@app.command()
def sweep(
    command: List[str] = _COMMAND,
    knobs: List[str] = typer.Option([], "--knob", help="NAME=V1,V2,... (repeatable): every combination is run."),
    expect: Optional[str] = _EXPECT, timeout: Optional[float] = _TIMEOUT, env: List[str] = _ENV,
    inputs: List[str] = _INPUTS, cwd: Optional[str] = _CWD, workers: Optional[int] = _WORKERS,
    journal: Optional[str] = _JOURNAL, resume: bool = _RESUME, repeat: Optional[int] = _REPEAT,
    plan: Optional[str] = _PLAN, format: str = _EXP_FORMAT, csv: Optional[str] = _CSV, parquet: Optional[str] = _PARQUET,
) -> None:
    """Run the full matrix of knob values and judge every variant."""
    _experiment("sweep", locals())


@app.command()
def bisect(
    command: List[str] = _COMMAND,
    knobs: List[str] = typer.Option([], "--knob", help="NAME=LO..HI or NAME=V1,V2,... in order."),
    expect: Optional[str] = _EXPECT, timeout: Optional[float] = _TIMEOUT, env: List[str] = _ENV,
    inputs: List[str] = _INPUTS, cwd: Optional[str] = _CWD, workers: Optional[int] = _WORKERS,
    journal: Optional[str] = _JOURNAL, resume: bool = _RESUME, repeat: Optional[int] = _REPEAT,
    plan: Optional[str] = _PLAN, format: str = _EXP_FORMAT, csv: Optional[str] = _CSV, parquet: Optional[str] = _PARQUET,
) -> None:
    """Find the smallest value of an ordered knob that reproduces, in at most ceil(log2(n))+2 runs."""
    _experiment("bisect", locals())


@app.command()
def reduce(
    command: List[str] = _COMMAND,
    items: Optional[str] = typer.Option(None, "--items", help='"A B C ...": flags, env assignments, kernel names.'),
    expect: Optional[str] = _EXPECT, timeout: Optional[float] = _TIMEOUT, env: List[str] = _ENV,
    inputs: List[str] = _INPUTS, cwd: Optional[str] = _CWD, workers: Optional[int] = _WORKERS,
    journal: Optional[str] = _JOURNAL, resume: bool = _RESUME, repeat: Optional[int] = _REPEAT,
    plan: Optional[str] = _PLAN, format: str = _EXP_FORMAT, csv: Optional[str] = _CSV, parquet: Optional[str] = _PARQUET,
) -> None:
    """Delta debugging (ddmin): a 1-minimal subset of --items that still reproduces; `{items}` in the command."""
    _experiment("reduce", locals())


@app.command()
def confirm(
    log: str = typer.Argument(..., help="The failure log to diagnose."),
    repro: str = typer.Option(..., "--repro", help='The reproducer command, e.g. "python repro.py --layers {n_layers}".'),
    knobs: List[str] = typer.Option([], "--knob", help="NAME=VALUE: the baseline value of a {NAME} in --repro."),
    expect: Optional[str] = _EXPECT, timeout: Optional[float] = _TIMEOUT, env: List[str] = _ENV,
    inputs: List[str] = _INPUTS, cwd: Optional[str] = _CWD, workers: Optional[int] = _WORKERS,
    journal: Optional[str] = _JOURNAL, resume: bool = _RESUME, repeat: Optional[int] = _REPEAT,
    format: str = _EXP_FORMAT, csv: Optional[str] = _CSV, parquet: Optional[str] = _PARQUET,
) -> None:
    """Diagnose LOG, then run the knowledge base's checks for it: each hypothesis confirmed or refuted."""
    _experiment("confirm", locals())


def main() -> None:
    """Entry point: usage and input errors become one line on stderr and exit code 2, never a traceback."""
    try:
        # Without standalone mode click returns typer.Exit's code instead of raising it.
        code = app(standalone_mode=False)
    except InputError as exc:
        sys.stderr.write(f"nforensics: {exc}\n")
        sys.exit(EXIT_USAGE)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("nforensics: interrupted\n")
        sys.exit(130)
    except Exception as exc:  # click usage errors and anything unexpected: one line, exit 2
        if hasattr(exc, "format_message"):  # click's usage errors (typer vendors click as typer._click)
            message = exc.format_message()
            if message:  # empty when click already printed the help (no arguments given)
                sys.stderr.write(f"nforensics: {message}\n")
            sys.exit(EXIT_USAGE)
        sys.stderr.write(f"nforensics: internal error: {type(exc).__name__}: {exc}\n")
        sys.exit(EXIT_USAGE)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
