"""What `explain` and `run` share for CI use: which inputs to read, which formats to write where.

`--format NAME[=FILE]` may repeat: one run of a CI step can print annotations for the log, write SARIF for
code scanning and JUnit for the test widget at once. Without FILE a format goes to the stream the
command chooses (stdout for `explain`; stderr for `run`, whose stdout belongs to the wrapped command).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, TextIO

from forensics.errors import InputError
from forensics.records import Analysis

if TYPE_CHECKING:
    from forensics.pipeline import Artifacts
    from forensics.redact import Redactor
from forensics.render import RENDERERS, render


@dataclass(frozen=True)
class FormatRequest:
    name: str
    file: str | None = None  # None: the command's default stream


def parse_formats(specs: list[str]) -> list[FormatRequest]:
    requests = []
    for spec in specs:
        name, _, file = spec.partition("=")
        name = name.strip().lower()
        if name not in RENDERERS:
            raise InputError(f"unknown format {name!r}: choose from {', '.join(RENDERERS)} (as NAME or NAME=FILE)")
        if "=" in spec and not file:
            raise InputError(f"--format {spec}: give a file name after '=' or leave '=' out for standard output")
        requests.append(FormatRequest(name, file or None))
    return requests


def _folder_files(folder: Path, pattern: str) -> Iterator[Path]:
    """Files under `folder` matching `pattern`, recursively, sorted, skipping hidden files and folders."""
    for path in sorted(folder.rglob(pattern)):
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts):
            yield path


def analyze_inputs(specs: list[str], pattern: str = "*", kb_dirs: Sequence[Path | str] = (),
                   artifacts: Artifacts | None = None) -> tuple[list[Analysis], list[str]]:
    """Analyses of the named files, of every file in the named folders, and of stdin for `-`.

    A file named on the command line that cannot be read is an input error. A file found inside a folder
    that cannot be read (a NEFF next to the logs, say) is skipped and reported in the second list, so one
    stray binary does not hide the failures in the other logs. `kb_dirs` are extra signature packs (--kb).
    """
    from forensics.pipeline import analyze_path

    if specs.count("-") > 1:
        raise InputError("standard input ('-') can be read only once")
    analyses, skipped = [], []
    for spec in specs:
        folder = Path(spec)
        if spec == "-" or not folder.is_dir():
            analyses.append(analyze_path(spec, kb_dirs=kb_dirs, artifacts=artifacts))
            continue
        files = list(_folder_files(folder, pattern))
        if not files:
            raise InputError(f"{spec}: no files matching {pattern!r} in this folder")
        for path in files:
            try:
                analyses.append(analyze_path(str(path), kb_dirs=kb_dirs, artifacts=artifacts))
            except InputError as exc:
                skipped.append(str(exc))
    return analyses, skipped


def render_to(analyses: list[Analysis], request: FormatRequest, env: Mapping[str, str], color: bool = False) -> str:
    """The text of one format; `github` also appends its job summary to $GITHUB_STEP_SUMMARY when set."""
    text = render(analyses, request.name, color=color)
    if request.name == "github" and (summary_file := env.get("GITHUB_STEP_SUMMARY")):
        from forensics.render.github import render_summary

        write_file(summary_file, render_summary(analyses) + "\n", append=True)
    return text


def open_output(file: str | Path, mode: str = "w") -> IO:
    """Open a file the user asked us to write, creating its folder; InputError (exit 2) when that fails."""
    path = Path(file)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open(mode, encoding=None if "b" in mode else "utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {file}: {exc.strerror or exc}") from None


def write_file(file: str | Path, text: str, *, append: bool = False) -> None:
    with open_output(file, "a" if append else "w") as handle:
        try:
            handle.write(text)
        except OSError as exc:  # disk full, quota
            raise InputError(f"cannot write {file}: {exc.strerror or exc}") from None


def redact_analyses(analyses: Sequence[Analysis], redactor: Redactor | None = None) -> list[Analysis]:
    """The analyses with every string read from the log redacted (the report's redactor), for CI output:
    annotations, job summaries, SARIF and PR comments are often public. An input path the user named
    stays as it is (CI systems point at it); a `<run: ...>` command line or `<stdin>` is redacted too."""
    from forensics.redact import Redactor

    redactor = redactor or Redactor()
    redacted = []
    for analysis in analyses:
        for finding in analysis.findings:  # a secret wrapped across two evidence lines, learned whole
            lines = sorted((e.line, e.text) for e in finding.evidence if e.line)
            for (first, text), (second, following) in zip(lines, lines[1:], strict=False):
                if second == first + 1:
                    redactor.redact(f"{text}\n{following}")
        data = redactor.redact_tree(analysis.model_dump(mode="json"))
        if Path(analysis.source).is_file():
            data["source"] = analysis.source
        redacted.append(Analysis.model_validate(data))
    return redacted


def write_outputs(
    analyses: list[Analysis],
    requests: list[FormatRequest],
    stream: TextIO,
    env: Mapping[str, str] = os.environ,
    redact: bool = True,
) -> None:
    """Write each requested format; log text is redacted unless `redact` is False (`--no-redact`)."""
    if redact and requests:
        analyses = redact_analyses(analyses)
    for request in requests:
        color = request.name == "text" and not request.file and stream.isatty()
        text = render_to(analyses, request, env, color)
        if request.file:
            write_file(request.file, text)
        else:
            stream.write(text)
            stream.flush()


def exit_code(analyses: list[Analysis], exit_zero: bool) -> int:
    """0 nothing recognised, 1 failure(s) diagnosed; `--exit-zero` keeps an advisory CI step green."""
    return 0 if exit_zero or not any(a.findings for a in analyses) else 1
