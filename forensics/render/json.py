"""The JSON contract of design.md: one object with schema_version and findings.

One input prints its Analysis; several print an AnalysisSet (each analysis, every finding with its
source, and the failures grouped by fingerprint). docs/schema.json is `json_schema()` of both shapes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from forensics.records import Analysis, AnalysisSet, FailureGroupRecord, GroupOccurrence, SourcedFinding
from forensics.render.groups import FailureGroup, group_findings


def _group(group: FailureGroup) -> FailureGroupRecord:
    finding = group.finding
    return FailureGroupRecord(
        fingerprint=group.fingerprint, signature=finding.signature, code=finding.code, title=finding.title,
        severity=finding.severity, count=group.count,
        inputs=[GroupOccurrence(source=o.source, line=o.line) for o in group.occurrences],
    )


def render_json(analyses: Sequence[Analysis]) -> str:
    if len(analyses) == 1:
        return analyses[0].model_dump_json(indent=2) + "\n"
    document = AnalysisSet(
        inputs=list(analyses),
        findings=[SourcedFinding(**f.model_dump(), source=a.source) for a in analyses for f in a.findings],
        groups=[_group(g) for g in group_findings(list(analyses))],
    )
    return document.model_dump_json(indent=2) + "\n"


def json_schema() -> dict:
    """The JSON Schema of `--format json` (published as docs/schema.json), generated from the models."""
    from pydantic import TypeAdapter

    schema = TypeAdapter(Analysis | AnalysisSet).json_schema(mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "nforensics explain --format json",
        "description": "One input: an Analysis. Several inputs: an AnalysisSet. Both carry schema_version.",
        **schema,
    }


def json_schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
