"""`nforensics env`: a collect_env-style probe of the machine nforensics runs on.

Each probe is one subprocess or one file read with its own failure path: a probe that fails records
"could not collect: <why>" and the rest carry on. Offline only: the instance type comes from the DMI table
in sysfs, never from the EC2 metadata service, and child processes run with the AWS SDK metadata lookup
switched off. Package lists are filtered to the ones the aws-neuron-sdk bug form asks for.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from nforensics.errors import InputError
from nforensics.packages import package_key
from nforensics.records import MachineProbe

# Where the Neuron apt packages put their tools; often not on PATH (reference §4).
NEURON_BIN_DIRS = ("/opt/aws/neuron/bin",)
DMI_DIR = Path("/sys/devices/virtual/dmi/id")
OS_RELEASE = Path("/etc/os-release")

# The bug form's filters: `apt list --installed | grep -i -e neuron`,
# `pip list | grep -i -e neuron -e torch -e transformers -e jax` (plus nki, the NKI package).
APT_FILTER = re.compile(r"neuron", re.I)
PIP_FILTER = re.compile(r"neuron|torch|transformers|jax|^nki\b", re.I)
ENV_FILTER = re.compile(r"^(?:NEURON\w*|XLA_\w*)$")
# An EC2 instance type as the DMI product name gives it on Nitro hosts, e.g. trn1.32xlarge.
INSTANCE_TYPE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9]*(?:nano|micro|small|medium|large|xlarge|metal[\w-]*)$")
# PyPI only carries these placeholders; seeing one means the real package was never installed.
PLACEHOLDER_WHEELS = {"neuronx-cc": "1.0.post1", "torch-neuronx": "1.0", "nki": "0.0.1", "neuronx-cc-stubs": "1.0"}

SUBPROCESS_TIMEOUT = 60.0  # neuronx-cc --version imports the whole compiler
_QUIET_ENV = {"AWS_EC2_METADATA_DISABLED": "true"}  # the AWS SDKs' switch for the metadata service


class _NotCollected(Exception):
    """One probe failed; the message says why."""


def _find_tool(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for folder in NEURON_BIN_DIRS:
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise _NotCollected(f"{name} not found on PATH or in {', '.join(NEURON_BIN_DIRS)}")


def _run(argv: list[str]) -> str:
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=SUBPROCESS_TIMEOUT,
            env={**os.environ, **_QUIET_ENV},
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise _NotCollected(f"{Path(argv[0]).name} did not answer within {SUBPROCESS_TIMEOUT:.0f} s") from None
    except OSError as exc:
        raise _NotCollected(f"{Path(argv[0]).name} could not be started: {exc.strerror or exc}") from None
    output = (done.stdout + done.stderr).strip()
    if done.returncode != 0:
        raise _NotCollected(f"{Path(argv[0]).name} exited with {done.returncode}: {output[:200]}")
    return output


def _os() -> str:
    pretty = None
    try:
        for line in OS_RELEASE.read_text(errors="replace").splitlines():
            if line.startswith("PRETTY_NAME="):
                pretty = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    kernel = f"{platform.system()} {platform.release()} ({platform.machine()})"
    return f"{pretty}, {kernel}" if pretty else kernel


@dataclass(frozen=True)
class Interpreter:
    """The Python whose packages the report describes, and why that one: nforensics may live in a venv
    of its own (pipx) while the job ran in the Neuron venv."""

    path: str | None  # None: the interpreter nforensics runs in, read in-process
    why: str


# What another interpreter is asked (it prints JSON; nothing else of it is imported here).
_LISTING = ("import importlib.metadata as m, json, platform, sys; print(json.dumps({'version': platform.python_version(), "
            "'implementation': platform.python_implementation(), 'executable': sys.executable, "
            "'packages': {d.metadata['Name'] or '': d.version for d in m.distributions()}}))")


def interpreter(explicit: str | None = None) -> Interpreter:
    """`--python PATH`, else the active venv ($VIRTUAL_ENV), else the first python3 on PATH; the interpreter
    nforensics runs in when that is the one they name."""
    if explicit:
        found = shutil.which(explicit)
        if found is None:
            raise InputError(f"--python {explicit}: no such interpreter (give a path or a name on PATH)")
        return _unless_own(found, "--python")
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        candidate = Path(venv) / "bin" / "python"
        return _unless_own(str(candidate), "the active venv ($VIRTUAL_ENV)") if candidate.exists() else Interpreter(
            None, "the interpreter nforensics runs in ($VIRTUAL_ENV has no bin/python)")
    on_path = shutil.which("python3") or shutil.which("python")
    return _unless_own(on_path, "the first python3 on PATH") if on_path else Interpreter(
        None, "the interpreter nforensics runs in (no python3 on PATH)")


def _unless_own(path: str, why: str) -> Interpreter:
    # A venv's python is a link to the base interpreter: an environment is known by its prefix, not its binary.
    own = Path(path).absolute().parent.parent == Path(sys.prefix).absolute()
    return Interpreter(None if own else path, why)


def _listing(target: Interpreter) -> dict:
    if target.path is None:
        return {"version": platform.python_version(), "implementation": platform.python_implementation(),
                "executable": sys.executable,
                "packages": {dist.metadata["Name"] or "": dist.version for dist in metadata.distributions()}}
    try:
        listing = json.loads(_run([target.path, "-c", _LISTING]).splitlines()[-1])
    except (ValueError, IndexError):
        raise _NotCollected(f"{target.path} did not list its packages") from None
    if not isinstance(listing, dict) or not isinstance(listing.get("packages"), dict):
        raise _NotCollected(f"{target.path} did not list its packages")
    return listing


def _python(listing: dict, target: Interpreter) -> str:
    return f"{listing['version']} ({listing['implementation']}, {listing['executable']}; probed: {target.why})"


def _compiler_version(target: Interpreter) -> str:
    # The compiler installed in the probed venv first: another venv's neuronx-cc says nothing of this one.
    beside = Path(target.path).parent / "neuronx-cc" if target.path else None
    tool = str(beside) if beside is not None and beside.is_file() else _find_tool("neuronx-cc")
    return _run([tool, "--version"])


def _neuron_ls() -> str:
    return _run([_find_tool("neuron-ls")])


def _instance_type() -> str:
    try:
        product = (DMI_DIR / "product_name").read_text(errors="replace").strip()
    except OSError:
        raise _NotCollected(f"{DMI_DIR}/product_name is not readable (not an EC2 Nitro host?)") from None
    if INSTANCE_TYPE.match(product):
        return product
    raise _NotCollected(f"the DMI product name {product!r} is not an EC2 instance type")


def _apt_packages() -> dict[str, str]:
    if shutil.which("dpkg-query"):
        listing = _run(["dpkg-query", "-W", "-f=${Package}\t${Version}\t${db:Status-Abbrev}\n"])
        rows = [line.split("\t") for line in listing.splitlines()]
        return {r[0]: r[1] for r in rows if len(r) == 3 and r[2].startswith("ii") and APT_FILTER.search(r[0])}
    if shutil.which("rpm"):
        listing = _run(["rpm", "-qa", "--qf", "%{NAME}\t%{VERSION}-%{RELEASE}\n"])
        rows = [line.split("\t") for line in listing.splitlines()]
        return {r[0]: r[1] for r in rows if len(r) == 2 and APT_FILTER.search(r[0])}
    raise _NotCollected("neither dpkg-query nor rpm is available")


def _pip_packages(listing: dict) -> dict[str, str]:
    """Distributions the probed interpreter sees, filtered like the form."""
    found = {package_key(name): str(version) for name, version in listing["packages"].items()
             if name and PIP_FILTER.search(name)}
    return dict(sorted(found.items()))


def _env_vars() -> dict[str, str]:
    return {k: v for k, v in sorted(os.environ.items()) if ENV_FILTER.match(k)}


class _Probed:
    """The interpreter being probed, and its listing, asked for once (another Python is a subprocess)."""

    def __init__(self, target: Interpreter) -> None:
        self.target = target
        self._listed: dict | _NotCollected | None = None

    def listing(self) -> dict:
        if self._listed is None:
            try:
                self._listed = _listing(self.target)
            except _NotCollected as exc:
                self._listed = exc
        if isinstance(self._listed, _NotCollected):
            raise self._listed
        return self._listed


_PROBES: dict[str, Callable[[_Probed], object]] = {
    "os": lambda _: _os(),
    "python": lambda probed: _python(probed.listing(), probed.target),
    "compiler_version": lambda probed: _compiler_version(probed.target),
    "neuron_ls": lambda _: _neuron_ls(),
    "instance_type": lambda _: _instance_type(),
    "apt_packages": lambda _: _apt_packages(),
    "pip_packages": lambda probed: _pip_packages(probed.listing()),
    "env_vars": lambda _: _env_vars(),
}


def probe(target: Interpreter | None = None) -> MachineProbe:
    """Run every probe; none can raise. Failures land in `not_collected` as 'could not collect: ...'.
    `target`: the Python whose packages to list (see `interpreter`)."""
    probed = _Probed(target or interpreter())
    values: dict[str, object] = {}
    not_collected: dict[str, str] = {}
    for name, run in _PROBES.items():
        try:
            values[name] = run(probed)
        except _NotCollected as exc:
            not_collected[name] = f"could not collect: {exc}"
        except Exception as exc:  # a probe must never take the command down
            not_collected[name] = f"could not collect: {type(exc).__name__}: {exc}"
    result = MachineProbe.model_validate({**values, "not_collected": not_collected})
    result.neuron_software = bool(
        result.compiler_version
        or result.neuron_ls
        or result.apt_packages
        or any(is_neuron_package(name) and not is_placeholder_wheel(name, v) for name, v in result.pip_packages.items())
    )
    return result


def is_neuron_package(name: str) -> bool:
    return bool(re.search(r"neuron|^nki$", name, re.I))


def is_placeholder_wheel(name: str, version: str) -> bool:
    return PLACEHOLDER_WHEELS.get(name.lower()) == version
