"""Results that are slow to compute and rarely change, cached on disk between runs.

Validating the catalogue's signature files compiles hundreds of regular expressions, and scanning every
installed distribution for signature-pack entry points takes a few hundred milliseconds; a process that
starts for one `explain` cannot afford either each time. Each result is keyed by the nforensics version and
a stamp of its inputs (file names, sizes, mtimes), so any change recomputes it; writing a new file prunes
the files no run has used for a week, and all but the few most recently used of each kind. It is an
optimisation only: an unreadable or unwritable cache is ignored, silently. The folder is
NFORENSICS_CACHE_DIR when set, else the user's cache folder or, when that cannot be had (a read-only home),
a folder of the user's own in the temp folder; with neither, the results stay in memory for the process.

A cache on a shared machine (a self-hosted CI runner, a login node) is an attack surface, so:
- the folder is private: created 0700, and used only when it is a real folder (not a symlink) owned by
  this user that nobody else can write to (a 0755 folder of ours is tightened to 0700; one that others
  could write to, or another user's, is refused and the run goes on without cache);
- each file is opened without following symlinks and read only when this user owns it;
- the format cannot execute code: JSON, whose few tagged objects (tuples, dates, the catalogue's pydantic
  models) are rebuilt from an allow-list of types. A planted file can at worst be a cache miss.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar, cast

from nforensics import __version__

T = TypeVar("T")

FORMAT = "json-1"  # part of every key: a change of encoding never reads an older file
_OWNER_ONLY = 0o700
_MAX_BYTES = 64 * 1024 * 1024  # a cache file larger than this is not ours to read
STALE_AFTER = 7 * 24 * 3600  # a cache file unused this long is removed when the next one is written
# ... and of each kind only the most recently used few are kept: a checkout being edited, or packages being
# installed, makes a new key each time, and a week of those was hundreds of megabytes.
KEEP_PER_KIND = 4
_CACHE_FILE = re.compile(r"(?P<kind>[a-z][a-z-]{0,40})-[0-9a-f]{24}\.(?:json|sqlite)")
_LEFTOVER_SECONDS = 3600  # a temporary file this old belongs to no run still writing it


def cache_dir() -> Path:
    """Where the cache lives when it can: NFORENSICS_CACHE_DIR, else $XDG_CACHE_HOME or ~/.cache."""
    explicit = os.environ.get("NFORENSICS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nforensics"


def _candidates() -> list[Path]:
    """The cache folder, then (unless NFORENSICS_CACHE_DIR chose one) a folder of this user's own in the temp
    folder, for a read-only home: a CI container, a locked-down login node."""
    if os.environ.get("NFORENSICS_CACHE_DIR"):
        return [cache_dir()]
    if not hasattr(os, "getuid"):
        return [cache_dir()]
    return [cache_dir(), Path(os.environ.get("TMPDIR") or "/tmp") / f"nforensics-{os.getuid()}"]


def _mine(info: os.stat_result) -> bool:
    return not hasattr(os, "getuid") or info.st_uid == os.getuid()


def _usable(path: Path) -> bool:
    """`path` is (or is made) a real folder of this user that nobody else can write to."""
    try:
        path.mkdir(mode=_OWNER_ONLY, parents=True, exist_ok=True)
        info = os.lstat(path)
    except (OSError, ValueError):
        return False
    if not stat.S_ISDIR(info.st_mode) or not _mine(info):
        return False  # a symlink (even to a folder of ours) or another user's folder
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return False  # others could have planted files in it: nothing in it is trusted
    if info.st_mode & 0o077:
        try:  # readable by others only (0755, as earlier versions created it): tighten, the content is ours
            os.chmod(path, _OWNER_ONLY)
        except OSError:
            pass  # a read-only file system: still ours alone to write, so still trusted
    return True


def private_dir() -> Path | None:
    """The cache folder, private to this user: the first candidate we can write to, else the first we can
    only read (a cache shipped on a read-only image), else None: then nothing is read or kept on disk."""
    readable = None
    for path in _candidates():
        if _usable(path):
            if os.access(path, os.W_OK):
                return path
            readable = readable or path
    return readable


def stamp(paths: Iterable[Path]) -> list[str]:
    """What identifies the state of these files or folders: name, size and mtime (missing ones too)."""
    parts = []
    for path in paths:
        name = os.path.abspath(path)  # not resolve(): a realpath per file costs more than the rest of the stamp
        try:
            info = os.stat(name)
            parts.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
        except OSError:
            parts.append(f"{path}:missing")
    return parts


# ---------------------------------------------------------------- encoding

_TUPLE, _MODEL, _PAIRS = "__tuple__", "__model__", "__pairs__"
_TIMES = {"__date__": _dt.date, "__datetime__": _dt.datetime, "__time__": _dt.time}
_TAGS = {_TUPLE, _MODEL, _PAIRS, *_TIMES}


class _Unsupported(Exception):
    """A value this cache does not store (it is then computed every time)."""


@cache
def _models() -> dict[str, type]:
    """The pydantic models a cache file may name: the catalogue's schemas, nothing else. Looked up for every
    model written, so kept: walking the schema module's names each time was a fifth of a first run's cost."""
    from pydantic import BaseModel

    from nforensics.knowledge import family_schema, schema

    return {name: value for module in (schema, family_schema) for name, value in vars(module).items()
            if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == module.__name__}


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, tuple):
        return {_TUPLE: [_encode(v) for v in value]}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise _Unsupported("dict with non-string keys")
        if _TAGS & value.keys():
            return {_PAIRS: [[k, _encode(v)] for k, v in value.items()]}
        return {k: _encode(v) for k, v in value.items()}
    for tag, kind in _TIMES.items():  # datetime before date: a datetime is a date
        if type(value) is kind:
            return {tag: cast(Any, value).isoformat()}
    if hasattr(type(value), "model_fields") and hasattr(value, "__pydantic_fields_set__"):
        if type(value).__name__ not in _models():
            raise _Unsupported(f"model {type(value).__name__}")
        return {_MODEL: type(value).__name__,
                "fields": {name: _encode(getattr(value, name)) for name in type(value).model_fields},
                "set": sorted(value.__pydantic_fields_set__)}
    raise _Unsupported(type(value).__name__)


def _builder(model: Any) -> Callable[[dict[str, Any], set[str]], Any]:
    """How to rebuild an instance of `model` from a cache file, without validation: the file is this user's
    own, written from validated models. A file holds every field, so the fields become the instance's
    __dict__ as model_construct would make it, without its per-field alias and default lookups (those took
    a third of the catalogue's load time)."""
    names = model.model_fields.keys()

    def construct(fields: dict[str, Any], fields_set: set[str]) -> Any:
        return model.model_construct(_fields_set=fields_set, **fields)

    if model.__pydantic_post_init__ or model.__pydantic_root_model__ or model.model_config.get("extra") == "allow":
        return construct

    def build(fields: dict[str, Any], fields_set: set[str]) -> Any:
        if fields.keys() != names:
            return construct(fields, fields_set)
        instance = model.__new__(model)
        object.__setattr__(instance, "__dict__", fields)
        object.__setattr__(instance, "__pydantic_fields_set__", fields_set)
        object.__setattr__(instance, "__pydantic_extra__", None)
        object.__setattr__(instance, "__pydantic_private__", None)
        return instance

    return build


@cache
def _decoder() -> Callable[[dict[str, Any]], Any]:
    builders = {name: _builder(model) for name, model in _models().items()}

    def hook(obj: dict[str, Any]) -> Any:
        if len(obj) == 1:
            (tag, payload), = obj.items()
            if tag == _TUPLE:
                return tuple(payload)
            if tag == _PAIRS:
                return {k: v for k, v in payload}
            if tag in _TIMES:
                return cast(Any, _TIMES[tag]).fromisoformat(payload)
        elif obj.keys() == {_MODEL, "fields", "set"}:
            build = builders.get(obj[_MODEL])
            if build is None:
                raise _Unsupported(f"model {obj[_MODEL]!r}")
            return build(obj["fields"], set(obj["set"]))
        return obj

    return hook


# ---------------------------------------------------------------- files

def _private(info: os.stat_result) -> bool:
    """A regular file of this user that no one else can write."""
    return stat.S_ISREG(info.st_mode) and _mine(info) and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def is_private_file(path: Path) -> bool:
    """`path` itself (not a link) is a regular file of this user that no one else can write."""
    try:
        return _private(os.lstat(path))
    except OSError:
        return False


def _read(target: Path) -> Any:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(target, flags)
    try:
        info = os.fstat(fd)
        if not _private(info):
            raise _Unsupported("not a private file of this user")
        if info.st_size > _MAX_BYTES:
            raise _Unsupported("too large")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(_MAX_BYTES + 1)
    finally:
        os.close(fd)
    return decode(data)


def encode(value: Any) -> str:
    """The cache text of `value` (_Unsupported when it holds a type the cache does not store). A list's text
    is its items' texts joined with commas inside brackets."""
    return json.dumps(_encode(value), separators=(",", ":"), allow_nan=False)


def decode(text: str | bytes) -> Any:
    """The value of a cache text: the catalogue's models rebuilt from the allow-list, never code."""
    return json.loads(text, object_hook=_decoder())


def _write(folder: Path, target: Path, text: str) -> None:
    fd, name = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")  # 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(name, target)
    except BaseException:
        try:
            os.unlink(name)
        except OSError:
            pass
        raise


def prune(folder: Path) -> None:
    """Remove what no run reads any more: files of this cache not used for STALE_AFTER (an older catalogue
    or install, a deleted checkout: a hit refreshes a file's time) or beyond the KEEP_PER_KIND most recently
    used of their kind, and temporary files a killed run left behind. Only this user's own regular files
    are touched."""
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    kept: dict[str, list[tuple[float, str]]] = {}
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not _private(info):
            continue
        leftover = entry.name.startswith(".") or entry.name.endswith(".partial")
        if now - info.st_mtime > (_LEFTOVER_SECONDS if leftover else STALE_AFTER):
            _unlink(entry.path)
        elif (ours := _CACHE_FILE.fullmatch(entry.name)) is not None:
            kept.setdefault(ours["kind"], []).append((info.st_mtime, entry.path))
    for files in kept.values():
        for _, path in sorted(files, reverse=True)[KEEP_PER_KIND:]:
            _unlink(path)


def _touch(path: Path) -> None:
    """Mark a cache file as used, so that pruning keeps it however long ago it was written."""
    try:
        os.utime(path)
    except OSError:
        pass  # a read-only cache folder: nothing is pruned there either


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass  # gone already, or a read-only folder


def remember(kind: str, inputs: list[str], compute: Callable[[], T],
             prebuilt: Callable[[], tuple[T, str] | None] | None = None) -> T:
    """`compute()`, or its earlier result when `inputs` (a stamp) are unchanged. With no cache folder to read
    or write, it is computed (callers keep it for the rest of the process). `prebuilt`, when given, is asked
    first on a miss: the value with its cache text, read ready-made (the catalogue shipped in the package),
    or None; its text is written as it is."""
    folder = private_dir()
    if folder is None:
        made = prebuilt() if prebuilt else None
        return made[0] if made else compute()
    key = hashlib.sha256("\0".join([__version__, FORMAT, kind, *inputs]).encode()).hexdigest()[:24]
    target = folder / f"{kind}-{key}.json"
    try:
        result = _read(target)
    except (OSError, ValueError, TypeError, RecursionError, _Unsupported):
        pass  # missing, planted, truncated or from another layout: compute it again
    else:
        _touch(target)
        return result
    made = prebuilt() if prebuilt else None
    result, text = made if made else (compute(), None)
    try:
        _write(folder, target, encode(result) if text is None else text)
    except (OSError, ValueError, TypeError, RecursionError, _Unsupported):
        return result  # a read-only cache folder: nothing to tidy either
    prune(folder)
    return result
