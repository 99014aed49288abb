"""Which of a finding's workarounds the failing run already had: a shell setting (flags, variables) the
log shows set is listed as tried, not suggested again."""

from __future__ import annotations

import re

from nforensics.records import Environment, Workaround

_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*(?:=[^\s\"']+)?)")
_ASSIGNMENT = re.compile(r"\b([A-Z][A-Z0-9_]{2,})=(\"[^\"]*\"|'[^']*'|\S+)")


def _workaround_tokens(workaround: Workaround) -> tuple[list[str], list[tuple[str, str]]]:
    code = workaround.code or ""
    flags = [f for f in _FLAG.findall(code) if not f.startswith("--target")]
    # `export NEURON_CC_FLAGS="$NEURON_CC_FLAGS --lnc=1"`: the flag is what counts, not the old value.
    assignments = [
        (name, " ".join(t for t in value.strip("'\"").split() if not t.startswith("$")))
        for name, value in _ASSIGNMENT.findall(code)
    ]
    return flags, assignments


def already_applied(workaround: Workaround, environment: Environment) -> bool:
    """True when the workaround is a shell setting (flags, variables) the failing run already had.

    Code in other languages (Python edits, model changes) cannot be checked against a log: never "tried".
    """
    if (workaround.language or "shell") not in ("shell", "bash", "sh", "console"):
        return False
    flags, assignments = _workaround_tokens(workaround)
    if not flags and not assignments:
        return False
    in_use = set(environment.compiler_flags)
    for value in environment.env_vars.values():
        in_use |= set(value.split())
    flags_here = all(f in in_use for f in flags)
    vars_here = all(
        environment.env_vars.get(name) == value or set(value.split()) <= in_use for name, value in assignments
    )
    return flags_here and vars_here
