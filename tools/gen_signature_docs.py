"""Write docs/signatures/ and docs/families/ (a page each, and an index) from the knowledge TOML files.

    python tools/gen_signature_docs.py            # regenerate (removes pages of deleted signatures)
    python tools/gen_signature_docs.py --check    # exit 1 if a page is stale or a signature is incomplete

The pages are the same Markdown entries `nforensics codes <code>` prints (nforensics/render/catalogue.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nforensics.diagnose.versions import catalogue_fixed_in  # noqa: E402
from nforensics.knowledge import builtin_kb  # noqa: E402
from nforensics.knowledge.docs import missing_sections  # noqa: E402
from nforensics.render.catalogue import docs_pages  # noqa: E402
from nforensics.render.family_docs import family_pages  # noqa: E402

DOCS_DIR = REPO / "docs" / "signatures"
FAMILY_DOCS_DIR = REPO / "docs" / "families"


def stale_pages(pages: dict[str, str], out_dir: Path) -> list[str]:
    """Pages that differ from what would be generated, are missing, or belong to no signature."""
    on_disk = {p.name for p in out_dir.glob("*.md")} if out_dir.is_dir() else set()
    stale = [name for name, text in pages.items()
             if name not in on_disk or (out_dir / name).read_text(encoding="utf-8") != text]
    return sorted(stale + list(on_disk - set(pages)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale pages and incomplete signatures")
    parser.add_argument("--out", type=Path, default=DOCS_DIR, help="output folder (default docs/signatures)")
    parser.add_argument("--families-out", type=Path, default=FAMILY_DOCS_DIR, help="default docs/families")
    args = parser.parse_args(argv)

    kb = builtin_kb()
    signatures = kb.signatures
    sets = [(docs_pages(signatures, catalogue_fixed_in(signatures)), args.out),
            (family_pages(list(kb.families.values())), args.families_out)]
    if args.check:
        problems = [f"{s.id}: {p}" for s in signatures for p in missing_sections(s)]
        problems += [f"{out / name}: stale, run python tools/gen_signature_docs.py"
                     for pages, out in sets for name in stale_pages(pages, out)]
        print("\n".join(problems) or f"{len(signatures)} signatures and {len(kb.families)} families documented, docs up to date")
        return 1 if problems else 0
    for pages, out in sets:
        out.mkdir(parents=True, exist_ok=True)
        for name in set(p.name for p in out.glob("*.md")) - set(pages):
            (out / name).unlink()
        for name, text in pages.items():
            (out / name).write_text(text, encoding="utf-8")
        print(f"wrote {len(pages)} pages to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
