"""The signature catalogue: TOML files in nforensics/knowledge/signatures/, plus extra packs (--kb DIR), and
the tables of knowledge kept beside it (releases.toml, codes.toml)."""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from os import PathLike
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from nforensics.errors import InputError
from nforensics.knowledge.disk_cache import decode, encode, remember, stamp
from nforensics.linear_regex import Pattern, SearchSet, compile_search
from nforensics.knowledge.order import RecognitionOrder
from nforensics.knowledge.family_schema import Family
from nforensics.knowledge.schema import Signature
from nforensics.knowledge.vocabulary import VOCABULARY_FILE

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 (Neuron DLAMI venvs)
    import tomli as tomllib

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

KNOWLEDGE_DIR = Path(__file__).resolve().parent
BUILTIN_DIR = KNOWLEDGE_DIR / "signatures"
FAMILIES_DIR = KNOWLEDGE_DIR / "families"
SCHEMA_FILE = KNOWLEDGE_DIR / "schema.py"  # a cached catalogue is stale when the models it was built with change
ORDER_FILE = KNOWLEDGE_DIR / "order.py"  # or the tier checks those models run
SNAPSHOT_FILE = KNOWLEDGE_DIR / "catalogue.bin"  # the catalogue validated ahead (tools/build_knowledge_snapshot.py)
ENTRY_POINT_GROUP = "nforensics.signatures"  # installed packs: each entry point names a folder of TOML files


@dataclass(frozen=True)
class KnowledgeBase:
    signatures: tuple[Signature, ...]
    order: RecognitionOrder  # which of several signatures matching one line claims it
    by_code: dict[str, tuple[Signature, ...]] = field(default_factory=dict)
    # by_code and these: the signatures that match a code / NRT status names / exit codes, in recognition order.
    by_status: tuple[Signature, ...] = ()
    by_exit_code: tuple[Signature, ...] = ()
    families: dict[str, Family] = field(default_factory=dict)  # id -> family, in file-name order
    pack_folders: tuple[str, ...] = ()  # signature packs in load order; their cases/ folders add cases

    @cached_property
    def template_index(self) -> tuple[list[tuple[Signature, tuple[str, ...]]], dict[str, list[int]]]:
        """The signatures' message templates and which of them a token may reach (knowledge/matcher.py),
        built once per catalogue: a folder run matches thousands of logs against it."""
        from nforensics.knowledge.matcher import template_index

        return template_index(self)

    @cached_property
    def own_words(self) -> dict[str, tuple[tuple[str, float], ...]]:
        """Each template's own words: the prose no other signature's template has (knowledge/matcher.py)."""
        from nforensics.knowledge.matcher import own_words

        return own_words(self)

    @cached_property
    def pattern_index(self) -> tuple[SearchSet, list[int]]:
        """The signatures' patterns as one set, scanned once per line (knowledge/matcher.py)."""
        from nforensics.knowledge.matcher import pattern_index

        return pattern_index(self)

    @cached_property
    def anchors(self) -> tuple[frozenset[str] | None, frozenset[str] | None]:
        """RE2 patterns one of which a line (a warning) must hold for a signature's pattern to read it: past a
        big log's ungated head, a line with none of them (nor a word the parsers need) is only counted, and in
        bulk a warning without one is passed over too (nforensics/parse/gates.py). The words each pattern needs
        (nforensics/linear_regex/necessary.py), of every signature and of those that claim warnings; None
        where some pattern needs no word."""
        from nforensics.knowledge.matcher import catalogue_anchors

        return catalogue_anchors(self)

    def get(self, key: str) -> Signature | None:
        """A signature by id or by code (case-insensitive), as `nforensics codes KEY` looks it up."""
        wanted = key.upper()
        for signature in self.signatures:
            if signature.id == key.lower() or (signature.code or "").upper() == wanted:
                return signature
        candidates = self.by_code.get(wanted)
        return candidates[0] if candidates else None


@cache
def table(name: str) -> dict[str, Any]:
    """The data file nforensics/knowledge/<name>.toml, read only when first needed. Parsed once and kept in
    the disk cache like the signatures: releases.toml alone takes ~12 ms to parse, too much for `explain`."""
    path = KNOWLEDGE_DIR / f"{name}.toml"
    return remember(f"table-{name}", stamp([path]), lambda: tomllib.loads(path.read_text(encoding="utf-8")))


def compiled(pattern: str) -> Pattern:
    """A catalogue regex, compiled once per process, in RE2: linear time, so no log line can make a pattern
    backtrack for minutes. The few that need a lookaround RE2 lacks run in Python's re on bounded windows
    (nforensics/linear_regex.py; tests/test_regex_safety.py lists them)."""
    return compile_search(pattern)


def _load_file(path: Path, model: type[Signature] | type[Family] = Signature) -> Any:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML ({exc})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid(str(path), exc) from None


def invalid(where: str, exc: ValidationError, whole: str = "(top level)") -> InputError:
    """One line for a knowledge file (or one line of it) that does not validate: its first error's field."""
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or whole
    return InputError(f"{where}: field '{field}': {first['msg']}")


def models_digest() -> str:
    """What a validated knowledge file also depends on: the models that validate it, the tier checks and the
    named word lists."""
    return hashlib.sha256(b"\0".join(f.read_bytes() for f in (SCHEMA_FILE, ORDER_FILE, VOCABULARY_FILE))).hexdigest()


def file_digest(models: str, data: bytes) -> str:
    """The key of a knowledge file's validated model in the snapshot: its content, under these models."""
    return hashlib.sha256(models.encode() + b"\0" + data).hexdigest()


