"""Validate the built-in catalogue (nforensics/knowledge/signatures/ and families/) ahead, into
nforensics/knowledge/catalogue.bin: zlib of marshal of strings (the disk cache's JSON text of each file's model).

The first `explain` after installing has no knowledge cache yet: it used to parse and validate every signature
and family file (~200 ms, a first run 1.6x a warm one). It now takes each file's validated model from this
snapshot, keyed by the sha256 of the file's content and of the models that validate it (knowledge/schema.py and
order.py), and validates only the files that changed since the snapshot was built. Like the parse tables, the
snapshot ships inside the package and holds data only: the JSON is rebuilt through the disk cache's
allow-list of models. Run this after changing a signature or family file, or schema.py / order.py (which
invalidate every entry), and before a release: a stale snapshot costs only a slower first run, which
bench/explain_latency.py measures and names.

    python tools/build_knowledge_snapshot.py            # rewrite the file
    python tools/build_knowledge_snapshot.py --check    # exit 1 if a file's entry is missing or stale
"""

from __future__ import annotations

import marshal
import sys
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nforensics import knowledge  # noqa: E402
from nforensics.knowledge.disk_cache import encode  # noqa: E402
from nforensics.knowledge.family_schema import Family  # noqa: E402
from nforensics.knowledge.schema import Signature  # noqa: E402


def sources() -> list[tuple[Path, type[Signature] | type[Family]]]:
    return ([(path, Signature) for path in sorted(knowledge.BUILTIN_DIR.glob("*.toml"))]
            + [(path, Family) for path in sorted(knowledge.FAMILIES_DIR.glob("*.toml"))])


def render() -> bytes:
    models = knowledge.models_digest()
    files = {knowledge.file_digest(models, path.read_bytes()): encode(knowledge._load_file(path, model))
             for path, model in sources()}
    return zlib.compress(marshal.dumps({"models": models, "files": files}, 4), 9)


def stale() -> list[str]:
    """The files whose validated model the shipped snapshot lacks (or the models changed: then all)."""
    shipped = knowledge._snapshot()
    models = knowledge.models_digest()
    return [path.name for path, _ in sources() if knowledge.file_digest(models, path.read_bytes()) not in shipped]


def main() -> int:
    if "--check" in sys.argv[1:]:
        missing = stale()
        if missing:
            sys.stderr.write(f"{knowledge.SNAPSHOT_FILE.name} is stale for {', '.join(missing)}: "
                             "run python tools/build_knowledge_snapshot.py\n")
            return 1
        return 0
    knowledge.SNAPSHOT_FILE.write_bytes(render())
    print(f"wrote {knowledge.SNAPSHOT_FILE.relative_to(REPO)} ({knowledge.SNAPSHOT_FILE.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
