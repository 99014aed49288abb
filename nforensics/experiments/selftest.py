"""`nforensics selftest`: the host's Neuron toolchain through every point where nforensics meets it.

On a Neuron host it compiles a tiny graph with the real neuronx-cc and checks what the experiments rely on:
a compile that works exits 0, writes a NEFF nforensics can read and prints nothing its parser calls an
error; a compile the compiler refuses (an option it does not know) exits non-zero with the code the
catalogue knows (NCC_EARG002), read by nforensics' own parser; neuron-ls reports NeuronCores; the NEFF runs
on the device (`neuron-profile capture` executes it); every run is journaled and read back. Each check goes
through the experiment runner, as `oracle` and `sweep` runs do. Without neuronx-cc there is nothing to test:
one line, exit 2. CI runs the same checks against the stand-ins in tests/fakes.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from nforensics.errors import InputError
from nforensics.experiments.journal import Journal
from nforensics.experiments.oracle import PASSES, REPRODUCES, Expectation, expectation
from nforensics.experiments.plan import Template
from nforensics.experiments.runner import RunSpec, execute
from nforensics.experiments.slots import neuron_ls_cores

REFUSED_CODE = "NCC_EARG002"  # neuronx-cc's code for an argument it does not recognise
UNKNOWN_FLAG = "--nforensics-selftest-unknown-option"
SIDE = 128  # the tiny graph: an f32[SIDE,SIDE] parameter added to itself


@dataclass(frozen=True)
class Check:
    name: str
    status: Literal["pass", "fail", "skip"]
    detail: str


def tiny_module() -> bytes:
    """A serialized HloModuleProto of one computation: p0 = parameter f32[128,128]; ROOT add(p0, p0)."""
    from nforensics.artifacts.hlo_proto import message_classes
    from nforensics.artifacts.hlo_write import check_module

    module = message_classes()["HloModuleProto"]()
    module.name, module.id = "nforensics_selftest", 1
    module.entry_computation_name, module.entry_computation_id = "main", 1
    computation = module.computations.add(name="main", id=1, root_id=2)
    for number, (name, opcode) in enumerate((("p0", "parameter"), ("sum", "add")), start=1):
        instruction = computation.instructions.add(name=name, opcode=opcode, id=number)
        instruction.shape.element_type = 11  # F32
        instruction.shape.dimensions.extend([SIDE, SIDE])
        instruction.shape.layout.minor_to_major.extend([1, 0])
        if opcode == "parameter":
            instruction.parameter_number = 0
        else:
            instruction.operand_ids.extend([1, 1])
    parameter, root = computation.instructions[0].shape, computation.instructions[1].shape
    for shape in (computation.program_shape, module.host_program_shape):
        shape.parameters.add().CopyFrom(parameter)
        shape.parameter_names.append("p0")
        shape.result.CopyFrom(root)
    problems = check_module(module)
    assert not problems, problems  # the module is built here: a problem is a bug in this function
    return bytes(module.SerializeToString())


def run_selftest(workdir: Path, target: str, timeout: float) -> list[Check]:
    """Every check, in order; InputError when there is no toolchain to test."""
    compiler = shutil.which("neuronx-cc")
    if compiler is None:
        raise InputError("selftest needs the Neuron toolchain, and neuronx-cc is not on PATH: run it on a Trainium "
                         "or Inferentia host, in the Neuron venv")
    workdir.mkdir(parents=True, exist_ok=True)
    module = workdir / "selftest.hlo_module.pb"
    module.write_bytes(tiny_module())
    neff = workdir / "selftest.neff"
    compile_argv = (compiler, "compile", "--framework", "XLA", str(module), "--target", target, "--output", str(neff))
    journal = Journal(workdir / "selftest.sqlite")
    try:
        session = journal.open_session("selftest", REFUSED_CODE, {"target": target}, resume=False)
        refused = expectation(REFUSED_CODE)
        runs: list[tuple[str, str]] = []

        def run(name: str, argv: tuple[str, ...], expect: Expectation, wanted: str) -> Check:
            spec = RunSpec(Template(argv=argv).variant({}), expect, timeout=timeout)
            outcome = execute(spec)
            journal.record(session, name, spec, outcome)
            runs.append((name, outcome.verdict))
            ok = outcome.verdict == wanted
            said = (f"exit {outcome.exit_code}, {outcome.verdict}" + (f", {outcome.code} read from its output" if outcome.code
                    else "") + (f" ({outcome.note})" if outcome.note else ""))
            return Check(name, "pass" if ok else "fail", said if ok else f"{said}; expected {wanted}")

        checks = [run("compile", compile_argv, refused, PASSES)]
        checks.append(_neff_check(neff))
        checks.append(run("refusal", (*compile_argv, UNKNOWN_FLAG), refused, REPRODUCES))
        checks += _device_checks(neff, run, refused)
        recorded = [(record.key, record.verdict) for record in journal.session_runs(session)]
        checks.append(Check("journal", "pass" if recorded == runs else "fail",
                            f"{len(recorded)} runs recorded and read back" if recorded == runs
                            else f"recorded {recorded}, ran {runs}"))
    finally:
        journal.close()
    return checks


def _neff_check(neff: Path) -> Check:
    if not neff.is_file():
        return Check("neff", "fail", f"the compile wrote no {neff.name}")
    from nforensics.artifacts.neff import neff_facts, read_neff

    try:
        facts = neff_facts(read_neff(neff))
    except InputError as exc:
        return Check("neff", "fail", str(exc))
    return Check("neff", "pass", f"read: target {facts.get('neff.target')}, compiler {facts.get('neff.compiler_version')}")


def _device_checks(neff: Path, run: Callable[[str, tuple[str, ...], Expectation, str], Check],
                   refused: Expectation) -> list[Check]:
    cores = neuron_ls_cores()
    if not cores:
        skipped = "no Neuron device (neuron-ls reports no NeuronCores): a compile-only host"
        return [Check("device", "skip", skipped), Check("runtime", "skip", skipped)]
    device = Check("device", "pass", f"{cores} NeuronCores (neuron-ls)")
    profiler = shutil.which("neuron-profile")
    if profiler is None or not neff.is_file():
        why = "neuron-profile is not on PATH" if profiler is None else "no NEFF to run"
        return [device, Check("runtime", "skip", why)]
    capture = (profiler, "capture", "-n", str(neff), "-s", str(neff.with_suffix(".ntff")))
    return [device, run("runtime", capture, refused, PASSES)]
