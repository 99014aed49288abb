"""The README's two commands on the oldest and the newest Python nforensics supports, where this machine has
them: a fresh venv, `pip install .` (the base install) and `nforensics explain` on the bundled sample log; and
the test command (test extras, the lint, type and layering gates, the suite narrowed to its core modules).
(The Neuron DLAMI venvs run Python 3.10; 3.13 is the newest the dependencies ship wheels for.)"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess

import pytest

from conftest import REPO, SEED000


def _interpreter(name: str) -> str | None:
    """`name` on PATH, or in a pyenv install ($PYENV_ROOT), that runs (pyenv's shim for a version that is
    not selected does not)."""
    root = os.environ.get("PYENV_ROOT")
    candidates = [shutil.which(name), *(sorted(glob.glob(f"{root}/versions/*/bin/{name}")) if root else [])]
    for found in filter(None, candidates):
        done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60)
        if done.returncode == 0:
            return found
    return None


@pytest.mark.parametrize("name", ["python3.10", "python3.13"])
def test_the_base_install_explains_the_sample_log(name, tmp_path):
    python = _interpreter(name)
    if python is None:
        pytest.skip(f"{name} is not on this machine")
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)
    install = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(REPO)], capture_output=True, text=True,
                             timeout=600)
    assert install.returncode == 0, install.stderr[-2000:]
    done = subprocess.run([str(venv / "bin" / "nforensics"), "explain", str(SEED000), "--brief"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1 and "NCC_IXLV002" in done.stdout, done.stderr[-2000:]


# The modules the second command's suite is narrowed to under the other interpreters: the grammars, the
# catalogue's own checks, the families and the output formats (the whole suite runs on CI's own Python;
# three whole runs would not fit CI's time).
CORE_MODULES = ("tests/test_grammars.py", "tests/test_transformers.py", "tests/test_signatures.py",
                "tests/test_families.py", "tests/test_ci_formats.py")


def _readme_test_command() -> str:
    """The README's second quick-start command, as written there."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return next(line for line in readme.splitlines() if line.startswith("python3 -m venv") and "'.[test]'" in line)


def _checkout(tmp_path) -> str:
    """The repository's tracked files as they are now, in a folder of their own (a fresh clone's view)."""
    target = tmp_path / "nforensics"
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True, timeout=60)
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return str(target)


@pytest.mark.parametrize("name", ["python3.10", "python3.13"])
def test_the_readme_test_command_passes(name, tmp_path):
    """The README's second command (venv, test extras, ruff, mypy, import-linter, pytest) under the oldest
    and the newest Python, on a copy of the checkout, its suite narrowed to the core modules."""
    python = _interpreter(name)
    if python is None or shutil.which("git") is None:
        pytest.skip(f"{name} or git is not on this machine")
    command = _readme_test_command()
    assert command.startswith("python3 ") and command.endswith("pytest -q -n 2")
    command = f"{python}{command[len('python3'):]} {' '.join(CORE_MODULES)}"
    done = subprocess.run(["bash", "-c", command], cwd=_checkout(tmp_path), capture_output=True, text=True,
                          timeout=1200, env={**os.environ, "NFORENSICS_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-2000:])