@cache
def _snapshot() -> dict[str, str]:
    """file digest -> cache text of the file's validated model, from nforensics/knowledge/catalogue.bin (zlib of
    marshal of strings, shipped in the package like its source); empty when missing or built under other
    models."""
    try:
        shipped = marshal.loads(zlib.decompress(SNAPSHOT_FILE.read_bytes()))
        fresh = isinstance(shipped, dict) and shipped.get("models") == models_digest()
        return dict(shipped["files"]) if fresh else {}
    except (OSError, ValueError, EOFError, TypeError, KeyError, zlib.error):
        return {}


def _shipped(paths: list[Path], model: type[Signature] | type[Family]) -> tuple[list[Any], str] | None:
    """The files' validated models and their cache text, each taken from the snapshot when it was built from
    this very file, else validated now: the first run after installing does not validate the catalogue
    (~200 ms). None without a snapshot."""
    snapshot = _snapshot()
    if not snapshot:
        return None
    models, texts = models_digest(), []
    for path in paths:
        try:
            text = snapshot.get(file_digest(models, path.read_bytes()))
        except OSError:
            text = None  # _load_file says why it cannot be read
        texts.append(text if text is not None else encode(_load_file(path, model)))
    text = "[" + ",".join(texts) + "]"
    return decode(text), text


def _load_dir(directory: Path) -> list[Signature]:
    if not directory.is_dir():
        raise InputError(f"{directory}: signature pack folder not found")
    paths = sorted(directory.glob("*.toml"))
    inputs = stamp([directory, *paths, SCHEMA_FILE, ORDER_FILE])
    return remember("signatures", inputs, lambda: [_load_file(path) for path in paths], lambda: _shipped(paths, Signature))


def _load_families() -> dict[str, Family]:
    paths = sorted(FAMILIES_DIR.glob("*.toml"))
    families = remember("families", stamp([FAMILIES_DIR, *paths, SCHEMA_FILE, VOCABULARY_FILE]),
                        lambda: [_load_file(p, Family) for p in paths],
                        lambda: _shipped(paths, Family))
    return {family.id: family for family in families}


def build(signatures: Iterable[Signature], families: dict[str, Family] | None = None) -> KnowledgeBase:
    ordered: dict[str, Signature] = {}
    for signature in signatures:
        ordered[signature.id] = signature  # a later pack overrides a built-in signature with the same id
    by_code: dict[str, list[Signature]] = {}
    for signature in ordered.values():
        named = [*signature.match.codes, *signature.aliases, *([signature.code] if signature.code else [])]
        for code in {c.upper() for c in named}:
            by_code.setdefault(code, []).append(signature)
    order = RecognitionOrder(ordered)
    return KnowledgeBase(
        signatures=tuple(ordered.values()),
        order=order,
        by_code={code: order.sort(s) for code, s in by_code.items()},
        by_status=order.sort(s for s in ordered.values() if s.match.nrt_statuses),
        by_exit_code=order.sort(s for s in ordered.values() if s.match.exit_codes),
        families=families if families is not None else _load_families(),
    )


@cache
def builtin_kb() -> KnowledgeBase:
    """Only the catalogue shipped in nforensics/knowledge/signatures/ (what docs/signatures/ documents)."""
    return build(_load_dir(BUILTIN_DIR))


def _pack_folder(entry_point: EntryPoint) -> Path:
    """The folder an entry point of the pack group names: a package (its folder), a path, or a callable
    returning a path."""
    dist = getattr(entry_point.dist, "name", None)
    origin = f"signature pack entry point '{entry_point.name} = {entry_point.value}'" + (f" (from {dist})" if dist else "")
    try:
        target = entry_point.load()
    except Exception as exc:  # whatever the pack's import raises, the user needs its name, not a traceback
        raise InputError(f"{origin}: cannot be loaded ({type(exc).__name__}: {exc})") from None
    if isinstance(target, ModuleType):
        if not hasattr(target, "__path__"):
            raise InputError(f"{origin}: names a module; it must name a package whose folder holds the TOML files")
        return Path(next(iter(target.__path__)))
    if callable(target):
        target = target()
    if isinstance(target, (str, PathLike)):
        return Path(target)
    raise InputError(f"{origin}: gives a {type(target).__name__}, not a folder of TOML files")


@cache
def installed_packs() -> tuple[Path, ...]:
    """Folders of the signature packs that installed distributions declare under the entry point group
    `nforensics.signatures`, e.g. `[project.entry-points."nforensics.signatures"] team = "team_kb"`."""
    # Installing or removing a distribution changes its site-packages folder's mtime: that is the stamp. The
    # working folder (`python -m`, pytest) is left out: logs written there would change the stamp every run.
    try:
        here = os.getcwd()
    except OSError:  # the working folder was deleted under the run
        here = ""
    folders = remember("packs", stamp(Path(entry) for entry in sys.path if entry and entry != here), _scan_entry_points)
    return tuple(Path(folder) for folder in folders)


def _scan_entry_points() -> tuple[str, ...]:
    from importlib.metadata import entry_points

    found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)
    return tuple(str(_pack_folder(ep)) for ep in found)


@cache
def _with_packs(folders: tuple[str, ...]) -> KnowledgeBase:
    signatures = list(builtin_kb().signatures)
    for folder in folders:
        pack = _load_dir(Path(folder))
        if not pack:
            raise InputError(f"{folder}: no *.toml signature files in this pack folder")
        signatures.extend(pack)
    return replace(build(signatures), pack_folders=folders)


def load_kb(extra_dirs: Sequence[Path | str] = ()) -> KnowledgeBase:
    """The built-in catalogue, then the installed packs (entry points), then the given folders (--kb).
    A later pack's signature replaces an earlier one with the same id."""
    folders = tuple(str(folder) for folder in (*installed_packs(), *extra_dirs))
    return _with_packs(folders) if folders else builtin_kb()
