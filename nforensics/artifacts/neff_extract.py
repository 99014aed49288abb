"""`nforensics neff --extract`: unpack a NEFF's payload into an empty folder, only after every member has
been checked, and never to a path that resolves outside the folder: symlinks are followed (as the kernel will)
through the links the payload itself creates, and every folder is checked before it is created."""

from __future__ import annotations

import os
import posixpath
import shutil
import tarfile
from pathlib import Path, PurePosixPath

from nforensics.artifacts.neff_header import read_header
from nforensics.artifacts.neff_payload import member_file, open_payload, unsafe_reason
from nforensics.errors import InputError


def extract_neff(path: Path | str, dest: Path | str) -> Path:
    """Unpack the payload into dest (absent or empty). Every member is checked before anything is written."""
    path, dest = Path(path), Path(dest)
    header, _, kind, _ = read_header(path)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(f"{dest}: refusing to extract into a folder that is not empty")
    seen: list[tuple[str, str, str]] = []  # (name, kind, linkname) of every member, for the symlink check
    with open_payload(path, header, kind) as (_, stream):
        for member in stream:
            reason = unsafe_reason(member)
            if reason:
                raise InputError(f"{path}: refusing to extract: member {member.name!r} {reason}")
            seen.append((member.name, "sym" if member.issym() else "lnk" if member.islnk() else "", member.linkname))
    if any(k == "sym" for _, k, _ in seen):
        _check_through_links(path, seen)
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
    folder = _folder(root, parts[:-1], create=True)
    target = folder / parts[-1]
    if member.isdir():
        _folder(folder, parts[-1:], create=True, root=root)
    elif member.issym():
        _inside(root, folder / member.linkname)
        os.symlink(member.linkname, target)
        _inside(root, target)
    elif member.islnk():
        link_parts = PurePosixPath(posixpath.normpath(member.linkname)).parts
        source = _folder(root, list(link_parts[:-1]), create=False) / link_parts[-1]
        _inside(root, source)
        os.link(source, target, follow_symlinks=False)
    else:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "wb") as out, member_file(tar, member) as source_file:
            shutil.copyfileobj(source_file, out, 1 << 20)


def _folder(base: Path, parts: list[str], create: bool, root: Path | None = None) -> Path:
    """The real path of base/parts, one component at a time: each one that exists is resolved and must stay
    inside root before anything is created in it, so a folder is never made through a link that leads out."""
    root = root or base
    current = base
    for part in parts:
        step = current / part
        if create and not os.path.lexists(step):
            step.mkdir()
        current = _inside(root, step)
    return current


def _inside(root: Path, path: Path) -> Path:
    real = Path(os.path.realpath(path))
    if real != root and root not in real.parents:
        raise InputError(f"refusing to extract: {path} resolves outside {root}")
    return real


MAX_LINK_HOPS = 40
MAX_RESOLVE_STEPS = 4096


def _check_through_links(path: Path, members: list[tuple[str, str, str]]) -> None:
    """Before anything is written: follow every member's path and every link through the symlinks the payload
    creates (in their final state, as later members see them) and refuse any that would leave the folder."""
    links: dict[tuple[str, ...], str] = {}
    for name, kind, linkname in members:
        parts = PurePosixPath(name).parts
        if kind == "sym":
            parent = _resolve(links, list(parts[:-1]))
            if parent is not None:
                links[tuple(parent) + (parts[-1],)] = linkname
    for name, kind, linkname in members:
        parent = _resolve(links, list(PurePosixPath(name).parts[:-1]))
        resolved = parent
        if parent is not None and kind == "sym":
            resolved = _resolve(links, [*parent, *PurePosixPath(linkname).parts])
        elif parent is not None and kind == "lnk":
            resolved = _resolve(links, list(PurePosixPath(linkname).parts))
        if resolved is None:
            raise InputError(
                f"{path}: refusing to extract: member {name!r} leads outside the folder (or through more than "
                f"{MAX_LINK_HOPS} links) through the payload's own symlinks"
            )


def _resolve(links: dict[tuple[str, ...], str], parts: list[str]) -> list[str] | None:
    """Where parts lead from the folder's root, following links; None when that is outside (or too deep)."""
    stack: list[str] = []
    queue = list(reversed(parts))
    hops = steps = 0
    while queue:
        steps += 1
        part = queue.pop()
        if steps > MAX_RESOLVE_STEPS:
            return None
        if part in ("", "."):
            continue
        if part == "..":
            if not stack:
                return None
            stack.pop()
            continue
        stack.append(part)
        target = links.get(tuple(stack))
        if target is not None:
            hops += 1
            if hops > MAX_LINK_HOPS or target.startswith("/"):
                return None
            stack.pop()
            queue.extend(reversed(PurePosixPath(target).parts))
    return stack
