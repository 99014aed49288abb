"""GitLab Code Quality report (a JSON array, Code Climate subset) for the merge-request widget.

GitLab shows identical fingerprints once, so each entry's fingerprint combines our failure fingerprint
with its location: the same failure in two logs stays two entries, the same log on the next pipeline
keeps its fingerprint. Fields: ../shared/reference/ci-and-reports.md section 9.
"""

from __future__ import annotations

import hashlib
import json

from nforensics.records import Analysis
from nforensics.render.groups import label, occurrences

SEVERITY = {"error": "critical", "warning": "minor", "note": "info"}


def render_gitlab(analyses: list[Analysis]) -> str:
    issues = []
    for occurrence in occurrences(analyses):
        finding = occurrence.finding
        path = occurrence.path or occurrence.source
        key = f"{finding.fingerprint}\0{path}"
        issues.append(
            {
                "type": "issue",
                "description": label(finding),
                "content": {"body": finding.summary},
                "check_name": finding.signature,
                "categories": ["Bug Risk"],
                "fingerprint": hashlib.sha256(key.encode()).hexdigest()[:32],
                "severity": SEVERITY[finding.severity],
                "location": {"path": path, "lines": {"begin": occurrence.line or 1}},
            }
        )
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
