"""The README's first command on the oldest and the newest Python nforensics supports, where this machine has
them: a fresh venv, `pip install .` (the base install), `nforensics explain` on the bundled sample log.
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
