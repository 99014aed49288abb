"""What to run: command templates, knobs, TOML plans, and the confirm planner.

A template is the reproducer's argv and environment with `{NAME}` placeholders. Knob values fill argv
items and `--env` values; an argv item that is exactly `{items}` expands to the chosen items as separate
arguments (inside a longer item they are joined by spaces). A plan file (`--plan plan.toml`) holds the
same settings so a team keeps them beside the reproducer; command-line options override it.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from pydantic import BaseModel, ConfigDict, ValidationError

from nforensics.errors import InputError
from nforensics.experiments.compilers import COMPILER, compiler_knob, releases_in_order
from nforensics.experiments.runner import Variant
from nforensics.experiments.slots import CORES, parse_size
from nforensics.rayconnect import check_backend

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 (Neuron DLAMI venvs)
    import tomli as tomllib

ITEMS = "items"  # the placeholder `reduce` fills
_ITEMS_ARG = f"{{{ITEMS}}}"  # an argv item exactly this expands to the items as separate arguments
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
DEFAULT_JOURNAL = ".nforensics/journal.sqlite"
DEFAULT_TIMEOUT = 3600.0  # one neuronx-cc run takes minutes to about an hour


def _fill(text: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values.get(m[1], m[0]), text)


@dataclass(frozen=True)
class Template:
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    unset_env: tuple[str, ...] = ()
    inputs: tuple[tuple[str, str], ...] = ()  # declared inputs: (name in the run directory or "", source)
    cwd: str | None = None  # None: each run in a fresh temporary directory
    base: str = "."  # relative paths in argv resolve against this directory

    def placeholders(self) -> set[str]:
        texts = [*self.argv, *(v for _, v in self.env)]
        return {name for t in texts for name in _PLACEHOLDER.findall(t)}

    def variant(self, knobs: dict[str, str], items: Sequence[str] | None = None) -> Variant:
        values = dict(knobs)
        if items is not None:
            values[ITEMS] = " ".join(items)
        argv: list[str] = []
        for arg in self.argv:
            argv.extend(items if items is not None and arg == _ITEMS_ARG else [_fill(arg, values)])
        argv, named = self._named_files(argv)
        return Variant(
            argv=tuple(argv),
            env=tuple((k, _fill(v, values)) for k, v in self.env),
            unset_env=self.unset_env,
            inputs=tuple(sorted({*self.inputs, *named})),
            cwd=self.cwd,
            knobs=tuple((k, str(v)) for k, v in knobs.items()),
            compiler=values.get(COMPILER),
        )

    def _named_files(self, argv: list[str]) -> tuple[list[str], set[tuple[str, str]]]:
        """Relative argv items that name files under the base directory are copied into each run's own
        directory (so `python repro.py` works there and two runs never share a file) and their content is
        part of the variant's identity. A relative path that climbs out of the base becomes absolute."""
        if self.cwd:
            return argv, set()  # runs happen where the files are
        resolved, named = [], set()
        for arg in argv:
            path = os.path.join(self.base, arg)
            if arg and not arg.startswith("-") and not os.path.isabs(arg) and os.path.isfile(path):
                relative = os.path.normpath(arg)
                if relative.startswith(".."):
                    arg = os.path.abspath(path)
                else:
                    named.add((relative, os.path.abspath(path)))
            resolved.append(arg)
        return resolved, named

    def changed(self, *, set_env=None, unset_env=(), args_add=(), args_remove=()) -> "Template":
        env = {k: v for k, v in self.env if k not in unset_env}
        env.update(set_env or {})
        argv = [a for a in self.argv if a not in args_remove] + list(args_add)
        return replace(self, argv=tuple(argv), env=tuple(env.items()),
                       unset_env=tuple(dict.fromkeys([*self.unset_env, *unset_env])))  # fmt: skip


