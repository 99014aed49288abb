"""neuronx-cc releases side by side, for the compiler-version matrix (`sweep`/`bisect --compiler-versions`).

Each version lives in a virtual environment of its own, made on the host that runs the variant the first time a
variant asks for it and reused after: `<cache>/compilers/neuronx-cc-<version>/`, in nforensics' private cache
folder (a run with no usable one is untestable, never installed somewhere another user could plant files). A run
with a version gets that environment's `commands/` folder first on its PATH: links to the package's own console
scripts (`neuronx-cc`) and nothing else, so the reproducer's `python` is still the user's. pip installs the
release from wherever the user's pip is set to look (pip.conf, PIP_INDEX_URL / PIP_EXTRA_INDEX_URL for the Neuron
repository, PIP_FIND_LINKS). A file lock keeps two workers of one host from building the same environment twice.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

from nforensics.errors import InputError

COMPILER = "neuronx_cc"  # the knob whose values are neuronx-cc versions (--compiler-versions)
PACKAGE = "neuronx-cc"
INSTALLED = ".nforensics-installed"  # written last: an environment without it was not finished
INSTALL_TIMEOUT = 1800  # seconds: the Neuron wheels are hundreds of MB
_SCRIPTS = ("from importlib.metadata import distribution\n"
            f"print('\\n'.join(e.name for e in distribution({PACKAGE!r}).entry_points if e.group == 'console_scripts'))")


class InstallFailed(Exception):
    pass


def release_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def requirement(version: str) -> str:
    """`2.21` -> any 2.21 release (`neuronx-cc==2.21.*`); a full version (`2.21.18209.0`) -> that one."""
    parts = version.split(".")
    if not (2 <= len(parts) <= 4 and all(part.isdecimal() and part.isascii() for part in parts)):
        raise InputError(f"{version!r} is not a neuronx-cc version (like 2.21 or 2.21.18209.0)")
    return f"{PACKAGE}=={version}" if len(parts) == 4 else f"{PACKAGE}=={version}.*"


def versions_for_sdk(releases: list[str]) -> list[str]:
    """The neuronx-cc version each Neuron SDK release shipped (knowledge/releases.toml), in the order given (two
    releases may have shipped the same one)."""
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


def compiler_knob(versions: str | None, releases: str | None) -> dict[str, list[str]]:
    """--compiler-versions 2.21,2.22 or --sdk-releases 2.24,2.25 (the neuronx-cc each shipped): the `neuronx_cc`
    knob, which runs each variant with that release first on its PATH."""
    if versions is not None and releases is not None:
        raise InputError("give --compiler-versions or --sdk-releases, not both")
    if versions is None and releases is None:
        return {}
    wanted = [v.strip() for v in (versions or releases or "").split(",") if v.strip()]
    if not wanted:
        raise InputError(f"{'--compiler-versions' if versions is not None else '--sdk-releases'} names no release")
    return {COMPILER: releases_in_order(wanted if versions is not None else versions_for_sdk(wanted))}


def releases_in_order(versions: list[str]) -> list[str]:
    """Each release once, oldest first (bisect reads them in order); a typo is refused before anything is installed."""
    for version in versions:
        requirement(version)
    return sorted(dict.fromkeys(versions), key=release_key)


def commands_dir(version: str) -> Path:
    """The folder of neuronx-cc `version`'s console scripts, its environment made now if it was not made
    before. Raises InstallFailed (with pip's last words) when it cannot be."""
    wanted = requirement(version)
    from nforensics.knowledge.disk_cache import private_dir

    cache = private_dir()
    if cache is None:
        raise InstallFailed(f"cannot install {wanted}: no private cache folder to keep it in (set NFORENSICS_CACHE_DIR "
                            "to a folder of yours)")
    home = (cache / "compilers" / f"{PACKAGE}-{version}").absolute()  # the links and the PATH entry work anywhere
    if (home / INSTALLED).is_file():
        return home / "commands"
    if not os.access(cache, os.W_OK):
        raise InstallFailed(f"cannot install {wanted}: the cache folder {cache} is read-only")
    try:
        home.parent.mkdir(exist_ok=True, mode=0o700)
        with open(home.parent / f"{home.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building it: wait, then use its work
            if not (home / INSTALLED).is_file():
                try:
                    _install(home, wanted)
                except (InstallFailed, OSError):
                    shutil.rmtree(home, ignore_errors=True)  # nothing half-made is left for the next run
                    raise
    except OSError as error:
        raise InstallFailed(f"cannot install {wanted}: {error.strerror or error}") from None
    return home / "commands"


def _install(home: Path, wanted: str) -> None:
    python = home / "bin" / "python"
    # This interpreter's pip installs into the new environment (`pip --python`, pip 22.3 and later): making an
    # environment without a pip of its own takes a tenth of the time.
    pip_reaches_venvs = _pip_version() >= (22, 3)
    pip = [sys.executable, "-m", "pip", "--python", str(python)] if pip_reaches_venvs else [str(python), "-m", "pip"]
    _run([sys.executable, "-m", "venv", "--clear", *(["--without-pip"] if pip_reaches_venvs else []), str(home)], wanted)
    _run([*pip, "install", "--disable-pip-version-check", "-q", wanted], wanted)
    commands = home / "commands"
    commands.mkdir()
    for script in _run([str(python), "-c", _SCRIPTS], wanted).split():
        (commands / script).symlink_to(home / "bin" / script)
        if not (commands / script).exists():
            raise InstallFailed(f"cannot install {wanted}: its command {script} was not installed")
    (home / INSTALLED).write_text(wanted + "\n", encoding="utf-8")


def _run(argv: list[str], wanted: str) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise InstallFailed(f"cannot install {wanted}: {error}") from None
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}").splitlines()[-1]
        raise InstallFailed(f"cannot install {wanted}: {last}")
    return done.stdout


def _pip_version() -> tuple[int, ...]:
    try:
        from importlib.metadata import version

        return tuple(int(part) for part in version("pip").split(".")[:2])
    except (ImportError, ValueError, LookupError):
        return ()
