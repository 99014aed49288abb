"""`explain` of many inputs: files named on the command line, every file of a folder, and stdin, analysed on
every core (a process pool over files, `--jobs`) and handed on one by one in input order, so memory does not
grow with the number of files.

Each worker analyses and redacts one input at a time. Redaction with one Redactor per run (the same secret
gets the same placeholder in every input) would make the parent redact everything alone, as long as the
analyses themselves take; so each input is redacted on its own and the parent renumbers the placeholders in
input order: the same value gets the same placeholder across inputs, as before. What one input's redaction
learned (a secret, a user name) still masks every later input: the parent masks the values it has been told
of wherever they appear again, as one Redactor would.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from nforensics.ci import redact_analysis
from nforensics.errors import InputError
from nforensics.ingest import check_readable
from nforensics.pipeline import Artifacts, analyze_path
from nforensics.records import Analysis
from nforensics.walk import map_strings
from nforensics.redact import MIN_KNOWN, PLACEHOLDER, PLACEHOLDER_PREFIX, Redactor, placeholder_text

_CHUNK = 8  # inputs per task sent to a worker: small logs take ~20 ms each, the round trip ~0.1 ms
_WINDOW = 16  # tasks per worker in one batch: what bounds the results held while the parent writes


def default_jobs() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _folder_files(folder: Path, pattern: str) -> list[Path]:
    """Files under `folder` matching `pattern`, recursively, sorted, skipping hidden files and folders."""
    return [path for path in sorted(folder.rglob(pattern))
            if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)]


def input_files(specs: Sequence[str], pattern: str = "*") -> list[tuple[str, bool]]:
    """(input, named on the command line) for each file to read, in order; '-' is standard input."""
    if list(specs).count("-") > 1:
        raise InputError("standard input ('-') can be read only once")
    found: list[tuple[str, bool]] = []
    for spec in specs:
        folder = Path(spec)
        if spec == "-" or not folder.is_dir():
            found.append((spec, True))
            continue
        files = _folder_files(folder, pattern)
        if not files:
            raise InputError(f"{spec}: no files matching {pattern!r} in this folder")
        found += [(str(path), False) for path in files]
    return found


# ---------------------------------------------------------------- one input (in a worker or in this process)

_kb_dirs: tuple[str, ...] = ()
_artifacts: Artifacts | None = None
_redact = True


def _configure(kb_dirs: tuple[str, ...], artifacts: Artifacts | None, redact: bool) -> None:
    global _kb_dirs, _artifacts, _redact
    _kb_dirs, _artifacts, _redact = kb_dirs, artifacts, redact


def _analyze(item: tuple[str, bool]) -> tuple[str, Any, dict[str, str]]:
    """("ok", analysis, placeholders issued) or ("skipped" | "error", message, {})."""
    spec, named = item
    try:
        analysis = analyze_path(spec, kb_dirs=_kb_dirs, artifacts=_artifacts)
    except InputError as exc:  # a named file that cannot be read stops the run; one inside a folder is skipped
        return ("error" if named else "skipped"), str(exc), {}
    except Exception as exc:  # noqa: BLE001 - a bug met on one input must not lose the others' results
        return ("error" if named else "skipped"), f"{spec}: internal error ({type(exc).__name__}: {exc}); please report it", {}
    if not _redact:
        return "ok", analysis, {}
    redactor = Redactor()
    return "ok", redact_analysis(analysis, redactor), redactor.placeholders


def _analyze_chunk(items: list[tuple[str, bool]]) -> list[tuple[str, Any, dict[str, str]]]:
    return [_analyze(item) for item in items]


# ---------------------------------------------------------------- the run


class _Renumbering:
    """Placeholders issued per input, renumbered in input order as one Redactor would have issued them."""

    def __init__(self) -> None:
        self.issued: dict[str, str] = {}  # secret value -> placeholder in the output
        self.per_kind: Counter[str] = Counter()

    def apply(self, data: Any, local: dict[str, str]) -> Any:
        mapping = {}
        for value, placeholder in local.items():  # in the order this input's redactor issued them
            if value not in self.issued:
                kind = placeholder[len(PLACEHOLDER_PREFIX):-1].rpartition("-")[0]
                self.per_kind[kind] += 1
                self.issued[value] = placeholder_text(kind, self.per_kind[kind])
            if self.issued[value] != placeholder:
                mapping[placeholder] = self.issued[value]
        data = _replace(data, mapping) if mapping else data
        # What an earlier input's redaction learned (a password seen once as PASSWORD=..., a user name)
        # masks this input too, where none of its own rules saw it: as one Redactor over the run would.
        earlier = sorted((v for v in self.issued if v not in local and len(v) >= MIN_KNOWN), key=len, reverse=True)
        if not earlier:
            return data
        known = re.compile("|".join(map(re.escape, earlier)))
        masked = map_strings(data, lambda text: known.sub(lambda m: self.issued[m.group(0)], text))
        if isinstance(masked, dict) and isinstance(data, dict) and "source" in data:
            masked["source"] = data["source"]  # a path the user named stays as given (redact_analysis)
        return masked


def _replace(value: Any, mapping: dict[str, str]) -> Any:
    return map_strings(value, lambda text: PLACEHOLDER.sub(lambda m: mapping.get(m.group(0), m.group(0)), text)
                 if PLACEHOLDER_PREFIX in text else text)


def analyses(specs: Sequence[str], pattern: str = "*", kb_dirs: Sequence[Path | str] = (),
             artifacts: Artifacts | None = None, *, jobs: int = 1, redact: bool = True,
             skipped: list[str] | None = None) -> Iterator[Analysis]:
    """The analysis of each input, in input order, redacted unless `redact` is False. A file inside a folder
    that cannot be read (a NEFF beside the logs) is left out and its reason added to `skipped`; a file named
    on the command line that cannot be read is an InputError. `jobs` > 1 analyses files in that many worker
    processes; standard input is always read here."""
    items = input_files(specs, pattern)
    if len(items) > 1:  # output is written as the analyses come: a named file that cannot be read stops it first
        for spec, named in items:
            if named and spec != "-":
                check_readable(spec)
    _configure(tuple(str(d) for d in kb_dirs), artifacts, redact)
    renumbering = _Renumbering()
    read, reasons = 0, []
    for status, value, local in _results(items, jobs):
        if status == "error":
            raise InputError(value)
        if status == "skipped":
            reasons.append(value)
            if skipped is not None:
                skipped.append(value)
            continue
        read += 1
        yield Analysis.model_validate(renumbering.apply(value, local)) if redact else value
    if not read and reasons:  # a folder of nothing readable is a folder of nothing, like an empty one
        raise InputError(f"no file could be read: {len(reasons)} skipped (the first: {reasons[0]})")


def _results(items: list[tuple[str, bool]], jobs: int) -> Iterator[tuple[str, Any, dict[str, str]]]:
    files = sum(1 for spec, _ in items if spec != "-")
    if jobs <= 1 or files <= 1:
        yield from map(_analyze, items)
        return
    import multiprocessing

    from nforensics.knowledge import load_kb

    load_kb(_kb_dirs)  # loaded once here: forked workers start with it
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with context.Pool(min(jobs, files), initializer=_configure, initargs=(_kb_dirs, _artifacts, _redact)) as pool:
        pending = iter(items)
        while batch := list(islice(pending, _CHUNK * _WINDOW * jobs)):
            yield from _batch_results(pool, batch)


def _batch_results(pool: Any, batch: list[tuple[str, bool]]) -> Iterator[tuple[str, Any, dict[str, str]]]:
    """One batch in input order: runs of files go to the pool in chunks, standard input is read here."""
    run: list[tuple[str, bool]] = []
    for item in [*batch, None]:
        if item is not None and item[0] != "-":
            run.append(item)
            continue
        chunks = [run[i:i + _CHUNK] for i in range(0, len(run), _CHUNK)]
        for chunk in pool.imap(_analyze_chunk, chunks):
            yield from chunk
        run = []
        if item is not None:
            yield _analyze(item)
