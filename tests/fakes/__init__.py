"""Test doubles, for Neuron tools and files that cannot be installed or shipped here: neuron_double.py
behaves like neuronx-cc for the experiment tests, hlo_compiler.py like `neuronx-cc compile` on an HLO module
for the HLO reducer, neff.py builds synthetic NEFF files.
(How to call the CLI itself is in tests/conftest.py.)"""

from __future__ import annotations

import sys
from pathlib import Path

DOUBLE = str(Path(__file__).resolve().with_name("neuron_double.py"))
DOUBLE_CMD = [sys.executable, DOUBLE]  # the double as a command; tests append a scenario and arguments

HLO_COMPILER = str(Path(__file__).resolve().with_name("hlo_compiler.py"))
HLO_COMPILER_CMD = [sys.executable, HLO_COMPILER]  # a stand-in for `neuronx-cc compile MODULE ...` (hlo_compiler.py)
