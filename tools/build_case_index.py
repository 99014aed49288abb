"""Build the index of the built-in case base into nforensics/knowledge/cases.sqlite (SQLite with FTS5).

`explain` opens it read-only from the package, so the first run after installing does not tokenise every
case (about 100 ms), and a run with no cache folder of its own does not either. The file records a digest
of what it was built from (the case files and the code that tokenises them: nforensics/diagnose/similar.py
shipped_digest); when that differs, explain builds the index as before and keeps it in its cache folder.
Run this after changing a case file or the tokenisers; tests/test_cases.py fails while the file is stale.

    python tools/build_case_index.py            # rewrite the file
    python tools/build_case_index.py --check    # exit 1 if it is stale
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nforensics.diagnose.similar import SHIPPED_INDEX, CaseIndex, shipped_digest, shipped_index  # noqa: E402
from nforensics.knowledge.cases import cases_for  # noqa: E402


def main() -> int:
    if "--check" in sys.argv[1:]:
        if shipped_index() is not None:  # built from these very files, as explain checks it
            return 0
        print(f"{SHIPPED_INDEX} is stale: run python tools/build_case_index.py", file=sys.stderr)
        return 1
    partial = SHIPPED_INDEX.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    index = CaseIndex.build(cases_for(()), sqlite3.connect(":memory:"))
    index.db.executescript("CREATE TABLE built(digest TEXT); VACUUM;")
    index.db.execute("INSERT INTO built VALUES (?)", (shipped_digest(),))
    index.db.commit()
    with sqlite3.connect(partial) as target:
        index.db.backup(target)
    target.close()
    partial.replace(SHIPPED_INDEX)
    print(f"wrote {SHIPPED_INDEX} ({index.size} cases, {SHIPPED_INDEX.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
