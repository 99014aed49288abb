"""TEST DOUBLE: wheels of a stand-in `neuronx-cc`, one per version, for the compiler-version matrix tests. They
are not the real compiler, and they say so on stderr at every run.

`build(folder, versions, fixed_in)` writes `neuronx_cc-<version>-py3-none-any.whl` files that pip installs from
the folder (`PIP_FIND_LINKS`, `PIP_NO_INDEX`). Each puts a `neuronx-cc` command on its environment's PATH that
prints `neuronx-cc <version>`, then fails with NCC_IXLV002 in the real message shape before `fixed_in`, and
passes from it on. Built in the test, by hand (a wheel is a zip with a dist-info folder): no build backend, no
network.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

_MODULE = '''"""TEST DOUBLE: a stand-in neuronx-cc {version} (tests/fakes/compiler_wheels.py), not the real compiler."""
import sys


def main():
    print("TEST DOUBLE: stand-in neuronx-cc {version}, not the real compiler", file=sys.stderr)
    print("neuronx-cc {version}")
    if {fails}:
        print("2024-08-15T14:51:41Z ERROR 1 [neuronx-cc]: [NCC_IXLV002] Expected core barriers to have name "
              "b0, but core barrier 6 has name b1 - Please open a support ticket")
        return 1
    print("Compiler status PASS")
    return 0
'''


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def build(folder: Path, versions: list[str], fixed_in: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [_wheel(folder, version, _release(version) < _release(fixed_in)) for version in versions]


def _wheel(folder: Path, version: str, fails: bool) -> Path:
    info = f"neuronx_cc-{version}.dist-info"
    files = {
        "neuronx_cc_double.py": _MODULE.format(version=version, fails=fails),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: neuronx-cc\nVersion: {version}\nSummary: TEST DOUBLE\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: nforensics-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": "[console_scripts]\nneuronx-cc = neuronx_cc_double:main\n",
    }
    record = [f"{name},sha256={_digest(text)},{len(text.encode())}" for name, text in files.items()]
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    path = folder / f"neuronx_cc-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
    return path


def _digest(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
