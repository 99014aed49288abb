"""The NEFF payload as a stream of tar members: bounded to the declared size, hashed on the way, refused
past the tar-bomb, gzip-bomb and header limits, and each member's risk named (`unsafe_reason`) before anything uses it.
Nothing here writes to disk."""

from __future__ import annotations

import io
import posixpath
import re
import tarfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, Any

from nforensics.artifacts.models import NeffHeader
from nforensics.artifacts.neff_header import HEADER_SIZE
from nforensics.errors import InputError

# What a payload may declare before we call it a tar bomb. Real NEFFs hold tens to a few thousand members;
# the largest carry a few GB of constants.
MAX_MEMBERS = 100_000
MAX_UNPACKED_BYTES = 64 * 2**30
# A gzip payload may unpack to this many times its size (deflate tops out near 1030x on zeros), or to
# MIN_INFLATE_LIMIT, whichever is larger; real NEFFs stay well under both.
MAX_INFLATE_RATIO = 100
MIN_INFLATE_LIMIT = 256 * 2**20
# Extended tar headers are parsed in memory (and CPython's PAX parser is quadratic on some inputs): a GNU long
# name or link is at most a path, a PAX header a few such fields.
MAX_LONG_NAME = 4096
MAX_PAX_HEADER = 16384
MAX_PAX_NUMBER = 32  # digits in a row: CPython's hdrcharset search is quadratic in them
_DIGITS_ONLY = bytes(c if 48 <= c <= 57 else 32 for c in range(256))


class _Refused(Exception):
    """A payload the reader refuses: an oversized or malformed tar header, a gzip bomb (tarfile re-raises it as is)."""


def member_file(tar: tarfile.TarFile, member: tarfile.TarInfo) -> IO[bytes]:
    """A regular member's content (extractfile returns None only for other kinds, checked before)."""
    handle = tar.extractfile(member)
    if handle is None:
        raise InputError(f"NEFF member {member.name!r} cannot be read as a file")
    return handle


class _Window(io.RawIOBase):
    """The declared payload of an open NEFF: reads stop at data_size, so trailing bytes never reach tarfile.
    Every byte read also feeds the digest, if one is given, so hashing needs no second pass over the file."""

    def __init__(self, f: Any, length: int, digest: Any = None) -> None:
        self._f, self._left, self._digest = f, length, digest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._f.read(min(len(buffer), self._left))
        buffer[: len(data)] = data
        self._left -= len(data)
        if self._digest is not None:
            self._digest.update(data)
        return len(data)

    def drain(self) -> None:
        """Read to the end of the window: tarfile stops at its end-of-archive blocks, the digest covers all of it."""
        buffer = bytearray(1 << 20)
        while self.readinto(buffer):
            pass


class _Inflate(io.RawIOBase):
    """gunzip of the payload window, refused once it unpacks past `limit` bytes (a gzip bomb): time and any
    extraction stay proportional to the file. Concatenated gzip members are read in turn, like gzip does."""

    def __init__(self, source: Any, limit: int) -> None:
        self._source, self._limit, self._out = source, limit, 0
        self._z: Any = zlib.decompressobj(31)
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._done:
            if self._z.eof:  # checked first: zlib may leave a stale unconsumed_tail at a member's end
                rest = self._z.unused_data
                if not rest:
                    rest = self._source.read(1 << 16)
                if not rest.startswith(b"\x1f\x8b"):
                    self._done = True
                    break
                self._z = zlib.decompressobj(31)
                data = self._z.decompress(rest, len(buffer))
            elif self._z.unconsumed_tail:
                data = self._z.decompress(self._z.unconsumed_tail, len(buffer))
            else:
                chunk = self._source.read(1 << 16)
                if not chunk:
                    raise EOFError("the compressed payload ends early")
                data = self._z.decompress(chunk, len(buffer))
            if data:
                self._out += len(data)
                if self._out > self._limit:
                    raise _Refused(
                        f"it unpacks to more than {self._limit} bytes, over {MAX_INFLATE_RATIO} times its size (a gzip bomb?)"
                    )
                buffer[: len(data)] = data
                return len(data)
        return 0


