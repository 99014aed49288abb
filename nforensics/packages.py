"""Package names as pip compares them (PEP 503), shared by the parser, the version index and the probe."""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[-_.]+")


def package_key(name: str) -> str:
    """`Neuronx_CC` -> `neuronx-cc`: runs of -, _ and . become one -, lower case."""
    return _SEPARATORS.sub("-", name.strip()).lower()
