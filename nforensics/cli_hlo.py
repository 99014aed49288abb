"""The `nforensics hlo` commands: `hlo FILE` (the facts of an HLO module) and `hlo diff A B`. Wiring only, like
nforensics/cli.py, which registers them with one line; the work is in nforensics/artifacts/hlo*.py and the output
in nforensics/render/hlo.py. Typer declares options as default values (B008): its documented idiom."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from nforensics.render.style import wants_color


class _DefaultToShow(typer.core.TyperGroup):
    """`nforensics hlo FILE` means `hlo show FILE`; `nforensics hlo diff A B` stays a subcommand."""

    def parse_args(self, ctx, args):  # type: ignore[no-untyped-def]
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["show", *args]
        return super().parse_args(ctx, args)


hlo_app = typer.Typer(cls=_DefaultToShow, no_args_is_help=True,
                      help="Read HLO modules (.pb, .pb.gz, .hlo, .txt): `hlo FILE`, `hlo diff A B`.")

_FORMAT = typer.Option("text", "--format", "-f", help="text or json.")
_FILE = typer.Argument(..., help="An HLO module: HloModuleProto (.pb, model.hlo_module.pb) or text, maybe .gz.")
_FILE_A = typer.Argument(..., help="The first HLO module (text or proto).")
_FILE_B = typer.Argument(..., help="The second HLO module.")


_OP = typer.Option([], "--op", help="Also list these ops with their framework source lines: an instruction name, "
                   "an opcode or a word of the framework op name (conv_general_dilated); repeatable.")


@hlo_app.command("show")
def hlo_show(
    file: Path = _FILE,
    format: str = _FORMAT,
    op: list[str] = _OP,
) -> None:
    """Op histogram, dtypes and bf16/f32 converts, custom-calls and kernels, convolutions (and which are gradients),
    an HBM estimate, dynamic shapes, collectives, and the biggest (or --op named) ops with their source lines."""
    from nforensics.artifacts.hlo import read_hlo
    from nforensics.render import check_format
    from nforensics.render.hlo import render_hlo

    check_format(format)
    report = read_hlo(file, named=op)
    if op and not report.named:
        print(f"nforensics: --op {' '.join(op)}: no instruction, opcode or framework op name of {file} matches",
              file=sys.stderr)
    sys.stdout.write(render_hlo(report, format, color=wants_color(sys.stdout)))


@hlo_app.command("diff")
def hlo_diff(
    a: Path = _FILE_A,
    b: Path = _FILE_B,
    format: str = _FORMAT,
) -> None:
    """What changed between two HLO modules: op counts, element types and converts, custom-call kernels,
    convolutions, collectives, memory, dynamic shapes. Either may be text or proto."""
    from nforensics.artifacts.hlo import diff_hlo
    from nforensics.render import check_format
    from nforensics.render.hlo import render_hlo

    check_format(format)
    sys.stdout.write(render_hlo(diff_hlo(a, b), format, color=wants_color(sys.stdout)))
