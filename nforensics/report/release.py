"""Release arithmetic for the report: the Neuron packages the log and the probe show, split the way the form
asks for them (apt, pip), the SDK release that ships the log's compiler, and the older form's two inputs."""

from __future__ import annotations

from nforensics.diagnose.versions import first_sdk_with, releases, version_key
from nforensics.envprobe import PIP_FILTER
from nforensics.records import Environment, MachineProbe
from nforensics.report.model import Release

FRAMEWORKS = ("torch", "torch-neuronx", "torch-xla", "jax", "jax-neuronx", "transformers", "nki")


def release(environment: Environment, probe: MachineProbe | None) -> Release:
    """(apt, pip) packages, the log's listings first, the probe's (--env-here) filling gaps, and the SDK."""
    apt: dict[str, str] = {}
    pip: dict[str, str] = {}
    for name, version in environment.packages.items():
        if name.startswith("aws-neuron"):
            apt[name] = version
        elif PIP_FILTER.search(name):  # its "neuron" also covers what the apt filter would
            pip[name] = version
    if probe:
        for name, version in probe.apt_packages.items():
            apt.setdefault(name, version)
        for name, version in probe.pip_packages.items():
            pip.setdefault(name, version)
    return Release(apt=dict(sorted(apt.items())), pip=dict(sorted(pip.items())), sdk=_sdk_release(pip))


def _sdk_release(pip: dict[str, str]) -> str | None:
    """The Neuron SDK release that ships the compiler the log shows, when the release table knows it."""
    compiler = pip.get("neuronx-cc")
    if not compiler:
        return None
    sdk = first_sdk_with("neuronx-cc", compiler)
    shipped = dict(releases()).get(sdk, {}).get("neuronx-cc", ()) if sdk else ()
    wanted = version_key("neuronx-cc", compiler)
    return sdk if any(version_key("neuronx-cc", v) == wanted for v in shipped) else None


def compiler_version(release: Release, probe: MachineProbe | None) -> str | None:
    """What `neuronx-cc --version` printed on the failing machine, else what it would print for the log's version."""
    if probe and probe.compiler_version:
        return probe.compiler_version.splitlines()[0]
    return f"NeuronX Compiler version {release.pip['neuronx-cc']}" if "neuronx-cc" in release.pip else None


def frameworks(release: Release) -> dict[str, str]:
    return {name: release.pip[name] for name in FRAMEWORKS if name in release.pip}
