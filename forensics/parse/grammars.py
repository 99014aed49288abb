"""Load the lark grammars (grammars/*.lark) once per process.

The grammars ship inside the wheel as forensics/grammars; in a source checkout they sit at the top of the
repository. Parsers are LALR with the contextual lexer: linear time, so a 1 GB log stays practical.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from lark import Lark, Token, Tree
from lark.exceptions import LarkError

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


def grammar_dir() -> Path:
    for candidate in (_PACKAGE_DIR / "grammars", _PACKAGE_DIR.parent / "grammars"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("grammars/ not found next to the forensics package")


# Grammars whose shapes are searched for inside a message have one start rule per shape.
_START_RULES = {"messages": ["diagnostic", "exit_status", "nrt_status", "env_setting", "instance_type", "package_version",
                                 "outcome", "api_call"]}


@cache
def parser(name: str) -> Lark:
    text = (grammar_dir() / f"{name}.lark").read_text(encoding="utf-8")
    # cache=True keeps the built parse tables in the temp dir: cold `explain` skips the LALR construction.
    return Lark(text, parser="lalr", lexer="contextual", cache=True, start=_START_RULES.get(name, "start"))


def parse(name: str, text: str, start: str | None = None) -> Tree | None:
    """The tree of `text` under grammar `name` (and start rule), or None when the text has another shape."""
    try:
        return parser(name).parse(text, start=start)
    except LarkError:
        return None


def flatten(tree: Tree) -> tuple[str, dict[str, str]]:
    """(rule name, {TERMINAL_TYPE: value}) of a start-alternative tree: the shape and its parts."""
    node = tree
    while node.data in ("start", "diagnostic") and node.children and isinstance(node.children[0], Tree):
        node = node.children[0]
    parts: dict[str, str] = {}
    for token in node.scan_values(lambda v: isinstance(v, Token)):
        parts.setdefault(token.type, token.value)
    return node.data, parts
