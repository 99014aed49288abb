"""neuronx-cc releases side by side, for the compiler-version matrix (`sweep`/`bisect --compiler-versions`).

Each version lives in a virtual environment of its own, made on the host that runs the variant the first time a
variant asks for it and reused after: `<cache>/compilers/neuronx-cc-<version>/`. A run with a version gets that
environment's bin folder first on its PATH, so the reproducer's own `neuronx-cc` (or the framework that calls
it) is that release. pip installs the release from wherever the user's pip is set to look (pip.conf,
PIP_INDEX_URL / PIP_EXTRA_INDEX_URL for the Neuron repository, PIP_FIND_LINKS): nothing is downloaded that the
user's pip would not. A file lock keeps two workers of one host from building the same environment twice.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from nforensics.errors import InputError

COMPILER = "compiler"  # the knob whose values are neuronx-cc versions
PACKAGE = "neuronx-cc"
INSTALLED = ".nforensics-installed"  # written last: an environment without it was not finished
INSTALL_TIMEOUT = 1800  # seconds: the Neuron wheels are hundreds of MB


class InstallFailed(Exception):
    pass


def requirement(version: str) -> str:
    """`2.21` -> any 2.21 release (`neuronx-cc==2.21.*`); a full version (`2.21.18209.0`) -> that one."""
    parts = version.split(".")
    if not (2 <= len(parts) <= 4 and all(part.isdecimal() and part.isascii() for part in parts)):
        raise InputError(f"{version!r} is not a neuronx-cc version (like 2.21 or 2.21.18209.0)")
    return f"{PACKAGE}=={version}" if version.count(".") == 3 else f"{PACKAGE}=={version}.*"


def versions_for_sdk(releases: list[str]) -> list[str]:
    """The neuronx-cc version each Neuron SDK release shipped (knowledge/releases.toml), in the order given."""
    from nforensics.knowledge.releases import release_table

    shipped = {sdk: packages.get(PACKAGE, ()) for sdk, packages in release_table()}
    found = []
    for release in releases:
        match = [sdk for sdk in shipped if sdk == release or sdk.startswith(release + ".")]
        if not match or not shipped[match[0]]:
            known = ", ".join(list(shipped)[:6])
            raise InputError(f"Neuron SDK {release} is not in the release table (newest: {known}, ...)")
        found.append(shipped[match[0]][0])
    return found


def compilers_root() -> Path:
    from nforensics.knowledge.disk_cache import private_dir

    home = private_dir()
    return (home if home is not None else Path(tempfile.gettempdir()) / f"nforensics-{os.getuid()}") / "compilers"


def bin_dir(version: str, root: Path | None = None) -> Path:
    """The bin folder of the environment holding neuronx-cc `version`, made now if it was not made before.
    Raises InstallFailed with pip's last words when the release cannot be installed."""
    home = (root or compilers_root()) / f"{PACKAGE}-{version}"
    bin_path = home / ("Scripts" if os.name == "nt" else "bin")
    if (home / INSTALLED).is_file():
        return bin_path
    home.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(home.parent / f"{home.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building it: wait, then use its work
        if not (home / INSTALLED).is_file():
            _install(home, bin_path, requirement(version))
    return bin_path


def _install(home: Path, bin_path: Path, wanted: str) -> None:
    # This interpreter's pip installs into the new environment (`pip --python`, pip 22.3 and later): making an
    # environment without a pip of its own takes a tenth of the time.
    ours = _pip_version() >= (22, 3)
    pip = [sys.executable, "-m", "pip", "--python", str(bin_path / "python")] if ours else [str(bin_path / "python"), "-m", "pip"]
    steps = [[sys.executable, "-m", "venv", "--clear", *(["--without-pip"] if ours else []), str(home)],
             [*pip, "install", "--disable-pip-version-check", "-q", wanted]]
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise InstallFailed(f"cannot install {wanted}: {error}") from None
        if done.returncode != 0:
            last = (done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}").splitlines()[-1]
            raise InstallFailed(f"cannot install {wanted}: {last}")
    (home / INSTALLED).write_text(wanted + "\n", encoding="utf-8")


def _pip_version() -> tuple[int, ...]:
    try:
        from importlib.metadata import version

        return tuple(int(part) for part in version("pip").split(".")[:2])
    except (ImportError, ValueError, LookupError):
        return ()
