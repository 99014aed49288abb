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

EXIT_CLEAN, EXIT_DIAGNOSED, EXIT_USAGE = 0, 1, 2


def _version(value: bool) -> None:
    if value:
        typer.echo(f"nforensics {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Explain, confirm and report AWS Neuron toolchain failures."""


@app.command()
def explain(
    inputs: List[str] = typer.Argument(..., help="Log files, folders or '-' for standard input."),
    format: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """Explain what failed in a neuronx-cc / Neuron Runtime / torch-neuronx / NKI log."""
    from forensics.diagnose import analyze_path
    from forensics.render import render

    analyses = [analyze_path(i) for i in inputs]
    sys.stdout.write(render(analyses, format))
    raise typer.Exit(EXIT_DIAGNOSED if any(a.findings for a in analyses) else EXIT_CLEAN)


def main() -> None:
    """Entry point: usage and input errors become one line on stderr and exit code 2, never a traceback."""
    try:
        app(standalone_mode=False)
    except InputError as exc:
        sys.stderr.write(f"nforensics: {exc}\n")
        sys.exit(EXIT_USAGE)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("nforensics: interrupted\n")
        sys.exit(130)
    except Exception as exc:  # click usage errors and anything unexpected: one line, exit 2
        import click

        if isinstance(exc, click.exceptions.ClickException):
            sys.stderr.write(f"nforensics: {exc.format_message()}\n")
            sys.exit(EXIT_USAGE)
        sys.stderr.write(f"nforensics: internal error: {type(exc).__name__}: {exc}\n")
        sys.exit(EXIT_USAGE)


if __name__ == "__main__":
    main()
