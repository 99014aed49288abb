"""HLO text -> HloModule records, through the lark grammar grammars/hlo/hlo.lark (LALR, contextual lexer).

The grammar's tables are built ahead into nforensics/artifacts/hlo_tables.bin by tools/build_hlo_tables.py, the
way tools/build_parse_tables.py builds the log grammars' (marshal of plain data, never pickle: loading it runs
nothing; no cache is written at run time). They live apart from nforensics/parse/tables.bin so `explain`, which
loads that file at every start, does not pay for a grammar only `nforensics hlo` uses. When the grammar or lark
changed since the tables were built, the parser is built from the grammar instead (slower, same result).
"""

from __future__ import annotations

import hashlib
import marshal
import re
import zlib
from functools import cache
from pathlib import Path
from typing import Any, cast

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from nforensics.artifacts import hlo_values as values
from nforensics.artifacts.hlo_models import HloComputation, HloFrame, HloInstruction, HloModule, HloShape
from nforensics.errors import InputError

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
TABLES_FILE = Path(__file__).with_name("hlo_tables.bin")

# Attributes naming the computations an instruction calls (a proto's called_computation_ids).
CALLS = ("to_apply", "calls", "condition", "body", "branch_computations", "true_computation", "false_computation",
         "select", "scatter", "called_computations")
_INTS = {"feature_group_count", "batch_group_count", "channel_id"}
_INDEXED = re.compile(r"\b(\d+)\s+(.*)", re.DOTALL)  # \b: a search starts at a number's first digit only (linear)
_PAIR = re.compile(r"\b(\w+)=(-?\d+)")


def grammar_path() -> Path:
    for base in (_PACKAGE_DIR / "grammars", _PACKAGE_DIR.parent / "grammars"):
        if (base / "hlo" / "hlo.lark").is_file():
            return base / "hlo" / "hlo.lark"
    raise FileNotFoundError("grammars/hlo/hlo.lark not found next to the nforensics package")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build(text: str, transformer: Transformer | None = None) -> Lark:
    return Lark(text, parser="lalr", lexer="contextual", transformer=transformer)


def prebuilt(text: str, transformer: Transformer | None = None) -> Lark | None:
    """The parser from hlo_tables.bin when it was built from this grammar text by this lark; else None."""
    import lark

    try:
        entry = marshal.loads(zlib.decompress(TABLES_FILE.read_bytes()))
    except (OSError, ValueError, EOFError, TypeError, zlib.error):
        return None
    if not isinstance(entry, dict) or entry.get("sha256") != digest(text) or entry.get("lark") != lark.__version__:
        return None
    return Lark._load_from_dict(entry["data"], entry["memo"], transformer=transformer)


class _Builder(Transformer):
    """Builds the records while lark parses (no tree). `source` is the text being parsed: values slice it."""

    source = ""

    # ------------------------------------------------------------ values
    def _group(self, children: list) -> values.Group:
        return values.Group(str(children[0]), children[1:-1], children[0].start_pos, children[-1].end_pos)

    braces = brackets = parens = _group

    def pair(self, children: list) -> values.Pair:
        key, value = children[0], children[-1]
        return values.Pair(key, value, values.span(key)[0], values.span(value)[1])

    def attribute(self, children: list) -> tuple[str, object]:
        return str(children[0]), children[1]

    # ------------------------------------------------------------ shapes and operands
    def tuple_shape(self, children: list) -> HloShape:
        return values.tuple_shape([_shape(child) for child in children if child is not None])

    def operand(self, children: list) -> object:
        return children[-1]  # the name (or a constant's literal); an operand's printed shape is its producer's

    def signature(self, children: list) -> None:
        return None

    # ------------------------------------------------------------ instructions and computations
    def instruction(self, children: list) -> HloInstruction:
        root = _is(children[0], "ROOT")
        parts = children[1:] if root else children
        name, shape, opcode = parts[0], parts[1], str(parts[2])
        words = [item for item in parts[3:] if item is not None and not isinstance(item, tuple)]
        fields: dict[str, Any] = {"name": _name(name), "opcode": opcode, "shape": _shape(shape), "is_root": root,
                                     "operands": [], "parameter_number": None, "called": []}
        if opcode == "parameter":
            fields["parameter_number"] = int(str(words[0])) if words and str(words[0]).isdigit() else None
        elif opcode != "constant":
            fields["operands"] = [_name(word) for word in words if isinstance(word, Token)]
        self._attributes(fields, [item for item in parts[3:] if isinstance(item, tuple)])
        return HloInstruction.model_construct(**{**_DEFAULTS, **fields})

    def _attributes(self, fields: dict[str, Any], attributes: list) -> None:  # noqa: C901 - one branch per key
        kept: dict[str, str] = {}
        for key, value in attributes:
            if key in CALLS:
                items = value.items if isinstance(value, values.Group) else [value]
                fields["called"] += [_name(item) for item in items if isinstance(item, Token)]  # type: ignore[operator]
            elif key == "window":
                fields["window"] = values.window(value)
            elif key == "dim_labels":
                fields["conv_dims"] = values.conv_dims(str(value))
            elif key in _INTS and str(value).lstrip("-").isdigit():
                fields[key] = int(str(value))
            elif key == "custom_call_target":
                fields[key] = values.text_of(value, self.source)
            elif key == "backend_config":
                fields[key] = values.text_of(value, self.source) or None
            elif key in ("replica_groups", "source_target_pairs"):
                fields[key] = values.groups_of(value)
            elif key == "use_global_device_ids":
                fields[key] = str(value) == "true"
            elif key == "metadata":
                fields[key] = values.metadata(value)
            else:
                kept[key] = values.raw(value, self.source)
        fields["attributes"] = kept

    def computation(self, children: list) -> HloComputation:
        entry = _is(children[0], "ENTRY")
        name = children[1] if entry else children[0]
        instructions = [child for child in children if isinstance(child, HloInstruction)]
        return HloComputation.model_construct(name=_name(name), is_entry=entry, instructions=instructions)

    # ------------------------------------------------------------ the module
    def header(self, children: list) -> str:
        return str(children[0])

    def file_names(self, children: list) -> tuple[str, list[str]]:
        return "file_names", _entries(children)

    def function_names(self, children: list) -> tuple[str, list[str]]:
        return "function_names", _entries(children)

    def file_locations(self, children: list) -> tuple[str, list[str]]:
        return "file_locations", _entries(children)

    def stack_frames(self, children: list) -> tuple[str, list[str]]:
        return "stack_frames", _entries(children)

    def start(self, children: list) -> HloModule:
        sections: dict[str, list[str]] = dict(child for child in children[1:] if isinstance(child, tuple))
        computations = [child for child in children if isinstance(child, HloComputation)]
        return HloModule.model_construct(name=children[0], entry="", computations=computations,
                                         frames=_frames(sections), form="text")


