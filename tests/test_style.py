"""Colour and width where the output goes (nforensics/render/style.py): `--color`, NO_COLOR, FORCE_COLOR /
CLICOLOR_FORCE, a terminal or a pipe; `-V`."""

from __future__ import annotations

import io

import pytest

from conftest import SEED000, cli, run_cli_text
from nforensics import __version__
from nforensics.render import style

ANSI = "\x1b["


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("stream, env, expected", [
    (Terminal(), {}, True),
    (io.StringIO(), {}, False),
    (Terminal(), {"NO_COLOR": "1"}, False),
    (io.StringIO(), {"FORCE_COLOR": "1"}, True),
    (io.StringIO(), {"CLICOLOR_FORCE": "1"}, True),
    (io.StringIO(), {"FORCE_COLOR": "0"}, False),
    (io.StringIO(), {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),  # no-color.org: NO_COLOR wins
])
def test_colour_on_auto_follows_the_terminal_and_the_environment(stream, env, expected):
    style.choose_color("auto")
    assert style.wants_color(stream, env) is expected


def test_colour_choice_overrides_the_environment():
    try:
        style.choose_color("never")
        assert not style.wants_color(Terminal(), {"FORCE_COLOR": "1"})
        style.choose_color("always")
        assert style.wants_color(io.StringIO(), {"NO_COLOR": "1"})
    finally:
        style.choose_color("auto")
    assert style.width_for(io.StringIO()) == style.FIXED_WIDTH  # a pipe keeps the fixed width


def test_the_cli_colours_a_pipe_only_when_asked():
    assert ANSI not in run_cli_text("explain", SEED000).stdout
    assert ANSI in run_cli_text("--color", "always", "explain", SEED000).stdout
    assert ANSI in run_cli_text("explain", SEED000, env={"FORCE_COLOR": "1"}).stdout
    assert ANSI not in run_cli_text("--color", "never", "explain", SEED000, env={"FORCE_COLOR": "1"}).stdout


def test_a_bad_colour_choice_is_one_line_and_exit_2_and_dash_v_is_the_version():
    result = cli("--color", "sometimes", "explain", SEED000)
    assert result.returncode == 2 and "auto, always, never" in result.stderr
    assert cli("-V").stdout.strip() == f"nforensics {__version__}"
