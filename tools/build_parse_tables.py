"""Build the LALR tables of grammars/*.lark into nforensics/parse/tables.bin: zlib of marshal of plain data.

`explain` starts by loading them (about 12 ms for all grammars) instead of building them (about 80 ms),
with the words each rule needs (nforensics/parse/literals.py) derived ahead too.
marshal (format 4, read by every Python 3) only builds dicts, lists, tuples, strings and numbers here;
unlike pickle, loading it calls nothing.

They used to come from lark's own cache (`cache=True`), which pickles the tables into the shared temp
folder and unpickles whatever file sits at that predictable name: another user of the machine could plant
code that runs on the next `explain`. These tables ship inside the package like its source. Each entry
records the sha256 of its grammar (with grammars/shared/, which it may import) and the lark version that
built it; nforensics/parse/grammars.py builds a grammar at start-up instead when either differs (an edited
grammar, another lark). Run this after changing a grammar; tests/test_caches.py fails while the file is
stale. (The output is not byte-stable: lark numbers states in object order. The check is whether each
grammar's entry is current.)

    python tools/build_parse_tables.py            # rewrite the file
    python tools/build_parse_tables.py --check    # exit 1 if a grammar's tables are stale
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nforensics.parse import grammars  # noqa: E402
from nforensics.parse.literals import rule_tables  # noqa: E402

TARGET = grammars.TABLES_FILE


def render() -> bytes:
    import marshal
    import zlib

    import lark
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    tables = {}
    for path in sorted(grammars.grammar_dir().glob("*.lark")):
        text = path.read_text(encoding="utf-8")
        built = grammars.build(path.stem, text)
        data, memo = built.memo_serialize([TerminalDef, Rule])
        data["options"]["import_paths"] = []  # where this checkout keeps grammars/ is no part of the tables
        data["options"].pop("_plugins", None)  # code, not data: grammars.prebuilt gives them when loading
        tables[path.stem] = {"sha256": grammars.digest(text), "lark": lark.__version__, "data": data, "memo": memo,
                             **rule_tables(built)}  # the quick tests' words (forensics/parse/literals.py)
    return zlib.compress(marshal.dumps(plain(tables), 4), 9)


def plain(value):
    """`value` in exact built-in types, which is all marshal takes: lark names an imported terminal with a
    Token, a str subclass."""
    if isinstance(value, dict):
        return {plain(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(plain(item) for item in value)
    return str(value) if isinstance(value, str) else value


def stale() -> list[str]:
    """The grammars whose shipped tables were not built from their current text by the installed lark."""
    return [path.stem for path in sorted(grammars.grammar_dir().glob("*.lark"))
            if grammars.prebuilt(path.stem, path.read_text(encoding="utf-8")) is None]


def main() -> int:
    if "--check" in sys.argv:
        names = stale()
        if names:
            print(f"{TARGET.relative_to(REPO)} is stale for {', '.join(names)}: run python tools/build_parse_tables.py",
                  file=sys.stderr)
            return 1
        return 0
    TARGET.write_bytes(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
