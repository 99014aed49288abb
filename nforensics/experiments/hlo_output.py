"""`reduce --hlo` for the CLI: read the module, run the reduction (nforensics/experiments/hlo_reduce.py), write the
smallest failing module as .pb and text, and say what was removed (text or JSON). Returns text; the CLI prints it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nforensics.errors import InputError
from nforensics.experiments.hlo_reduce import HloReduceResult, reduce_hlo
from nforensics.experiments.plan import Settings
from nforensics.experiments.runner import Experiment

CANDIDATES = "hlo-candidates"  # beside the journal: every candidate module, named by its content's hash


def read_proto(path: str) -> Any:
    """The HloModuleProto in `path` (.pb, .pb.gz, an HloProto around one). A text module is refused: its
    literals and attributes cannot be written back as a proto without XLA."""
    from nforensics.artifacts.hlo import is_text, load_bytes
    from nforensics.artifacts.hlo_proto import load_message

    data = load_bytes(Path(path))
    if is_text(data):
        raise InputError(f"--hlo {path}: reduce needs the module as a proto (model.hlo_module.pb, or "
                         "XLA_FLAGS=--xla_dump_hlo_as_proto), not text")
    return load_message(data, path)


def outputs(s: Settings) -> tuple[Path, Path]:
    """Where the result goes: --out (.pb) and its text beside it (.hlo); by default NAME.reduced.pb here."""
    if s.out:
        pb = Path(s.out)
    else:
        name = Path(s.hlo or "module").name
        for suffix in (".gz", ".pb"):
            name = name.removesuffix(suffix)
        pb = Path(f"{name}.reduced.pb")
    if not pb.resolve().parent.is_dir():
        raise InputError(f"--out {pb}: folder {pb.parent} does not exist")
    return pb, pb.with_suffix(".hlo") if pb.suffix == ".pb" else pb.with_name(pb.name + ".hlo")


def reduce_hlo_command(exp: Experiment, s: Settings, fmt: str, fixed: dict[str, str]):
    from nforensics.artifacts.hlo_write_text import module_text
    from nforensics.experiments.commands import CommandOutput

    module = read_proto(s.hlo or "")
    pb, text = outputs(s)
    workdir = (Path(s.journal).parent / CANDIDATES).resolve()
    result = reduce_hlo(exp, s.template, module, workdir, exp.backend.workers, s.budget, fixed)
    warnings = "".join(f"nforensics: warning: {w}\n" for w in result.warnings)
    if not result.reproduced:
        if fmt == "json":
            return CommandOutput(json.dumps({"reduced": None, "runs": result.runs}, indent=2) + "\n", warnings, 1)
        return CommandOutput(f"{s.expect}: not reproduced by the module as given: nothing written\n", warnings, 1)
    try:
        pb.write_bytes(result.module.SerializeToString(deterministic=True))
        text.write_text(module_text(result.module), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {exc.filename}: {exc.strerror}") from None
    if fmt == "json":
        return CommandOutput(json.dumps(summary(result, pb, text), indent=2) + "\n", warnings)
    return CommandOutput(summary_text(result, s.expect, pb, text), warnings)


def summary(result: HloReduceResult, pb: Path, text: Path) -> dict:
    r = result.removed
    return {"reduced": str(pb), "text": str(text), "instructions": list(r.instructions),
            "computations": list(r.computations), "parameters": list(r.parameters), "removed_ops": r.ops,
            "cut": r.cut, "shrunk": r.shrunk, "runs": result.runs, "phases": result.phases, "budget_exhausted": result.exhausted}


def summary_text(result: HloReduceResult, expect: str, pb: Path, text: Path) -> str:
    r = result.removed
    (before, after), share = r.instructions, r.instructions[1] / max(r.instructions[0], 1)
    removed = ", ".join(f"{op} {n}" for op, n in list(r.ops.items())[:8]) + (", ..." if len(r.ops) > 8 else "")
    lines = [
        f"reduce --hlo: {expect} still fails on {after} of {before} instructions ({share:.1%}), "
        f"{r.computations[1]} of {r.computations[0]} computations, after {result.runs} compiles"
        + (" (budget exhausted)" if result.exhausted else ""),
        f"  written: {pb} and {text}",
        f"  removed from the entry: {removed or 'nothing'}",
        f"  parameters: {r.parameters[0]} -> {r.parameters[1]}; cut into parameters: {', '.join(r.cut) or 'none'}",
        f"  shapes shrunk: {', '.join(r.shrunk) or 'none'}",
        "  compiles per phase: " + ", ".join(f"{phase} {n}" for phase, n in result.phases.items()),
    ]
    return "\n".join(lines) + "\n"
