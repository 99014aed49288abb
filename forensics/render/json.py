"""The JSON contract of design.md: one object with schema_version and findings."""

from __future__ import annotations

import json
from collections.abc import Sequence

from forensics.records import SCHEMA_VERSION, Analysis


def render_json(analyses: Sequence[Analysis]) -> str:
    if len(analyses) == 1:
        return analyses[0].model_dump_json(indent=2) + "\n"
    document = {"schema_version": SCHEMA_VERSION, "inputs": [a.model_dump(mode="json") for a in analyses],
                "findings": [f.model_dump(mode="json") | {"source": a.source} for a in analyses for f in a.findings]}
    return json.dumps(document, indent=2) + "\n"