class _CheckedInfo(tarfile.TarInfo):
    """tarfile's member header, with extended headers (GNU long names, PAX) refused when oversized or malformed
    before CPython parses them: its parsers read them whole into memory and the PAX one is quadratic."""

    def _proc_member(self, archive: Any) -> Any:
        if self.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK):
            if self.size > MAX_LONG_NAME:
                raise _Refused(f"a GNU long name header of {self.size} bytes (the limit is {MAX_LONG_NAME})")
        elif self.type in (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE):
            if self.size > MAX_PAX_HEADER:
                raise _Refused(f"a PAX extended header of {self.size} bytes (the limit is {MAX_PAX_HEADER})")
            inner = archive.fileobj
            buf = inner.read(-(-self.size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE)
            _check_pax(buf[: self.size])
            archive.fileobj = _Replay(buf, inner)  # let CPython parse the checked bytes
            try:
                return self._cpython(archive)
            finally:
                archive.fileobj = inner
        return self._cpython(archive)

    def _cpython(self, archive: Any) -> Any:
        parent: Any = super()
        return parent._proc_member(archive)


def _check_pax(buf: bytes) -> None:
    """Linear check that a PAX header is a run of well-formed "<len> <key>=<value>\\n" records."""
    if any(len(run) > MAX_PAX_NUMBER for run in buf.translate(_DIGITS_ONLY).split()):
        raise _Refused("a PAX extended header with an overlong number")
    pos = 0
    while pos < len(buf):
        space = buf.find(b" ", pos, pos + 21)
        digits = buf[pos:space] if space > pos else b""
        if not digits.isdigit():
            raise _Refused("a malformed PAX extended header")
        end = pos + int(digits)
        record = buf[space + 1 : end]
        if end > len(buf) or not record.endswith(b"\n") or record.find(b"=") < 1:
            raise _Refused("a malformed PAX extended header")
        pos = end


class _Replay:
    """A stream that gives back bytes already read, then continues from the underlying stream."""

    def __init__(self, data: bytes, inner: Any) -> None:
        self._data, self._inner = data, inner

    def read(self, size: int = -1) -> bytes:
        head, self._data = self._data[:size], self._data[size:]
        return head + self._inner.read(size - len(head)) if len(head) < size else head

    def tell(self) -> int:
        return int(self._inner.tell()) - len(self._data)


@contextmanager
def open_payload(
    path: Path, header: NeffHeader, kind: str, digest: Any = None
) -> Iterator[tuple[tarfile.TarFile, Iterator[tarfile.TarInfo]]]:
    """Stream the tar payload; the member iterator enforces the bomb limits before a member is used.
    With a digest, the whole declared payload has been fed to it once the block ends."""
    with path.open("rb") as f:
        f.seek(HEADER_SIZE)
        window = _Window(f, header.data_size, digest)
        stream: Any = io.BufferedReader(window, buffer_size=1 << 20)
        if kind == "gzip-tar":
            limit = max(MAX_INFLATE_RATIO * header.data_size, MIN_INFLATE_LIMIT)
            stream = io.BufferedReader(_Inflate(stream, limit), buffer_size=1 << 20)
        try:
            with tarfile.open(fileobj=stream, mode="r|", tarinfo=_CheckedInfo) as tar:
                yield tar, _bounded(path, tar)
        except _Refused as exc:
            raise InputError(f"{path}: refusing the payload: {exc}") from None
        except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            raise InputError(f"{path}: the NEFF payload is not a readable tar archive ({exc})") from None
        if digest is not None:
            window.drain()


def _bounded(path: Path, tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    count = total = 0
    for member in tar:
        count += 1
        total += max(member.size, 0)
        if count > MAX_MEMBERS:
            raise InputError(f"{path}: refusing the payload: more than {MAX_MEMBERS} tar members (a tar bomb?)")
        if total > MAX_UNPACKED_BYTES:
            raise InputError(
                f"{path}: refusing the payload: its members declare more than {MAX_UNPACKED_BYTES} bytes (a tar bomb?)"
            )
        yield member


def unsafe_reason(member: tarfile.TarInfo) -> str | None:
    """Why writing this member could escape the target folder or create something other than files, or None."""
    name = member.name
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name):
        return "has an absolute path"
    if ".." in PurePosixPath(name).parts:
        return "climbs out of the folder with '..'"
    if member.ischr() or member.isblk() or member.isfifo():
        return "is a device file or FIFO"
    if member.issym() or member.islnk():
        link = member.linkname
        base = posixpath.dirname(name) if member.issym() else ""
        resolved = posixpath.normpath(posixpath.join(base, link))
        if link.startswith("/") or resolved == ".." or resolved.startswith("../"):
            return f"is a link pointing outside the folder ({link})"
        return None
    if not (member.isfile() or member.isdir()):
        return "has an unsupported tar member type"
    return None
