"""Load the lark grammars (grammars/*.lark) once per process.

The grammars ship inside the wheel as nforensics/grammars; in a source checkout they sit at the top of the
repository. Parsers are LALR with the contextual lexer: linear time, so a 1 GB log stays practical. The
terminals several grammars spell alike live once in grammars/shared/ and are taken with `%import shared.X`.

Their tables are built ahead by tools/build_parse_tables.py into nforensics/parse/tables.bin (zlib of
marshal of plain dicts, lists and strings: loading it builds data and runs nothing) and loaded in ~12 ms
for all grammars instead of built in ~80 ms. No cache is written or read at run time: lark's
own `cache=True` pickled the tables into the shared temp folder under a predictable name and unpickled
whatever was there, so anyone on the machine could run code in the next `explain`.
"""

from __future__ import annotations

import hashlib
import marshal
import zlib
from functools import cache
from pathlib import Path

from lark import Lark, Transformer
from lark.exceptions import LarkError
from lark.lexer import ContextualLexer

from nforensics.parse.message_transformer import MessageShapes
from nforensics.parse.transformers import (
    CompilerShapes,
    EnvironmentShapes,
    FrameworkShapes,
    PrefixShapes,
    RuntimeShapes,
    TracebackShapes,
)

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


def grammar_dir() -> Path:
    for candidate in (_PACKAGE_DIR / "grammars", _PACKAGE_DIR.parent / "grammars"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("grammars/ not found next to the nforensics package")


# Grammars whose shapes are searched for inside a message have one start rule per shape.
_START_RULES = {"messages": ["diagnostic", "bare_diagnostic", "exit_status", "nrt_status", "named_status", "env_setting",
                             "instance_type", "package_version", "outcome", "api_call"]}


@cache
def _shared_text() -> str:
    return "".join(path.read_text(encoding="utf-8") for path in sorted((grammar_dir() / "shared").glob("*.lark")))


def digest(text: str) -> str:
    """The stamp of a grammar's tables: its text and the shared terminals it may import."""
    return hashlib.sha256((text + _shared_text()).encode("utf-8")).hexdigest()


class _FailFastLexer(ContextualLexer):
    """lark's contextual lexer, except that text it cannot tokenise in the parser's state fails at once. lark
    would first build a scanner of every terminal of the grammar to name the token it found instead, for an
    error message that parse() drops: half of the scanners a cold `explain` built (10 of its 20 ms)."""

    def lex(self, lexer_state, parser_state):  # type: ignore[no-untyped-def]  # lark's own signature
        try:
            while True:
                yield self.lexers[parser_state.position].next_token(lexer_state, parser_state)
        except EOFError:
            pass


# The option lark takes for replacing a parsing component (lark-cython's plugins use it), given when building and loading.
_PLUGINS = {"ContextualLexer": _FailFastLexer}


def build(name: str, text: str, transformer: Transformer | None = None) -> Lark:
    """The parser of grammar `name`, built from its text (the LALR construction). With a transformer it
    hands back what the transformer makes of each parse, without building the tree."""
    return Lark(text, parser="lalr", lexer="contextual", start=_START_RULES.get(name, "start"),
                import_paths=[str(grammar_dir())], transformer=transformer, _plugins=_PLUGINS)


# What each grammar's parses become (nforensics/parse/shapes.py).
TRANSFORMERS: dict[str, type[Transformer]] = {
    "compiler": CompilerShapes, "runtime": RuntimeShapes, "framework": FrameworkShapes, "traceback": TracebackShapes,
    "environment": EnvironmentShapes, "prefixes": PrefixShapes, "messages": MessageShapes,
}

TABLES_FILE = Path(__file__).with_name("tables.bin")


@cache
def _tables() -> dict:
    try:
        tables = marshal.loads(zlib.decompress(TABLES_FILE.read_bytes()))
    except (OSError, ValueError, EOFError, TypeError, zlib.error):
        return {}
    return tables if isinstance(tables, dict) else {}


@cache
def _current_entry(name: str, text: str) -> dict | None:
    """Grammar `name`'s entry in tables.bin when it was built from this very text by this lark version."""
    import lark

    entry = _tables().get(name)
    return entry if entry and entry["sha256"] == digest(text) and entry["lark"] == lark.__version__ else None


@cache
def grammar_text(name: str) -> str:
    return (grammar_dir() / f"{name}.lark").read_text(encoding="utf-8")


@cache
def shipped(name: str, key: str) -> dict | None:
    """A table derived from grammar `name` and shipped beside its parse tables (`words`, `prefixes`: see
    nforensics/parse/literals.py), when it is current."""
    entry = _current_entry(name, grammar_text(name))
    table = entry.get(key) if entry else None
    return table if isinstance(table, dict) else None


def prebuilt(name: str, text: str, transformer: Transformer | None = None) -> Lark | None:
    """The parser from the tables shipped in nforensics/parse/tables.bin, when they were built from this very
    grammar text by this lark version; else None."""
    entry = _current_entry(name, text)
    return Lark._load_from_dict(entry["data"], entry["memo"], transformer=transformer, _plugins=_PLUGINS) if entry else None


@cache
def parser(name: str) -> Lark:
    """The parser of grammar `name`, with its transformer (TRANSFORMERS) built in."""
    text = grammar_text(name)
    transformer = TRANSFORMERS[name]()
    return prebuilt(name, text, transformer) or build(name, text, transformer)


def terminal_regex(name: str, terminal: str) -> str:
    """A terminal's regex as grammar `name` spells it: quick tests built from it cannot drift from the grammar."""
    return parser(name).get_terminal(terminal).pattern.to_regexp()


def parse(name: str, text: str, start: str | None = None) -> object:
    """What `text` says under grammar `name` (and start rule), as the grammar's transformer reads it (a shape
    of nforensics/parse/shapes.py), or None when the text has another shape."""
    try:
        return parser(name).parse(text, start=start)
    except LarkError:
        return None
