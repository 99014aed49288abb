"""The JSON contract of design.md: one object with schema_version and findings.

Whatever the number of inputs (none, one, a folder of thousands), the output is an AnalysisSet: each
input's analysis, every finding with its source, and the failures grouped by fingerprint; a script reads
`.findings[]` and `.inputs[]` the same way for one log as for many. docs/schema.json is `json_schema()`.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Iterator, Sequence
from typing import IO

from nforensics.records import (
    SCHEMA_VERSION, Analysis, AnalysisSet, FailureGroupRecord, GroupOccurrence, Record, SourcedFinding,
)
from nforensics.render.groups import FailureGroup, GroupTally

COPY_BLOCK = 1 << 20  # characters of spooled findings copied at a time


def _group(group: FailureGroup) -> FailureGroupRecord:
    finding = group.finding
    return FailureGroupRecord(
        fingerprint=group.fingerprint, signature=finding.signature, code=finding.code, title=finding.title,
        severity=finding.severity, count=group.count,
        inputs=[GroupOccurrence(source=o.source, line=o.line) for o in group.occurrences],
    )


def render_json(analyses: Sequence[Analysis]) -> str:
    writer = JsonWriter()
    return "".join(writer.add(analysis) for analysis in analyses) + "".join(writer.close())


def _nested(model: Record) -> str:
    """A model as it prints inside a list of the top-level object: one level (4 spaces) further in."""
    return "    " + model.model_dump_json(indent=2).replace("\n", "\n    ")


class JsonWriter:
    """`--format json` written input by input as the analyses arrive, the same text as dumping the whole
    AnalysisSet at once. The findings, which print again after all the inputs, wait in a temporary file (in
    memory when no temporary folder is writable); the groups keep one finding per distinct failure."""

    def __init__(self) -> None:
        self.tally = GroupTally(keep_findings=False)
        self.findings: IO[str] | None = None
        self.spooled = 0  # findings written to it

    def add(self, analysis: Analysis) -> str:
        self.tally.add(analysis)
        head = f'{{\n  "schema_version": {json.dumps(SCHEMA_VERSION)},\n  "inputs": [\n' if self.tally.inputs == 1 else ",\n"
        return head + self._input(analysis)

    def _input(self, analysis: Analysis) -> str:
        if self.findings is None:
            self.findings = _spool()
        for finding in analysis.findings:
            sourced = SourcedFinding(**finding.model_dump(), source=analysis.source)
            self.findings.write((",\n" if self.spooled else "") + _nested(sourced))
            self.spooled += 1
        return _nested(analysis)

    def close(self) -> Iterator[str]:
        """The rest of the document, in pieces: the spooled findings are copied a block at a time, so a folder of
        any size is never held in memory whole."""
        if not self.tally.inputs:
            yield AnalysisSet(inputs=[], findings=[], groups=[]).model_dump_json(indent=2) + "\n"
            return
        assert self.findings is not None
        self.findings.seek(0)
        yield '\n  ],\n  "findings": [\n' if self.spooled else '\n  ],\n  "findings": ['
        while block := self.findings.read(COPY_BLOCK):
            yield block
        self.findings.close()
        yield "\n  ],\n" if self.spooled else "],\n"
        groups = ",\n".join(_nested(_group(g)) for g in self.tally.groups())
        yield f'  "groups": [\n{groups}\n  ]\n}}\n' if groups else '  "groups": []\n}\n'


def _spool() -> IO[str]:
    try:
        return tempfile.TemporaryFile("w+", encoding="utf-8")
    except OSError:
        return io.StringIO()


def json_schema() -> dict:
    """The JSON Schema of `--format json` (published as docs/schema.json), generated from the models."""
    from pydantic import TypeAdapter

    schema = TypeAdapter(AnalysisSet).json_schema(mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "nforensics explain --format json",
        "description": "One shape whatever the number of inputs: an AnalysisSet (each input's Analysis, every "
                       "finding with its source, the failures grouped by fingerprint), with schema_version.",
        **schema,
    }


def json_schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
