"""Versions: compare Neuron package versions and say whether the input predates the release that fixed a failure.

The parser records every version the input shows in Environment.packages (ICE banner, `neuronx-cc --version`,
pip/apt/conda listings, compile-cache paths). This module maps them onto the Neuron SDK releases of
nforensics/knowledge/releases.toml (read by nforensics.knowledge.releases) and fills a finding's `fixed_in`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from nforensics.knowledge.releases import component_packages, release_table
from nforensics.knowledge.schema import FixedInSpec, Signature
from nforensics.packages import package_key
from nforensics.records import Environment, FixedIn

_RELEASE_PART = re.compile(r"\d+(?:\.\d+)*")


def normalise_package(name: str) -> str:
    """pip's name normalisation (PEP 503), plus the short component names signatures use."""
    key = package_key(name)
    return component_packages().get(key, key)


def version_key(package: str, version: str) -> tuple[int, ...] | None:
    """A comparable tuple for the release part of a version (`2.23.6484.0+3b612583` -> (2, 23, 6484, 0)).

    Local build tags (`+3b612583`, deb `-faafe26f0`) and pre-release suffixes are ignored; trailing zeros
    do not count (`2.21.18209` == `2.21.18209.0`). torch-neuronx prefixes the torch version
    (`2.9.0.2.13.24727`): only the Neuron build after it is compared, so builds for different torch versions
    of one release compare equal. None when the text has no numeric release part.
    """
    match = _RELEASE_PART.match(version.strip().lstrip("vV"))
    if not match:
        return None
    parts = [int(p) for p in match.group().split(".")]
    if normalise_package(package) == "torch-neuronx" and len(parts) > 3:
        parts = parts[3:]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def is_older(package: str, seen: str, fixed: str) -> bool | None:
    """True when `seen` predates `fixed`; None when either cannot be read as a version, or `seen` is too
    coarse to tell (`neuronx-cc 2.24` against a fix in 2.24.5133.0)."""
    seen_key, fixed_key = version_key(package, seen), version_key(package, fixed)
    if seen_key is None or fixed_key is None:
        return None
    if seen_key != fixed_key and fixed_key[: len(seen_key)] == seen_key:
        return None
    return seen_key < fixed_key


@cache
def releases() -> tuple[tuple[str, dict[str, tuple[str, ...]]], ...]:
    """(sdk, {package: versions}) for every Neuron SDK release, oldest first."""
    return tuple(sorted(release_table(), key=lambda item: version_key("", item[0]) or ()))


def first_sdk_with(package: str, version: str) -> str | None:
    """The oldest Neuron SDK release that ships `package` at `version` or newer (the release of a fix)."""
    package = normalise_package(package)
    wanted = version_key(package, version)
    if wanted is None:
        return None
    for sdk, packages in releases():
        keys = [version_key(package, v) for v in packages.get(package, ())]
        if any(k is not None and k >= wanted for k in keys):
            return sdk
    return None


def seen_version(environment: Environment, package: str) -> str | None:
    """The version of `package` the input shows (named outright, or shipped by the SDK release it names)."""
    seen = _seen(environment, package)
    return seen[0] if seen else None


def _seen(environment: Environment, package: str) -> tuple[str, str] | None:
    """The version of `package` the input shows, and how to say where it came from. A package named
    outright wins; else the version the Neuron SDK release it names ("Neuron SDK 2.29") shipped."""
    wanted = normalise_package(package)
    for name, version in environment.packages.items():
        if normalise_package(name) == wanted:
            return version, f"{wanted} {version}"
    sdk = environment.packages.get("neuron-sdk")
    for release, packages in releases() if sdk else ():
        if (release == sdk or release.startswith(f"{sdk}.")) and packages.get(wanted):
            version = packages[wanted][0]
            return version, f"Neuron SDK {sdk}, i.e. {wanted} {version}"
    return None


def resolve_fixed_in(spec: FixedInSpec, environment: Environment) -> FixedIn:
    """A finding's fixed-in record: the fixing release (SDK looked up when the signature omits it), the
    version the input shows, and whether that one is older, i.e. upgrading is the fix."""
    package = normalise_package(spec.component)
    sdk = spec.sdk or first_sdk_with(package, spec.version)
    seen, shown = _seen(environment, package) or (None, "")
    older = is_older(package, seen, spec.version) if seen else None
    where = f"{package} {spec.version}" + (f" (Neuron SDK {sdk})" if sdk else "")
    if older:
        summary = f"fixed in {where}: upgrade (the input shows {shown})"
    elif older is False:
        summary = f"fixed in {where}, but the input shows {shown}: the fix did not cover this case"
    else:
        summary = f"fixed in {where}"
    return FixedIn.model_construct(component=package, version=spec.version, sdk=sdk, seen_version=seen, upgrade=bool(older),
                   summary=summary)


def catalogue_fixed_in(signatures: Iterable[Signature]) -> dict[str, FixedIn]:
    """Each signature's fix as the catalogue states it (no input to compare with), by signature id: what
    `nforensics codes` and docs/signatures/ print."""
    return {s.id: resolve_fixed_in(s.fixed_in, Environment()) for s in signatures if s.fixed_in}