class PlanFile(BaseModel):
    """The TOML plan: every key optional; command-line options win over it."""

    model_config = ConfigDict(extra="forbid")

    expect: str | None = None
    command: list[str] | str | None = None
    env: dict[str, str] = {}
    unset_env: list[str] = []
    inputs: list[str] = []
    cwd: str | None = None
    knobs: dict[str, list[str | int | float] | str] = {}
    cases: list[dict[str, str | int | float]] = []  # explicit knob combinations instead of the full matrix
    items: list[str] | str | None = None
    timeout: float | None = None
    repeat: int | None = None
    workers: int | None = None
    cores_per_run: int | None = None
    compile_only: bool | None = None
    mem_per_run: str | int | None = None
    backend: str | None = None
    address: str | None = None


def load_plan(path: str | None) -> tuple[PlanFile, Path]:
    if not path:
        return PlanFile(), Path.cwd()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        return PlanFile.model_validate(data), Path(path).resolve().parent
    except OSError as exc:
        raise InputError(f"cannot read plan {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"plan {path} is not valid TOML: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(f"plan {path}: {where}: {first['msg']}") from None


def parse_values(name: str, spec: str | Sequence) -> list[str]:
    """`LO..HI` (integers, inclusive), `V1,V2,...`, or a TOML list, in the given order."""
    if not isinstance(spec, str):
        return [str(v) for v in spec]
    m = re.fullmatch(r"\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*", spec)
    if m:
        lo, hi = int(m[1]), int(m[2])
        if lo > hi:
            raise InputError(f"knob {name}: range {spec} runs backwards")
        return [str(v) for v in range(lo, hi + 1)]
    values = [v.strip() for v in spec.split(",") if v.strip()]
    if not values:
        raise InputError(f"knob {name} has no values")
    return values


def parse_assignment(text: str, what: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name.strip()):
        raise InputError(f"{what} must look like NAME=VALUE, got {text!r}")
    return name.strip(), value


@dataclass(frozen=True)
class Settings:
    """Everything one strategy invocation needs, merged from the command line and the plan file."""

    strategy: str
    expect: str
    template: Template
    knobs: dict[str, list[str]]
    cases: list[dict[str, str]]
    items: list[str]
    timeout: float | None
    repeat: int
    workers: int | None
    journal: str
    resume: bool
    cores_per_run: int | None = None  # None: 1, or what --cores-per-run / the plan says
    compile_only: bool = False  # runs need no NeuronCore, only host memory (pool capped by mem_per_run)
    mem_per_run: int | None = None  # bytes of host memory one compile-only run may take
    backend: str = "local"
    address: str | None = None
    hlo: str | None = None  # reduce --hlo: the module to shrink (an absolute path)
    budget: int | None = None  # reduce --hlo: at most this many distinct compiles
    out: str | None = None  # reduce --hlo: where the smallest module goes (.pb; its text beside it)

    def identity(self) -> dict:
        """What makes two invocations the same plan (so `--resume` continues the right session)."""
        t = self.template
        plan = {"argv": t.argv, "env": t.env, "unset_env": t.unset_env, "inputs": t.inputs, "cwd": t.cwd,
                "knobs": self.knobs, "cases": self.cases, "items": self.items, "timeout": self.timeout,
                "repeat": self.repeat}  # fmt: skip
        if self.hlo:  # the module's content, not only its name: an edited module is a new reduction
            plan.update(hlo=[self.hlo, _digest(self.hlo)], budget=self.budget)
        return plan


def _digest(path: str) -> str:
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def settings(
    strategy: str,
    *,
    command: list[str] | None = None,
    expect: str | None = None,
    knobs: list[str] | None = None,
    env: list[str] | None = None,
    inputs: list[str] | None = None,
    cwd: str | None = None,
    items: str | None = None,
    timeout: float | None = None,
    repeat: int | None = None,
    workers: int | None = None,
    journal: str | None = None,
    resume: bool = False,
    plan: str | None = None,
    cores_per_run: int | None = None,
    compile_only: bool = False,
    mem_per_run: str | None = None,
    backend: str | None = None,
    address: str | None = None,
    hlo: str | None = None,
    budget: int | None = None,
    out: str | None = None,
    compiler_versions: str | None = None,
    sdk_releases: str | None = None,
) -> Settings:
    """Merge command-line values (None = not given) over the plan file; validate; build the template."""
    spec, base = load_plan(plan)
    argv = list(command) if command else _argv(spec.command)
    if not argv:
        raise InputError("no command to run: give it after `--` or as `command` in the plan")
    expect = expect or spec.expect
    if not expect and strategy != "confirm":
        raise InputError("--expect CODE is required (the code or signature that counts as reproducing)")
    env_pairs = dict(spec.env)
    env_pairs.update(parse_assignment(e, "--env") for e in env or [])
    knob_values = {n: parse_values(n, v) for n, v in spec.knobs.items()}
    for k in knobs or []:
        name, values = parse_assignment(k, "--knob")
        knob_values[name] = parse_values(name, values)
    knob_values.update(compiler_knob(compiler_versions, sdk_releases))
    if COMPILER in knob_values:  # from --knob or the plan too: checked, and put oldest first for bisect
        knob_values[COMPILER] = releases_in_order(knob_values[COMPILER])
    here = Path.cwd()
    cwd_dir = cwd or (str(base / spec.cwd) if spec.cwd else None)
    declared = [(here, p) for p in inputs or []] + [(base, p) for p in spec.inputs]
    template = Template(
        argv=tuple(argv),
        env=tuple(env_pairs.items()),
        unset_env=tuple(spec.unset_env),
        inputs=tuple(_declared_input(origin, p, copy=not cwd_dir) for origin, p in declared),
        cwd=str(Path(cwd_dir).resolve()) if cwd_dir else None,
        base=str(base if not command else here),
    )
    item_list = shlex.split(items) if items is not None else _argv(spec.items)
    if strategy == "reduce" and hlo:
        _check_hlo(template, hlo, item_list, budget)
    elif hlo or out or budget is not None:
        raise InputError("--out and --budget are for reduce --hlo")
    elif strategy == "reduce":  # checked before any run starts, so the error is the only line printed
        if not item_list:
            raise InputError('reduce needs --items "A B C ..." (or items in the plan)')
        if ITEMS not in template.placeholders():
            raise InputError(f"reduce needs {{{ITEMS}}} in the command "
                             f"(an argument exactly `{{{ITEMS}}}` expands to separate arguments)")
    cases = [{k: str(v) for k, v in case.items()} for case in spec.cases]
    unused = ({*knob_values} | {k for c in cases for k in c}) - template.placeholders() - {COMPILER}
    if unused:
        name = sorted(unused)[0]
        raise InputError(f"knob {name} is not used by the command: put {{{name}}} in an argument or --env value")
    repeat = repeat if repeat is not None else spec.repeat or 1
    if repeat < 1:
        raise InputError("--repeat must be at least 1")
    timeout = timeout if timeout is not None else spec.timeout if spec.timeout is not None else DEFAULT_TIMEOUT
    if timeout <= 0:
        raise InputError("--timeout must be a positive number of seconds")
    address = address or spec.address
    backend = check_backend(backend or spec.backend, address)  # before the journal is opened or anything runs
    compile_only = bool(compile_only or spec.compile_only or Path(argv[0]).name == "neuronx-cc")
    _check_cores(template, knob_values, cases, compile_only)
    size = mem_per_run if mem_per_run is not None else spec.mem_per_run
    return Settings(
        strategy=strategy,
        expect=expect or "",
        template=template,
        knobs=knob_values,
        cases=cases,
        items=item_list,
        timeout=timeout,
        repeat=repeat,
        workers=workers if workers is not None else spec.workers,
        journal=journal or DEFAULT_JOURNAL,
        resume=resume,
        cores_per_run=cores_per_run if cores_per_run is not None else spec.cores_per_run,
        compile_only=compile_only,
        mem_per_run=parse_size(str(size)) if size is not None else None,
        backend=backend,
        address=address,
        hlo=str(Path(hlo).resolve()) if hlo else None,
        budget=budget,
        out=out,
    )


def _check_hlo(template: Template, hlo: str, items: list[str], budget: int | None) -> None:
    """reduce --hlo: the command compiles each candidate module, named by {hlo} (.pb) or {hlo_text}."""
    if items:
        raise InputError("reduce takes --items or --hlo, not both")
    if not {"hlo", "hlo_text"} & template.placeholders():
        raise InputError("reduce --hlo needs {hlo} in the command (each candidate module's .pb; {hlo_text} is its "
                         "text), e.g. -- neuronx-cc compile {hlo} --framework XLA --target trn1")
    if not Path(hlo).is_file():
        raise InputError(f"--hlo {hlo}: no such file")
    from nforensics.experiments.hlo_output import read_proto

    read_proto(hlo)  # a text module, or a file that is not a module, stops here: before any run or journal
    if budget is not None and budget < 1:
        raise InputError("--budget must be at least 1 compile")


def _check_cores(template: Template, knobs: dict[str, list[str]], cases: list[dict[str, str]], compile_only: bool) -> None:
    """`{cores}` is filled per run with its NeuronCore slice: not a knob, and meaningless without the device."""
    if CORES in knobs or any(CORES in c for c in cases):
        raise InputError(f"{{{CORES}}} is filled per run with its NeuronCore slice: name the knob otherwise")
    if compile_only and CORES in template.placeholders():
        raise InputError(f"compile-only runs get no NeuronCores: remove {{{CORES}}} from the command")


def _declared_input(origin: Path, path: str, copy: bool) -> tuple[str, str]:
    """An `--input` file: hashed always; copied into each run's directory when it is relative."""
    source = (origin / path).resolve()
    if not source.is_file():
        raise InputError(f"input file {path} not found")
    relative = os.path.normpath(path)
    return (relative if copy and not os.path.isabs(path) and not relative.startswith("..") else "", str(source))


def _argv(value: list[str] | str | None) -> list[str]:
    if value is None:
        return []
    return shlex.split(value) if isinstance(value, str) else list(value)


_ENV_KEY = "env:"  # a matrix key that sets an environment variable instead of a knob
_ARGS_KEY = "args"  # a matrix key whose values are arguments added to the command ("" adds none)


def confirm_variants(template: Template, knobs: dict[str, str], confirm) -> tuple[list[Variant], str]:
    """The variants a hypothesis' `confirm` block (knowledge.schema.Confirm) asks for, one per cell of its
    matrix (one without a matrix), or none and why not."""
    placed = {k for k in confirm.matrix if not k.startswith(_ENV_KEY) and k not in (COMPILER, _ARGS_KEY)}
    missing_knobs = (set(confirm.knobs) | placed) - template.placeholders()
    if missing_knobs:
        return [], f"the command has no {{{sorted(missing_knobs)[0]}}} placeholder to set"
    missing_args = [a for a in confirm.args_remove if a not in template.argv]
    if missing_args:
        return [], f"the command has no argument {missing_args[0]} to remove"
    try:
        releases_in_order(confirm.matrix.get(COMPILER, []))
    except InputError as error:
        return [], str(error)
    variants = []
    for cell in itertools.product(*confirm.matrix.values()):
        values = dict(zip(confirm.matrix, cell, strict=True))
        env = {k[len(_ENV_KEY):]: v for k, v in values.items() if k.startswith(_ENV_KEY)}
        added = [*confirm.args_add, *shlex.split(values.get(_ARGS_KEY, ""))]
        changed = template.changed(set_env={**confirm.set_env, **env}, unset_env=confirm.unset_env,
                                   args_add=added, args_remove=confirm.args_remove)  # fmt: skip
        cell_knobs = {k: v for k, v in values.items() if not k.startswith(_ENV_KEY) and k != _ARGS_KEY}
        variants.append(changed.variant({**knobs, **confirm.knobs, **cell_knobs}))
    baseline = _as_run(template.variant(knobs))
    variants = [v for v in variants if _as_run(v) != baseline]
    return (variants, "") if variants else ([], "the variant would be identical to the baseline")


def _as_run(variant: Variant) -> tuple:
    """What a run of the variant would be, with the environment it inherits: a cell that only sets what the shell
    already exported is the baseline itself."""
    env = {k: v for k, v in os.environ.items() if k not in variant.unset_env} | dict(variant.env)
    return variant.argv, sorted(env.items()), variant.cwd, variant.inputs, variant.compiler
