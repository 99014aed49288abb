"""How terminal output looks where it goes: colour, width and how much it says, decided in one place.

Colour follows `--color` (auto, always, never). On auto, NO_COLOR (no-color.org) turns it off and FORCE_COLOR
or CLICOLOR_FORCE turn it on (GitHub Actions and most CI log viewers show ANSI colour but are not
terminals); otherwise a terminal gets colour and a pipe or a file does not. Width follows the terminal when
the output is one; output that is piped, captured or written to a file keeps a fixed width, so it reads
the same anywhere (and tests can compare it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO

FIXED_WIDTH = 110
COLOR_CHOICES = ("auto", "always", "never")
_color_choice = "auto"
DETAILS = ("brief", "default", "verbose")
_detail = "default"


def choose_detail(level: str) -> None:
    """How much the terminal explanation says, for every text output this process writes: `brief` (one line
    per finding), `default` (one screen per finding) or `verbose` (everything known)."""
    global _detail
    if level not in DETAILS:
        raise ValueError(f"detail is one of {', '.join(DETAILS)}, not {level!r}")
    _detail = level


def detail() -> str:
    return _detail


def choose_color(choice: str) -> None:
    """The user's `--color`, for every output this process writes."""
    global _color_choice
    if choice not in COLOR_CHOICES:
        raise ValueError(f"--color takes one of {', '.join(COLOR_CHOICES)}, not {choice!r}")
    _color_choice = choice


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def wants_color(stream: TextIO, env: Mapping[str, str] = os.environ) -> bool:
    if _color_choice != "auto":
        return _color_choice == "always"
    if env.get("NO_COLOR"):
        return False
    if any(env.get(name, "0").lower() not in ("", "0", "false", "no") for name in ("FORCE_COLOR", "CLICOLOR_FORCE")):
        return True
    return _is_terminal(stream)


def width_for(stream: TextIO) -> int:
    """The width of the terminal `stream` writes to (stderr's own, not stdout's), else FIXED_WIDTH."""
    if not _is_terminal(stream):
        return FIXED_WIDTH
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return FIXED_WIDTH