def _entries(children: list) -> list[str]:
    """`1 "model.py"` or `1 {file_name_id=1 line=7}` entries, in order (XLA numbers them 1, 2, ...)."""
    return [_INDEXED.match(str(token)).group(2) for token in children if _is(token, "INDEXED")]  # type: ignore[union-attr]


def _frames(sections: dict[str, list[str]]) -> list[HloFrame]:
    """The stack-frame index as frames. XLA's text prints a frame's parent one above the proto's
    parent_frame_id (seen with jaxlib 0.10.2: the outermost frame prints parent_frame_id=1); 0 means none."""
    files = [values.unquote(entry) for entry in sections.get("file_names", [])]
    functions = [values.unquote(entry) for entry in sections.get("function_names", [])]
    locations = [{key: int(number) for key, number in _PAIR.findall(entry)} for entry in sections.get("file_locations", [])]
    frames = []
    for entry in sections.get("stack_frames", []):
        frame = {key: int(number) for key, number in _PAIR.findall(entry)}
        location = _at(locations, frame.get("file_location_id")) or {}
        parent = frame.get("parent_frame_id", 0) - 1
        frames.append(HloFrame.model_construct(
            file=_at(files, location.get("file_name_id")), function=_at(functions, location.get("function_name_id")),
            line=location.get("line"), column=location.get("column"), parent=parent if parent > 0 else None))
    return frames


def _at(items: list, one_based: int | None):  # type: ignore[no-untyped-def]
    return items[one_based - 1] if one_based and 0 < one_based <= len(items) else None


def _is(item: object, *types: str) -> bool:
    return isinstance(item, Token) and item.type in types


def _name(word: object) -> str:
    text = str(word)
    return text[1:] if text.startswith("%") else text


def _shape(value: object) -> HloShape:
    return value if isinstance(value, HloShape) else values.array_shape(str(value))


_DEFAULTS: dict[str, Any] = {
    "window": None, "conv_dims": None, "feature_group_count": 1, "batch_group_count": 1, "custom_call_target": None,
    "backend_config": None, "replica_groups": None, "source_target_pairs": None, "channel_id": None,
    "use_global_device_ids": False, "metadata": None, "attributes": {},
}


@cache
def _parser() -> tuple[Lark, _Builder]:
    text = grammar_path().read_text(encoding="utf-8")
    builder = _Builder()
    return prebuilt(text, builder) or build(text, builder), builder


def parse_text(text: str, where: str = "input") -> HloModule:
    """The module that HLO `text` describes. Raises InputError naming the line and column where it stops being HLO."""
    lark, builder = _parser()
    builder.source = text
    try:
        module = cast(HloModule, lark.parse(text))
    except UnexpectedInput as error:
        if isinstance(error, UnexpectedEOF) or (isinstance(error, UnexpectedToken) and error.token.type == "$END"):
            raise InputError(f"{where}: HLO text that ends too early (cut short?) after line {text.count(chr(10)) or 1}") \
                from None
        raise InputError(f"{where}: not HLO text at line {error.line}, column {error.column}") from None
    except LarkError as error:
        raise InputError(f"{where}: not HLO text ({type(error).__name__})") from None
    finally:
        builder.source = ""
    entry = next((c.name for c in module.computations if c.is_entry), module.computations[-1].name)
    for computation in module.computations:  # without an ENTRY mark, XLA takes the last computation
        computation.is_entry = computation.name == entry
    module.entry = entry
    return module
