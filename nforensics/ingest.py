"""Read an input (file, '-' for stdin, gzip or plain) as numbered text lines, streaming.

Bytes in, text lines out: decoding never fails (invalid UTF-8 becomes U+FFFD), binary files are refused,
and a single enormous line is cut so memory stays bounded whatever the input.
"""

from __future__ import annotations

import gzip
import io
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, cast

from nforensics.errors import InputError

MAX_LINE_CHARS = 64 * 1024  # a longer line keeps its first and last halves of this and says what was cut
_SNIFF_BYTES = 8192
_GZIP_MAGIC = b"\x1f\x8b"


def _open_binary(spec: str) -> tuple[str, BinaryIO]:
    if spec == "-":
        return "<stdin>", sys.stdin.buffer
    path = Path(spec)
    if path.is_dir():
        raise InputError(f"{spec} is a folder; pass the log files in it")
    try:
        return spec, path.open("rb")
    except FileNotFoundError:
        raise InputError(f"{spec}: no such file") from None
    except PermissionError:
        raise InputError(f"{spec}: permission denied") from None
    except OSError as exc:
        raise InputError(f"{spec}: cannot read ({exc.strerror or exc})") from None


def is_binary(head: bytes) -> bool:
    """A NUL byte in the first bytes: a NEFF, protobuf or archive, not text."""
    return b"\x00" in head[:_SNIFF_BYTES]


def _decoded(name: str, raw: BinaryIO) -> io.TextIOWrapper:
    stream = cast(io.BufferedReader, raw) if hasattr(raw, "peek") else io.BufferedReader(cast(io.RawIOBase, raw))
    if stream.peek(2)[:2] == _GZIP_MAGIC:
        stream = io.BufferedReader(cast(io.RawIOBase, gzip.GzipFile(fileobj=stream)))
    try:
        head = stream.peek(_SNIFF_BYTES)[:_SNIFF_BYTES]
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{name}: not a readable gzip stream ({exc})") from None
    if is_binary(head):
        raise InputError(f"{name} looks like a binary file, not a log (for NEFF files use `nforensics neff`)")
    return io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline=None)


def check_readable(spec: str) -> None:
    """The InputError read_lines would raise at the start for this file (missing, a folder, not permitted,
    binary, not gzip), raised now: a run over several inputs checks them all before writing anything."""
    name, raw = _open_binary(spec)
    try:
        _decoded(name, raw)
    finally:
        raw.close()


def read_lines(spec: str) -> tuple[str, Iterator[tuple[int, str]]]:
    """(display name, iterator of (1-based line number, line without newline))."""
    name, raw = _open_binary(spec)
    text = _decoded(name, raw)

    def lines() -> Iterator[tuple[int, str]]:
        number = 0
        try:
            while True:
                line = text.readline(MAX_LINE_CHARS)
                if not line:
                    return
                number += 1
                if not line.endswith("\n"):
                    # An over-long line: keep its head and its tail (a failure is often printed at the end
                    # of a long record), drain the middle without keeping it.
                    tail, cut = "", 0
                    while (more := text.readline(MAX_LINE_CHARS)):
                        cut += len(tail)
                        tail = more
                        if more.endswith("\n"):
                            break
                    line = shortened(line + tail.rstrip("\r\n"), cut)
                yield number, line.rstrip("\r\n")
        except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError; a bad block is zlib's
            raise InputError(f"{name}: read failed after line {number} ({exc})") from None
        finally:
            if raw is not sys.stdin.buffer:
                raw.close()

    return name, lines()


def text_lines(text: str) -> Iterator[tuple[int, str]]:
    """The same numbering for text already in memory (the runner's captured output, tests)."""
    for number, line in enumerate(text.splitlines(), start=1):
        yield number, shortened(line) if len(line) > MAX_LINE_CHARS else line


def shortened(line: str, already_cut: int = 0) -> str:
    """A line longer than MAX_LINE_CHARS as its first and last halves of that, with a note of what was cut
    in between (`already_cut`: characters dropped before the line reached here)."""
    half = MAX_LINE_CHARS // 2
    if len(line) <= MAX_LINE_CHARS and not already_cut:
        return line
    cut = already_cut + max(len(line) - 2 * half, 0)
    return f"{line[:half]} [... {cut} characters cut by nforensics ...] {line[-half:]}"
