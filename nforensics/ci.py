"""What `explain` and `run` share for CI use: which inputs to read, which formats to write where.

`--format NAME[=FILE]` may repeat: one run of a CI step can print annotations for the log, write SARIF for
code scanning and JUnit for the test widget at once. Without FILE a format goes to the stream the
command chooses (stdout for `explain`; stderr for `run`, whose stdout belongs to the wrapped command).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TextIO

from nforensics.errors import InputError
from nforensics.records import Analysis

if TYPE_CHECKING:
    from nforensics.redact import Redactor
from nforensics.render import RENDERERS, render
from nforensics.render.style import wants_color, width_for


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


def one_per_stream(requests: list[FormatRequest], stream: str) -> None:
    """Two formats interleaved on one stream can be read as neither: give all but one a file."""
    unnamed = [request.name for request in requests if not request.file]
    if len(unnamed) > 1:
        raise InputError(f"--format {' and --format '.join(unnamed)} would both write to {stream}: "
                         f"give all but one a file (NAME=FILE)")


def render_to(analyses: list[Analysis], request: FormatRequest, env: Mapping[str, str], color: bool = False) -> str:
    """The text of one format; `github` also appends its job summary to $GITHUB_STEP_SUMMARY when set."""
    text = render(analyses, request.name, color=color)
    if request.name == "github" and (summary_file := env.get("GITHUB_STEP_SUMMARY")):
        from nforensics.render.github import render_summary

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


def redact_analysis(analysis: Analysis, redactor: Redactor) -> dict:
    """The analysis as JSON data with every string read from the log redacted, for CI output: annotations,
    job summaries, SARIF and PR comments are often public. An input path the user named stays as it is (CI
    systems point at it); a `<run: ...>` command line or `<stdin>` is redacted too."""
    # An environment variable read from the log is a key and a value apart: seen as the `KEY=value` the log
    # printed, a secret's key name (`..._PASSWORD`, `..._TOKEN`) teaches the redactor its value.
    for key, value in analysis.environment.env_vars.items():
        redactor.redact(f"{key}={value}")
    for finding in analysis.findings:  # a secret wrapped across two evidence lines, learned whole
        lines = sorted((e.line, e.text) for e in finding.evidence if e.line)
        for (first, text), (second, following) in zip(lines, lines[1:], strict=False):
            if second == first + 1:
                redactor.redact(f"{text}\n{following}")
    data = redactor.redact_tree(analysis.model_dump(mode="json"))
    if Path(analysis.source).is_file():
        data["source"] = analysis.source
    return data


def redact_analyses(analyses: Sequence[Analysis], redactor: Redactor | None = None) -> list[Analysis]:
    """The analyses redacted by one redactor (the report's): the same secret, the same placeholder."""
    from nforensics.redact import Redactor

    redactor = redactor or Redactor()
    return [Analysis.model_validate(redact_analysis(analysis, redactor)) for analysis in analyses]


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
    stream_outputs(analyses, requests, stream, env)


_STREAMED = ("json", "text")  # formats written as each analysis arrives; the others need every analysis


def stream_outputs(analyses: Iterable[Analysis], requests: list[FormatRequest], stream: TextIO,
                   env: Mapping[str, str] = os.environ) -> bool:
    """Write each requested format of these analyses (redacted already, or not, as the caller chose); True
    when any failure was diagnosed. JSON and text are written input by input, so a folder of any size
    is written in bounded memory; the CI formats group every input, so they are written at the end (and so
    is everything when several formats share the stream)."""
    if any(request.name not in _STREAMED for request in requests) or sum(not r.file for r in requests) > 1:
        collected = list(analyses)
        for request in requests:
            color = request.name == "text" and not request.file and wants_color(stream)
            _emit(request, stream, render_to(collected, request, env, color))
        return any(analysis.failures() for analysis in collected)  # a warning or a note alone is no failure
    writers = [(request, _writer(request, stream), open_output(request.file) if request.file else stream)
               for request in requests]
    diagnosed = False
    try:
        for analysis in analyses:
            diagnosed = diagnosed or bool(analysis.failures())
            for _, writer, sink in writers:
                _write(sink, writer.add(analysis), stream)
        for _, writer, sink in writers:
            for piece in writer.close():
                _write(sink, piece, stream)
    finally:
        for request, _, sink in writers:
            if request.file:
                sink.close()
    return diagnosed


def _writer(request: FormatRequest, stream: TextIO) -> Any:
    if request.name == "json":
        from nforensics.render.json import JsonWriter

        return JsonWriter()
    from nforensics.render.terminal import TextWriter

    if request.file:
        return TextWriter(color=False)
    return TextWriter(color=wants_color(stream), width=width_for(stream))


def _write(sink: IO, text: str, stream: TextIO) -> None:
    if not text:
        return
    try:
        sink.write(text)
    except BrokenPipeError:
        raise  # the reader has gone (`| head`): no error of ours; click ends the run quietly (exit 1)
    except OSError as exc:  # disk full, quota
        raise InputError(f"cannot write {getattr(sink, 'name', 'output')}: {exc.strerror or exc}") from None
    if sink is stream:
        stream.flush()


def _emit(request: FormatRequest, stream: TextIO, text: str) -> None:
    if request.file:
        write_file(request.file, text)
    else:
        stream.write(text)
        stream.flush()


def exit_code(analyses: list[Analysis], exit_zero: bool) -> int:
    """0 nothing recognised (or warnings only), 1 failure(s) diagnosed; `--exit-zero` keeps an advisory CI step green."""
    return exit_status(any(a.failures() for a in analyses), exit_zero)


def exit_status(diagnosed: bool, exit_zero: bool) -> int:
    return 0 if exit_zero or not diagnosed else 1
