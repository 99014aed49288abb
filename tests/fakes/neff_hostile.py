"""Hostile NEFF payloads, fakes built for the tests of issue 12 ("NEFF reading", "Archive escape"): raw tar
blocks for extended headers tarfile would choke on, a gzip bomb made of concatenated gzip members, and chains
of in-folder symlinks. They carry the standard members after the hostile part, so a reader that skipped the
check would go on as if the file were fine."""

from __future__ import annotations

import gzip
import io
import tarfile

from fakes.neff import standard_members, tar_payload


def raw_header(name: str, kind: bytes, size: int) -> bytes:
    """One 512-byte tar header block declaring `size` bytes of content, whatever they are."""
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size
    return info.tobuf(format=tarfile.USTAR_FORMAT)


def padded(data: bytes) -> bytes:
    return data + bytes(-len(data) % tarfile.BLOCKSIZE)


def with_extended_header(kind: bytes, content: bytes, declared: int | None = None) -> bytes:
    """A gzip payload opening with an extended header (PAX 'x' or GNU long name 'L') before the standard members."""
    size = len(content) if declared is None else declared
    raw = raw_header("././@LongLink" if kind == tarfile.GNUTYPE_LONGNAME else "pax", kind, size) + padded(content)
    return gzip.compress(raw + tar_payload(standard_members(), gzip=False))


def gzip_bomb(unpacked: int = 2**30, piece: int = 16 * 2**20) -> bytes:
    """A tar member of `unpacked` zero bytes as concatenated gzip members: about 1 MB for 1 GiB."""
    head = raw_header("constants.bin", tarfile.REGTYPE, unpacked)
    zeros = gzip.compress(bytes(piece), compresslevel=9)
    count, rest = divmod(unpacked, piece)
    tail = gzip.compress(bytes(rest) + bytes(2 * tarfile.BLOCKSIZE)) if rest else gzip.compress(bytes(1024))
    return gzip.compress(head) + zeros * count + tail


def symlink_members(*specs: tuple[str, str]) -> list[tarfile.TarInfo]:
    """Tar members from (name, what): what is 'dir', 'file' or '-> target' for a symlink."""
    members = []
    for name, what in specs:
        info = tarfile.TarInfo(name)
        if what == "dir":
            info.type = tarfile.DIRTYPE
        elif what.startswith("-> "):
            info.type, info.linkname = tarfile.SYMTYPE, what[3:]
        else:
            info.size = 4
        members.append(info)
    return members


def plain_tar(members: list[tarfile.TarInfo]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for info in members:
            tar.addfile(info, io.BytesIO(b"evil") if info.isfile() else None)
    return gzip.compress(buffer.getvalue())
