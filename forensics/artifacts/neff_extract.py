"""`nforensics neff --extract`: unpack a NEFF's payload into an empty folder, only after every member has
been checked, and never to a path that resolves outside the folder."""

from __future__ import annotations

import os
import posixpath
import shutil
import tarfile
from pathlib import Path, PurePosixPath

from forensics.artifacts.neff_header import read_header
from forensics.artifacts.neff_payload import member_file, open_payload, unsafe_reason
from forensics.errors import InputError


def extract_neff(path: Path | str, dest: Path | str) -> Path:
    """Unpack the payload into dest (absent or empty). Every member is checked before anything is written."""
    path, dest = Path(path), Path(dest)
    header, _, kind, _ = read_header(path)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(f"{dest}: refusing to extract into a folder that is not empty")
    with open_payload(path, header, kind) as (_, stream):
        for member in stream:
            reason = unsafe_reason(member)
            if reason:
                raise InputError(f"{path}: refusing to extract: member {member.name!r} {reason}")
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{dest}: cannot create the folder ({exc.strerror or exc})") from None
    root = dest.resolve()
    with open_payload(path, header, kind) as (tar, stream):
        for member in stream:
            try:
                _write_member(tar, member, root)
            except OSError as exc:
                raise InputError(f"{dest}: cannot write member {member.name!r} ({exc.strerror or exc})") from None
    return root


def _write_member(tar: tarfile.TarFile, member: tarfile.TarInfo, root: Path) -> None:
    parts = [p for p in PurePosixPath(member.name).parts if p not in ("", ".")]
    if not parts:
        return
    target = root.joinpath(*parts)
    if member.isdir():
        target.mkdir(parents=True, exist_ok=True)
        _inside(root, target)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    _inside(root, target.parent)  # a parent reached through an in-folder symlink must still resolve inside
    if member.issym():
        os.symlink(member.linkname, target)
    elif member.islnk():
        source = root.joinpath(*PurePosixPath(posixpath.normpath(member.linkname)).parts)
        _inside(root, source)
        os.link(source, target)
    else:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "wb") as out, member_file(tar, member) as source_file:
            shutil.copyfileobj(source_file, out, 1 << 20)


def _inside(root: Path, path: Path) -> None:
    real = Path(os.path.realpath(path))
    if real != root and root not in real.parents:
        raise InputError(f"refusing to extract: {path} resolves outside {root}")
