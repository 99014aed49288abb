"""The NEFF payload as a stream of tar members: bounded to the declared size, hashed on the way, refused
past the tar-bomb limits, and each member's risk named (`unsafe_reason`) before anything uses it.
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

from forensics.artifacts.models import NeffHeader
from forensics.artifacts.neff_header import HEADER_SIZE
from forensics.errors import InputError

# What a payload may declare before we call it a tar bomb. Real NEFFs hold tens to a few thousand members;
# the largest carry a few GB of constants.
MAX_MEMBERS = 100_000
MAX_UNPACKED_BYTES = 64 * 2**30


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


@contextmanager
def open_payload(
    path: Path, header: NeffHeader, kind: str, digest: Any = None
) -> Iterator[tuple[tarfile.TarFile, Iterator[tarfile.TarInfo]]]:
    """Stream the tar payload; the member iterator enforces the bomb limits before a member is used.
    With a digest, the whole declared payload has been fed to it once the block ends."""
    with path.open("rb") as f:
        f.seek(HEADER_SIZE)
        window = _Window(f, header.data_size, digest)
        stream = io.BufferedReader(window, buffer_size=1 << 20)
        try:
            with tarfile.open(fileobj=stream, mode="r|gz" if kind == "gzip-tar" else "r|") as tar:
                yield tar, _bounded(path, tar)
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
