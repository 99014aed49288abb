"""Turn staged public issue threads into the case base (nforensics/knowledge/cases/*.jsonl, one file per repository).

A staged thread (one JSON object per line; see `--help`) carries the thread's error paste verbatim. The case
base must not: each case keeps only the paste's error lines masked by the project's own masking (the same
that fingerprints and message templates use), which is all that matching needs, plus the facts of the thread
(title, state, dates, versions), where the paste's traceback was raised (frames inside their packages and
the exception, read by the project's own parser) and what the maintainers said, already written in our own words.

Run: .venv/bin/python tools/import_cases.py STAGED.jsonl... [--out nforensics/knowledge/cases] [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nforensics.diagnose.similar import failure_site, is_message  # noqa: E402
from nforensics.ingest import text_lines  # noqa: E402
from nforensics.knowledge import load_kb  # noqa: E402
from nforensics.knowledge.cases import Case  # noqa: E402
from nforensics.masking import mask  # noqa: E402
from nforensics.parse import assemble  # noqa: E402
from nforensics.vocabulary import PRINTED_CODE, reads_as_failure  # noqa: E402

OUT = REPO / "nforensics" / "knowledge" / "cases"
MAX_TEMPLATES = 8
MAX_TEMPLATE_CHARS = 240


def templates_of(excerpt: str) -> list[str]:
    """The excerpt's error lines, masked: lines that read as a failure or print a code, not the furniture of a
    traceback or a log (similar.is_message);
    the last ones first (where a paste's failure is), at most MAX_TEMPLATES."""
    lines = [line.strip() for line in excerpt.splitlines() if line.strip()]
    wanted = [line for line in lines if (reads_as_failure(line) or PRINTED_CODE.search(line)) and is_message(line)]
    masked: list[str] = []
    for line in reversed(wanted or lines[-2:]):
        template = mask(line[:MAX_TEMPLATE_CHARS]).strip()[:MAX_TEMPLATE_CHARS]  # masks can lengthen a line
        if template not in masked:
            masked.append(template)
    return masked[:MAX_TEMPLATES]


def case_of(staged: dict) -> Case:
    excerpt = staged.get("error_excerpt") or ""
    frames, exception = failure_site(assemble(staged["url"], text_lines(excerpt))[0])
    return Case(
        repo=staged["repo"], number=staged["number"], url=staged["url"].rstrip("/"), title=staged["title"],
        state=staged.get("state"), opened=staged.get("opened"), closed=staged.get("closed"),
        versions={str(k): str(v) for k, v in (staged.get("versions") or {}).items()},
        instance=staged.get("instance"), component=staged["component"], family=staged["family"],
        signature=staged.get("signature"), codes=list(staged.get("codes") or []),
        templates=templates_of(excerpt or staged["title"]), frames=[mask(f) for f in frames], exception=exception,
        answer=staged.get("diagnosis"), workaround=staged.get("workaround"), fixed_in=staged.get("fixed_in"),
        maintainer_answered=bool(staged.get("maintainer_answered")),
    )


def file_name(repo: str) -> str:
    return repo.replace("/", "__") + ".jsonl"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("staged", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    kb = load_kb()
    cases: dict[tuple[str, int], Case] = {}
    for path in args.staged:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            case = case_of(json.loads(line))
            if case.family not in kb.families:
                sys.exit(f"{path}:{number}: unknown family {case.family!r}")
            if case.signature and case.signature not in {s.id for s in kb.signatures}:
                sys.exit(f"{path}:{number}: unknown signature {case.signature!r}")
            cases[(case.repo, case.number)] = case
    by_repo: dict[str, list[Case]] = {}
    for case in cases.values():
        by_repo.setdefault(case.repo, []).append(case)
    args.out.mkdir(parents=True, exist_ok=True)
    for repo, repo_cases in sorted(by_repo.items()):
        text = "".join(c.model_dump_json(exclude_defaults=True) + "\n" for c in sorted(repo_cases, key=lambda c: c.number))
        (args.out / file_name(repo)).write_text(text, encoding="utf-8")
    print(f"{len(cases)} cases from {len(by_repo)} repositories written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
