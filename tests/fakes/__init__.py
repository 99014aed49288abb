"""Test doubles, for Neuron tools and files that cannot be installed or shipped here: neuron_double.py
behaves like neuronx-cc for the experiment tests, neff.py builds synthetic NEFF files.
(How to call the CLI itself is in tests/conftest.py.)"""

from __future__ import annotations

import sys
from pathlib import Path

DOUBLE = str(Path(__file__).resolve().with_name("neuron_double.py"))
DOUBLE_CMD = [sys.executable, DOUBLE]  # the double as a command; tests append a scenario and arguments
