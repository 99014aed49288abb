"""The typer app: one thin function per command. Wiring only; the work happens in the rooms below.

Heavy imports (pandas, the experiment runner, artifact readers) stay inside the commands that need them,
so `nforensics explain` starts fast.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import List, Optional

import typer

from nforensics import __version__
from nforensics.cli_experiments import experiments
from nforensics.cli_help import help_metavars
from nforensics.cli_hlo import hlo_app
from nforensics.errors import EXIT_INTERRUPTED, EXIT_USAGE, InputError
from nforensics.render.style import choose_color, choose_detail, wants_color
from nforensics.triage.command import triage

app = typer.Typer(
    name="nforensics",
    help="Explain, confirm and report AWS Neuron toolchain failures.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"nforensics {__version__}")
        raise typer.Exit()


def _color(choice: str) -> str:
    try:
        choose_color(choice)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    return choice


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
    color: str = typer.Option("auto", "--color", callback=_color, metavar="auto|always|never",
                              help="Colour the output; auto: a terminal, unless NO_COLOR (FORCE_COLOR forces it)."),
) -> None:
    """Explain, confirm and report AWS Neuron toolchain failures."""


_KB = typer.Option([], "--kb", help="Extra signature pack: a folder of TOML files (repeatable).")
_VERBOSE = typer.Option(False, "--verbose", "-v", help="Text: everything known about each finding (meaning, fields, "
                        "every hypothesis and workaround, references).")
_BRIEF = typer.Option(False, "--brief", help="Text: one line per finding (path:line: CODE title -> top hypothesis) "
                      "and a totals line.")


def _detail(verbose: bool, brief: bool) -> None:
    if verbose and brief:
        raise InputError("--verbose and --brief contradict each other: give one")
    choose_detail("verbose" if verbose else "brief" if brief else "default")


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
    hlo: List[Path] = typer.Option(
        [], "--hlo", help="The HLO module the compiler was given (model.hlo_module.pb or text, maybe .gz; repeatable): "
        "its facts feed the hypotheses. Without it, modules the log names that are on this machine are read."),
    no_redact: bool = typer.Option(
        False, "--no-redact", help="Print log text as it is: keys, hosts and user names are masked by default."),
    jobs: Optional[int] = typer.Option(
        None, "--jobs", "-j", min=1, help="Files analysed at once, each in its own process (default: the number of cores)."),
    verbose: bool = _VERBOSE,
    brief: bool = _BRIEF,
) -> None:
    """Explain what failed in a neuronx-cc / Neuron Runtime / torch-neuronx / NKI log."""
    from nforensics.batch import analyses, default_jobs
    from nforensics.ci import exit_status, one_per_stream, parse_formats, stream_outputs
    from nforensics.pipeline import load_artifacts

    _detail(verbose, brief)
    requests = parse_formats(format)
    one_per_stream(requests, "stdout")
    if "-" in inputs and sys.stdin.isatty():
        sys.stderr.write("nforensics: reading a log from the terminal: paste it and press Ctrl-D "
                         "(or pipe one in: CMD 2>&1 | nforensics explain -)\n")
    artifacts = load_artifacts(neff, source, device, hlo)
    skipped: list[str] = []
    results = analyses(inputs, glob, kb, artifacts, jobs=jobs or default_jobs(), redact=not no_redact, skipped=skipped)
    diagnosed = stream_outputs(results, requests, sys.stdout)
    for reason in skipped:
        sys.stderr.write(f"nforensics: skipped {reason}\n")
    raise typer.Exit(exit_status(diagnosed, exit_zero))


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
    verbose: bool = _VERBOSE,
    brief: bool = _BRIEF,
) -> None:
    """Run a command, pass its output through unchanged, explain it if it fails; exit with its status."""
    from nforensics.runcmd import run_and_explain

    if command[0].startswith("-"):  # an option of ours misspelt (`--logg`), not a command: no command starts with -
        raise InputError(f"No such option: {command[0]} (the command to run goes after `--`)")
    _detail(verbose, brief)
    raise typer.Exit(run_and_explain(command, format, log, sys.stdout.buffer, sys.stderr.buffer, sys.stderr,
                                     redact=not no_redact))  # fmt: skip


_PYTHON = typer.Option(None, "--python", help="The Python whose packages to list (default: $VIRTUAL_ENV, else python3 on PATH).")


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
    python: Optional[str] = _PYTHON,
    journal: Optional[str] = typer.Option(None, "--journal", help="Experiment journal to cite under reproduction."),
    format: str = typer.Option("markdown", "--format", "-f", help="markdown or json."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the report here instead of stdout."),
) -> None:
    """Write a bug report for aws-neuron/aws-neuron-sdk, shaped like its issue form, redacted, offline."""
    from nforensics.bundle import ReportOptions, make_report, stdout_text, write_report_file

    options = ReportOptions(
        log=file, instance=instance, repro=repro, url=url, bundle=bundle, hlo=hlo, redact=not no_redact,
        env_here=env_here, python=python, journal=journal, format=format,
    )
    result = make_report(options)
    for line in write_report_file(result, output, file):
        sys.stderr.write(f"nforensics: {line}\n")
    sys.stdout.write(stdout_text(result, options, output))


@app.command()
def env(
    format: str = typer.Option("text", "--format", "-f", help="text or json."),
    python: Optional[str] = _PYTHON,
) -> None:
    """Probe this machine like collect_env: OS, Python, Neuron compiler, tools and packages. Offline."""
    from nforensics.envprobe import interpreter, probe
    from nforensics.redact import Redactor
    from nforensics.render import check_format
    from nforensics.render.probe import render_probe

    check_format(format)
    sys.stdout.write(render_probe(probe(interpreter(python)), format, Redactor()))


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

    from nforensics.diagnose.versions import catalogue_fixed_in
    from nforensics.knowledge import load_kb
    from nforensics.render import check_format
    from nforensics.render.catalogue import lookup, render_entries, render_table, select

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
    from nforensics.knowledge import load_kb
    from nforensics.knowledge.cases import find_case, load_cases
    from nforensics.render import check_format
    from nforensics.render.cases import render_case, render_list, select

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
app.add_typer(hlo_app, name="hlo")


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
    from nforensics.artifacts.neff import read_neff
    from nforensics.artifacts.neff_extract import extract_neff
    from nforensics.render import check_format
    from nforensics.render.artifacts import render_artifact

    check_format(format)
    report = read_neff(file, device=device)
    if extract:
        report.extracted_to = str(extract_neff(file, extract))
    sys.stdout.write(render_artifact(report, format, color=wants_color(sys.stdout)))


@neff_app.command("diff")
def neff_diff(
    a: Path = typer.Argument(..., help="First .neff file."),
    b: Path = typer.Argument(..., help="Second .neff file."),
    format: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """What changed between two NEFFs: compiler, target, features, subgraphs, tables, sizes."""
    from nforensics.artifacts.neff import diff_neffs
    from nforensics.render.artifacts import render_artifact

    sys.stdout.write(render_artifact(diff_neffs(a, b), format, color=wants_color(sys.stdout)))


@app.command()
def cache(
    directory: Optional[Path] = typer.Argument(
        None, help="Cache folder (default: NEURON_CC_FLAGS --cache_dir, NEURON_COMPILE_CACHE_URL, /var/tmp/neuron-compile-cache)."
    ),
    failed: bool = typer.Option(False, "--failed", help="Only failed entries, each with the explanation of its log."),
    format: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """List compile-cache entries: compiler, MODULE, flags, state (done/failed/incomplete), size, age. Read-only."""
    from nforensics.artifacts.cache import cache_root, scan_cache
    from nforensics.pipeline import explain_failed_entries
    from nforensics.render import check_format
    from nforensics.render.artifacts import render_artifact

    check_format(format)
    root, root_from = cache_root(directory)
    report = scan_cache(root, root_from=root_from, failed_only=failed)
    if failed:
        explain_failed_entries(report)
    sys.stdout.write(render_artifact(report, format, color=wants_color(sys.stdout)))


@app.command()
def nki(
    file: Path = typer.Argument(..., help="Python source with @nki.jit kernels and/or the code calling them."),
    format: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """Facts from NKI kernel source (Python ast, nothing imported): matmuls, buffers, grids, calls per graph."""
    from nforensics.artifacts.nki_source import read_nki_source
    from nforensics.render.artifacts import render_artifact

    sys.stdout.write(render_artifact(read_nki_source(file), format, color=wants_color(sys.stdout)))


app.command()(triage)
app.registered_commands += experiments.registered_commands  # oracle, sweep, bisect, reduce, confirm: listed last


def _only(command: str | None) -> typer.Typer:
    """The app with only `command` registered, when it names one: typer turns every registered command's
    options into click parameters before it parses any, which `explain` should not pay for."""
    chosen = [info for info in app.registered_commands
              if command in (info.name, info.callback and typer.main.get_command_name(info.callback.__name__))]
    if not chosen:
        return app  # --help, --version, a command group (neff) or a typo: the whole app answers
    lean = copy.copy(app)
    lean.registered_commands, lean.registered_groups = chosen, []
    return lean


def main() -> None:
    """Entry point: usage and input errors become one line on stderr and exit code 2, never a traceback."""
    try:
        # Without standalone mode click returns typer.Exit's code instead of raising it.
        command = help_metavars(typer.main.get_command(_only(sys.argv[1] if len(sys.argv) > 1 else None)))
        code = command(standalone_mode=False, prog_name="nforensics")  # (also under python -m nforensics)
    except InputError as exc:
        sys.stderr.write(f"nforensics: {exc}\n")
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("nforensics: interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:  # click usage errors and anything unexpected: one line, exit 2
        if hasattr(exc, "format_message"):  # click's usage errors (typer vendors click as typer._click)
            message = exc.format_message()
            if message:  # empty when click already printed the help (no arguments given)
                sys.stderr.write(f"nforensics: {message}\n")
            sys.exit(EXIT_USAGE)
        sys.stderr.write(f"nforensics: internal error: {type(exc).__name__}: {exc}\n")
        sys.exit(EXIT_USAGE)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # python -m nforensics.cli, as before: the same command, with the interpreter's own start and end
    main()
