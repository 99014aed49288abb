"""The Neuron SDK release table (releases.toml): the package versions each release ships, and the short
component names a signature's [fixed_in] may use for a package."""

from __future__ import annotations

from functools import cache

from nforensics.knowledge import table


@cache
def release_table() -> tuple[tuple[str, dict[str, tuple[str, ...]]], ...]:
    """(sdk, {package: versions}) for every Neuron SDK release, as the file lists them (newest first)."""
    return tuple(
        (release["sdk"], {k: tuple(v) if isinstance(v, list) else (v,) for k, v in release.items() if k != "sdk"})
        for release in table("releases")["release"]
    )


def component_packages() -> dict[str, str]:
    """Short component name -> the package that carries its fixes (`runtime` -> aws-neuronx-runtime-lib)."""
    return table("releases")["components"]
