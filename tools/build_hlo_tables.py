"""Build the LALR tables of grammars/hlo/hlo.lark into nforensics/artifacts/hlo_tables.bin: zlib of marshal of plain
data, exactly as tools/build_parse_tables.py builds the log grammars' tables (read its docstring for why: no
pickle, no cache in the shared temp folder; loading the file builds data and runs nothing).

A file of its own, not an entry in nforensics/parse/tables.bin: `explain` loads that file at every start, and
only `nforensics hlo` needs this grammar. nforensics/artifacts/hlo_text.py uses the tables when they were built
from the current grammar text by the installed lark, and builds the parser from the grammar otherwise.
Run this after changing the grammar; tests/test_hlo_grammar.py fails while the file is stale.

    python tools/build_hlo_tables.py            # rewrite the file
    python tools/build_hlo_tables.py --check    # exit 1 if the tables are stale
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nforensics.artifacts import hlo_text  # noqa: E402

TARGET = hlo_text.TABLES_FILE


def render() -> bytes:
    import marshal
    import zlib

    import lark
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    from build_parse_tables import plain

    text = hlo_text.grammar_path().read_text(encoding="utf-8")
    data, memo = hlo_text.build(text).memo_serialize([TerminalDef, Rule])
    data["options"]["import_paths"] = []
    entry = {"sha256": hlo_text.digest(text), "lark": lark.__version__, "data": data, "memo": memo}
    return zlib.compress(marshal.dumps(plain(entry), 4), 9)


def main() -> int:
    if "--check" in sys.argv:
        if hlo_text.prebuilt(hlo_text.grammar_path().read_text(encoding="utf-8")) is None:
            print(f"{TARGET.relative_to(REPO)} is stale: run python tools/build_hlo_tables.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_bytes(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
