"""Read an input (file, '-' for stdin, gzip or plain) as numbered text lines, streaming.

Bytes in, text lines out: decoding never fails (invalid UTF-8 becomes U+FFFD), binary files are refused,
and a single enormous line is cut so memory stays bounded whatever the input.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

from nforensics.errors import InputError

if TYPE_CHECKING:
    from nforensics.linear_regex.lines import LineFinder

MAX_LINE_CHARS = 64 * 1024  # a longer line keeps its first and last halves of this and says what was cut
READ_BYTES = 1 << 20  # bytes read at a time
TAIL_LINES = 2  # the input's last non-blank lines, never skipped: how a log ends (a hang, a cut paste) is read there
_KEPT_CHARS = MAX_LINE_CHARS // 2 - 64  # characters kept of each end of an over-long line (room left for the note)
_KEEP_BYTES = 4 * _KEPT_CHARS  # bytes read of each end of an over-long line: those characters, at up to 4 bytes each
_LONG_LINE_BYTES = 4 * MAX_LINE_CHARS  # a line still unended at this many bytes is read to its end in bounded memory
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b < 0xC0)
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


def _opened(name: str, raw: BinaryIO) -> io.BufferedIOBase:
    """The input's bytes, gunzipped when they are gzip; a binary file is refused."""
    stream = cast(io.BufferedReader, raw) if hasattr(raw, "peek") else io.BufferedReader(cast(io.RawIOBase, raw))
    if stream.peek(2)[:2] == _GZIP_MAGIC:
        stream = io.BufferedReader(cast(io.RawIOBase, gzip.GzipFile(fileobj=stream)))
    try:
        head = stream.peek(_SNIFF_BYTES)[:_SNIFF_BYTES]
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{name}: not a readable gzip stream ({exc})") from None
    if is_binary(head):
        raise InputError(f"{name} looks like a binary file, not a log (for NEFF files use `nforensics neff`)")
    return stream


def check_readable(spec: str) -> None:
    """The InputError read_lines would raise at the start for this file (missing, a folder, not permitted,
    binary, not gzip), raised now: a run over several inputs checks them all before writing anything."""
    name, raw = _open_binary(spec)
    try:
        _opened(name, raw)
    finally:
        raw.close()


