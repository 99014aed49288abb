"""HLO modules for explain: the files given with --hlo, and the ones a log names that are on this machine.

torch-neuronx, NxD and optimum-neuron print where the graph they hand neuronx-cc lives: the compile workdir
(`.../neuroncc_compile_workdir/<uuid>/model.MODULE_<hash>.hlo_module.pb`, also named by "Diagnostic logs stored
in .../<uuid>/log-neuron-cc.txt") and the compile-cache entry (`.../neuronxcc-<ver>/MODULE_<hash>/`, holding
`model.hlo_module.pb`, named by "Got a cached failed neff at .../model.neff"). When the log was read on the
machine that compiled, those files are still there, and explain reads them without being asked: bounded (at
most AUTO_MODULES modules of AUTO_MAX_BYTES each, so a huge graph never slows an explanation down), and a
module that cannot be read is one note on the analysis, never an error.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from nforensics.errors import InputError
from nforensics.records import ArtifactRead, SourceLine

if TYPE_CHECKING:  # the readers load protobuf and the HLO grammar: only when a module is there to read
    from nforensics.artifacts.hlo_evidence import Observations

AUTO_MAX_BYTES = 4 << 20  # a module read without being asked: ~1 s of reading at most (docs/hlo.md, Speed)
AUTO_MODULES = 2  # modules read without being asked, per input
_CANDIDATES = 32  # distinct paths considered per input
_MARKERS = ("hlo_module.pb", "MODULE_", "neuroncc_compile_workdir")
_TOKEN = re.compile(r"[^\s'\"`()\[\]{}<>,;=|]+")  # a path as printed: up to a space, quote or bracket
_CACHE_ENTRY = re.compile(r"/MODULE_[0-9a-f]+(?:\+[0-9a-f]+)?(?=/|$)")
_WORKDIR = re.compile(r"/neuroncc_compile_workdir/[\w.-]+(?=/|$)")
_FAILURE = re.compile(r"(?i)fail|error")
_CACHE_FILES = ("model.hlo_module.pb", "model.hlo.pb")


def read_modules(paths: Sequence[Path]) -> tuple[Observations, list[ArtifactRead]]:
    """The facts of the modules given on the command line (explain --hlo): an InputError when one cannot be read,
    like any named input."""
    from nforensics.artifacts.hlo import read_hlo
    from nforensics.artifacts.hlo_evidence import merge, observations

    reports = [read_hlo(path) for path in paths]
    reads = [ArtifactRead.model_construct(kind="hlo", path=str(path), line=None, read=True,
                                          note=f"{report.instructions} instructions")
             for path, report in zip(paths, reports, strict=True)]
    return merge([observations(report) for report in reports]), reads


def named_modules(retained: Iterable[SourceLine]) -> list[tuple[int, Path]]:
    """(line, module file) for each HLO module the log names that exists here: a failure's line first, then
    the latest named, at most AUTO_MODULES + a few (the rest is never looked at)."""
    named: dict[str, tuple[bool, int]] = {}
    for source in retained:
        text = source.text
        if not any(marker in text for marker in _MARKERS):
            continue
        failing = bool(_FAILURE.search(text))
        for token in _TOKEN.findall(text):
            place = _place(token.rstrip(".:"))
            if place and (place not in named or failing):
                named[place] = (failing, source.line)
        if len(named) >= _CANDIDATES:
            break
    ordered = sorted(named.items(), key=lambda item: (not item[1][0], -item[1][1]))
    found: list[tuple[int, Path]] = []
    for place, (_, line) in ordered:
        for module in _modules_at(Path(place)):
            if all(module != seen for _, seen in found):
                found.append((line, module))
    return found


def _place(token: str) -> str | None:
    """The file or folder a printed path names: a module file, a cache entry or a compile workdir."""
    if not token.startswith("/"):
        return None
    if token.endswith("hlo_module.pb"):
        return token
    for shape in (_CACHE_ENTRY, _WORKDIR):
        match = shape.search(token)
        if match:
            return token[:match.end()]
    return None


def _modules_at(place: Path) -> list[Path]:
    if place.name.endswith("hlo_module.pb"):
        return [place] if _is_file(place) else []
    if place.name.startswith("MODULE_"):
        return [place / name for name in _CACHE_FILES if _is_file(place / name)][:1]
    try:  # a workdir: its module files (one per graph compiled there)
        with os.scandir(place) as entries:
            names = sorted(e.name for e in entries if e.name.endswith("hlo_module.pb"))
    except OSError:
        return []
    return [place / name for name in names[:AUTO_MODULES] if _is_file(place / name)]


def _is_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)  # never a FIFO or device a log names
    except OSError:
        return False


def auto_modules(retained: Iterable[SourceLine]) -> tuple[Observations, list[ArtifactRead]]:
    """The facts of the modules the log names that are on this machine, and a record of each (read or not)."""
    named = named_modules(retained)[:AUTO_MODULES]
    if not named:
        return {}, []
    from nforensics.artifacts.hlo_evidence import merge

    facts: list[Observations] = []
    reads: list[ArtifactRead] = []
    for line, path in named:
        found, read = read_bounded(path, line)
        reads.append(read)
        if found is not None:
            facts.append(found)
    return merge(facts), reads


def read_bounded(path: Path, line: int | None = None) -> tuple[Observations | None, ArtifactRead]:
    """One module read without being asked (named in a log, a cache entry): never more than AUTO_MAX_BYTES,
    never an exception; what went wrong is the record's note."""
    from nforensics.artifacts.hlo import read_hlo
    from nforensics.artifacts.hlo_evidence import observations

    def skipped(note: str) -> tuple[None, ArtifactRead]:
        return None, ArtifactRead.model_construct(kind="hlo", path=str(path), line=line, read=False, note=note)

    try:
        size = path.stat().st_size
        if size > AUTO_MAX_BYTES:
            return skipped(f"{size / 2**20:.0f} MB, more than the {AUTO_MAX_BYTES >> 20} MB read without asking: "
                           "pass it with --hlo to read it")
        report = read_hlo(path, limit=4 * AUTO_MAX_BYTES)
    except InputError as error:
        return skipped(f"not read: {str(error).removeprefix(f'{path}: ')}")
    except OSError as error:
        return skipped(f"not read: {error.strerror or error}")
    except Exception as error:  # a module named by a log is a side read: it never stops the explanation
        return skipped(f"not read: {type(error).__name__}: {error}")
    return observations(report), ArtifactRead.model_construct(
        kind="hlo", path=str(path), line=line, read=True, note=f"{report.instructions} instructions")
