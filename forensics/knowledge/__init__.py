"""The signature catalogue: TOML files in forensics/knowledge/signatures/, plus extra packs (--kb DIR)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from pydantic import ValidationError

from forensics.errors import InputError
from forensics.knowledge.schema import Signature

BUILTIN_DIR = Path(__file__).resolve().parent / "signatures"


@dataclass(frozen=True)
class KnowledgeBase:
    signatures: tuple[Signature, ...]
    by_code: dict[str, tuple[Signature, ...]] = field(default_factory=dict)

    def get(self, key: str) -> Signature | None:
        """A signature by id or by code (case-insensitive), as `nforensics codes KEY` looks it up."""
        wanted = key.upper()
        for signature in self.signatures:
            if signature.id == key.lower() or (signature.code or "").upper() == wanted:
                return signature
        candidates = self.by_code.get(wanted)
        return candidates[0] if candidates else None


def _load_file(path: Path) -> Signature:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML ({exc})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return Signature.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise InputError(f"{path}: field '{where}': {first['msg']}") from None


def _load_dir(directory: Path) -> list[Signature]:
    if not directory.is_dir():
        raise InputError(f"{directory}: signature pack folder not found")
    return [_load_file(path) for path in sorted(directory.glob("*.toml"))]


def build(signatures: Iterable[Signature]) -> KnowledgeBase:
    ordered: dict[str, Signature] = {}
    for signature in signatures:
        ordered[signature.id] = signature  # a later pack overrides a built-in signature with the same id
    by_code: dict[str, list[Signature]] = {}
    for signature in ordered.values():
        for code in {c.upper() for c in [*signature.match.codes, *signature.aliases, *([signature.code] if signature.code else [])]}:
            by_code.setdefault(code, []).append(signature)
    return KnowledgeBase(
        signatures=tuple(ordered.values()),
        by_code={code: tuple(sorted(s, key=lambda s: -s.match.priority)) for code, s in by_code.items()},
    )


@cache
def _builtin() -> KnowledgeBase:
    return build(_load_dir(BUILTIN_DIR))


def load_kb(extra_dirs: Sequence[Path | str] = ()) -> KnowledgeBase:
    """The built-in catalogue plus the given packs."""
    if not extra_dirs:
        return _builtin()
    signatures = list(_builtin().signatures)
    for directory in extra_dirs:
        signatures.extend(_load_dir(Path(directory)))
    return build(signatures)