class LogLines:
    """The numbered lines of one input, read a block of bytes at a time.

    Iterating gives (1-based number, line without its newline): a newline is `\\n`, `\\r\\n` or a lone
    `\\r` (Python's universal newlines) and invalid UTF-8 reads as U+FFFD. Between two lines the reader
    may be told to skip (`skip_to`): the lines before the next one a LineFinder finds something in are
    counted without being decoded, which is what lets a gigabyte of chatter go by at the speed of one scan.
    """

    def __init__(self, name: str, stream: io.BufferedIOBase, owned: bool) -> None:
        self.name = name
        self._stream, self._owned = stream, owned
        self._data = b""  # whole lines, each ending in a newline, unread from self._at on
        self._at = 0
        self._rest = b""  # the start of a line whose end is not read yet
        self._held_cr = False  # the last block ended in CR: a line end, the same one as a LF right after it
        self._ended = False
        self.number = 0  # the number of the last line read or skipped

    def __iter__(self) -> LogLines:
        return self

    @property
    def size(self) -> int | None:
        """The input's bytes on disk (compressed, for a .gz), or None for a pipe or terminal."""
        try:
            info = os.fstat(self._stream.fileno())
        except (OSError, ValueError, io.UnsupportedOperation):
            return None
        return info.st_size if stat.S_ISREG(info.st_mode) else None

    def __next__(self) -> tuple[int, str]:
        end = self._data.find(b"\n", self._at)
        if end < 0:
            if not self._fill():
                self.close()
                raise StopIteration
            end = self._data.find(b"\n", self._at)
        raw, self._at = self._data[self._at:end], end + 1
        self.number += 1
        line = raw.decode("utf-8", "replace")
        return self.number, shortened(line) if len(line) > MAX_LINE_CHARS else line

    def skip_to(self, finder: LineFinder) -> None:
        """Move to the next line `finder` finds something in, counting the lines before it unread. The last
        TAIL_LINES non-blank lines of the input (and what follows them) are never skipped: how a log ends
        is read from them."""
        while True:
            start = finder.line_start(self._data, self._at)
            if start >= 0:
                self._count_to(start)
                return
            self._count_to(_tail_start(self._data, self._at))
            if not self._fill():
                return

    def _count_to(self, offset: int) -> None:
        self.number += self._data.count(b"\n", self._at, offset)
        self._at = offset

    def _fill(self) -> bool:
        """Read on until at least one more whole line is buffered; False at the end of the input."""
        while block := self._next_block():
            cut = block.rfind(b"\n")
            if cut < 0:
                self._rest += block
                if len(self._rest) > _LONG_LINE_BYTES:
                    self._take(self._long_line())
                    return True
                continue
            self._take(self._rest + block[:cut + 1])
            self._rest = block[cut + 1:]
            return True
        return False

    def _next_block(self) -> bytes:
        """The next bytes read, their line ends made `\\n`; at the end of the input, the newline that ends
        its last line, then b""."""
        while not self._ended:
            try:
                block = self._stream.read1(READ_BYTES)  # what is there: a terminal gives a line at a time
            except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError; a bad block is zlib's
                raise InputError(f"{self.name}: read failed after line {self.number} ({exc})") from None
            if not block:
                self._ended = True
                return b"\n" if self._rest or self._held_cr else b""
            if self._held_cr:
                block, self._held_cr = b"\r" + block, False
            if block.endswith(b"\r"):  # a CR LF pair may be cut between two reads
                block, self._held_cr = block[:-1], True
            if block:
                return block.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in block else block
        return b""

    def _take(self, lines: bytes) -> None:
        self._data = self._data[self._at:] + lines
        self._at = 0

    def _long_line(self) -> bytes:
        """An over-long line, read to its end in bounded memory: its head and its tail (a failure is often
        printed at the end of a long record) with a note of how much was cut, as `shortened` writes it;
        then the whole lines read after it."""
        head, tail = self._rest[:_KEEP_BYTES], self._rest[-_KEEP_BYTES:]
        chars, after = _characters(self._rest), b""
        self._rest = b""
        while block := self._next_block():
            cut = block.find(b"\n")
            piece = block if cut < 0 else block[:cut]
            chars += _characters(piece)
            tail = (tail + piece)[-_KEEP_BYTES:]
            if cut >= 0:
                rest = block[cut + 1:]
                whole = rest.rfind(b"\n") + 1
                after, self._rest = rest[:whole], rest[whole:]
                break
        first, last = head.decode("utf-8", "replace")[:_KEPT_CHARS], tail.decode("utf-8", "replace")[-_KEPT_CHARS:]
        return f"{_cut_note(first, last, max(chars - 2 * _KEPT_CHARS, 0))}\n".encode() + after

    def close(self) -> None:
        if self._owned:
            self._stream.close()


def _characters(data: bytes) -> int:
    """How many characters UTF-8 bytes hold (continuation bytes are not characters of their own)."""
    return len(data) - len(data.translate(None, _NOT_CONTINUATION))


def _tail_start(data: bytes, low: int) -> int:
    """Where the last TAIL_LINES non-blank lines of `data` (whole lines, from `low` on) start."""
    end, found = len(data), 0
    while end > low and found < TAIL_LINES:
        start = data.rfind(b"\n", low, end - 1) + 1 or low
        found += bool(data[start:end].strip())
        end = start
    return end


def read_lines(spec: str) -> tuple[str, LogLines]:
    """(display name, the input's numbered lines)."""
    name, raw = _open_binary(spec)
    try:
        stream = _opened(name, raw)
    except InputError:
        raw.close()
        raise
    return name, LogLines(name, stream, owned=raw is not sys.stdin.buffer)


def text_lines(text: str) -> Iterator[tuple[int, str]]:
    """The same numbering for text already in memory (the runner's captured output, tests)."""
    for number, line in enumerate(text.splitlines(), start=1):
        yield number, shortened(line) if len(line) > MAX_LINE_CHARS else line


def shortened(line: str) -> str:
    """A line longer than MAX_LINE_CHARS as its first and last characters, with a note of what was cut in
    between; no longer than MAX_LINE_CHARS itself, so shortening it again changes nothing."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    return _cut_note(line[:_KEPT_CHARS], line[-_KEPT_CHARS:], len(line) - 2 * _KEPT_CHARS)


def _cut_note(head: str, tail: str, cut: int) -> str:
    return f"{head} [... {cut} characters cut by nforensics ...] {tail}"
