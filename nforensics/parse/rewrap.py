"""Lines a terminal hard-wrapped at its width, joined again before anything reads them; and a paste that
was indented or commented out as a whole (a Markdown code block, a quoted e-mail, a comment block in a
script) set back to its own margin.

A paste copied from a terminal (or a CI log viewer) breaks every long line at the window's width: a frame
`File "neuronxcc/starfish/penguin/C` / `ompile.py", line 307`, a message `The number of instructions
generated (11843392) exceeds the maxi` / `mum allowed per NEFF`. Such a paste shows its width: its longest
lines all have exactly that length and each goes on in the next line, which an unwrapped log does not do
(a message repeated with new timestamps can be as long, but the next line starts a record like it). When
the first lines show a width, a line of exactly that length and the line after it are one line again,
numbered by its first physical line.
"""

from __future__ import annotations

import keyword
import os
import re
from collections.abc import Iterable, Iterator
from itertools import chain, islice

from nforensics.ingest import MAX_LINE_CHARS
from nforensics.linear_regex import compile_linear

SAMPLE_LINES = 2000  # the lines that decide whether the input was wrapped, and at which width
MIN_WIDTH = 60  # narrower "widths" are short lines of one shape (a column of numbers), not a terminal
MIN_WRAPPED = 3  # lines of exactly the width: one or two is chance
SHAPE_CHARS = 12  # the start of a line that says whether it begins a record like the line before
_DIGITS = re.compile(r"\d+")
_FRAME = compile_linear(r'\s*File "[^"]+", line \d+, in [\w.<>]+')
# The rest of a snake_case function name alone at the margin: under a frame Python prints its indented source
# line, another frame or the exception, whose class is capitalised.
_FUNCTION_GOES_ON = re.compile(r"[a-z_][\w.]*>?")


# A banner padded to the terminal's width (pytest's `===== short test summary info =====`) ends a line; a row
# of stars cut out of a longer line (the compiler's ICE banner behind its log prefix) does not start with one.
_PADDED_RULE = re.compile(r"^([=_*#~-])\1\1.*\1\1\1$")
# So does a row of a box drawn to the width (rich's traceback panel, a table of the compiler's): its border.
_BOX_BORDER = re.compile(r"[│┃║╮╯┓┛┐┘┤╢]\s*$")


def _shape(text: str) -> str:
    """How a line starts, digits aside: a log's records start alike (`2024-Jun-02 04:05:36...  ERROR`)."""
    return "".join("0" if c.isdigit() else c for c in text[:SHAPE_CHARS])


def _continues(start: str, piece: str, following: str | None, width: int) -> bool:
    """The line that starts with `start` was cut at the width after `piece` (its last piece so far), and
    `following` is the rest of it: not a new record that starts like it (a message repeated with new
    timestamps can be exactly as long as the width by itself)."""
    if (len(piece) != width or following is None or not following.strip() or _PADDED_RULE.search(piece)
            or _BOX_BORDER.search(piece)):
        return False
    # An indented line is a line of its own (a frame, a source line), unless the cut fell inside a run of
    # padding (an NRT record pads its function name to a column): then the spaces go on in the next line.
    return _shape(following) != _shape(start) and (not following.startswith("  ") or piece.endswith(" "))


def wrap_width(lines: list[str]) -> int | None:
    """The width the lines were wrapped at, or None: the length of the longest lines, when at least
    MIN_WRAPPED different lines (numbers aside) have exactly that length and go on in the line after them."""
    width = max((len(line) for line in lines), default=0)
    if width < MIN_WIDTH:
        return None
    # One message printed again and again (numbers aside) at that length is one piece of evidence, not many.
    pairs = list(zip(lines, [*lines[1:], None], strict=True))
    wrapped = {_DIGITS.sub("", line) for line, following in pairs if _continues(line, line, following, width)}
    # A Python frame cut anywhere (in its path, its line number, its function's name) and finished on the next
    # line is a wrap by itself: a frame holds no line break. (A short paste has too few long lines to show its
    # width otherwise.)
    cut_frame = any(len(line) == width and following is not None and _cut_frame(line, following) for line, following in pairs)
    return width if len(wrapped) >= MIN_WRAPPED or cut_frame else None


def _cut_frame(line: str, following: str) -> bool:
    if _FRAME.fullmatch(line):  # (a bare `raise` or `return` is a source line that lost its indentation)
        return bool(_FUNCTION_GOES_ON.fullmatch(following)) and not keyword.iskeyword(following)
    return line.lstrip().startswith('File "') and bool(_FRAME.fullmatch(line + following))


# What a whole paste may sit behind: indentation, then at most one comment marker (a log kept as a comment
# block in a script: `# 2025-09-11 ... ERROR ||NEURON_CC_WRAPPER||: ...`, `// ...`).
_MARGIN = re.compile(r"[ \t]*(?:(?:#|//) )?")  # (a marker with its space: gdb frames start `#0 `, `#1 `)


def margin(lines: list[str]) -> str:
    """The indentation (and comment marker) every non-blank line shares ("" when one starts at the first
    column): a paste set in a Markdown code block by four spaces, quoted with a tab, or commented out in
    a script, whose own indentation comes after it."""
    common = os.path.commonprefix([line for line in lines if line.strip()])
    found = _MARGIN.match(common)
    return found.group(0) if found else ""


class Rejoined:
    """The numbered lines with hard-wrapped ones joined again (unchanged when the input was not wrapped),
    and the margin the first lines all share removed from every line that has it. `joins`: a width was
    found, so each line is read one ahead of the one handed on."""

    def __init__(self, lines: Iterable[tuple[int, str]]) -> None:
        source = iter(lines)
        head = list(islice(source, SAMPLE_LINES))
        indent = margin([text for _, text in head])
        if indent:
            source = ((number, text[len(indent):] if text.startswith(indent) else text) for number, text in source)
            head = [(number, text[len(indent):] if text.startswith(indent) else text) for number, text in head]
        width = wrap_width([text.rstrip("\r\n") for _, text in head])
        self.joins = width is not None
        self._lines = chain(head, source) if width is None else _joined(chain(head, source), width)

    def __iter__(self) -> Iterator[tuple[int, str]]:
        return self._lines


def _joined(lines: Iterable[tuple[int, str]], width: int) -> Iterator[tuple[int, str]]:
    pending: tuple[int, list[str]] | None = None  # the first line's number and the pieces joined so far
    size = 0
    for number, text in lines:
        body = text.rstrip("\r\n")
        if pending is not None:
            # Joined lines are no longer than ingest lets one line be; past that the rest is a line of its own.
            if size + len(body) <= MAX_LINE_CHARS and _continues(pending[1][0], pending[1][-1], body, width):
                pending[1].append(body)
                size += len(body)
                continue
            yield pending[0], "".join(pending[1])
        pending, size = (number, [body]), len(body)
    if pending is not None:
        yield pending[0], "".join(pending[1])
