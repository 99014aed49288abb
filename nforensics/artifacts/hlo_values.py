"""What HLO text's attribute values mean: shapes, windows, dim_labels, replica groups, metadata, quoted strings.

The grammar (grammars/hlo/hlo.lark) parses an attribute value by structure only: a word, a "string", a shape,
an iota device list, or a {...} / [...] / (...) group of items, where an item may be key=value or "key": value.
This module gives the attributes nforensics reads their meaning; every other attribute is kept as the text it
was written as. Each value knows where it sits in the module's text, so that text is exact (backend_config's
JSON keeps its spacing).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from lark import Token

from nforensics.artifacts.hlo_models import ConvDims, HloMetadata, HloShape, WindowDim


@dataclass
class Group:
    """{...}, [...] or (...) in an attribute value: its items and where it sits in the text."""

    open: str
    items: list
    start: int
    end: int


@dataclass
class Pair:
    key: object  # a Token (word or string) or a Group
    value: object
    start: int = field(default=0)
    end: int = field(default=0)


def span(value: object) -> tuple[int, int]:
    if isinstance(value, Token):
        return value.start_pos or 0, value.end_pos or 0
    if isinstance(value, (Group, Pair)):
        return value.start, value.end
    return 0, 0


def raw(value: object, text: str) -> str:
    """The value exactly as written in `text`."""
    start, end = span(value)
    return text[start:end]


# ---------------------------------------------------------------- strings

_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)", re.DOTALL)
_SIMPLE = {"n": b"\n", "t": b"\t", "r": b"\r", '"': b'"', "'": b"'", "\\": b"\\", "?": b"?", "a": b"\a", "b": b"\b",
           "f": b"\f", "v": b"\v"}


def _unescape_one(code: str) -> bytes:
    if code[0] == "x":
        return bytes([int(code[1:], 16)])
    if code[0].isdigit():
        return bytes([int(code, 8) & 0xFF])
    return _SIMPLE.get(code, ("\\" + code).encode("utf-8"))


def unquote_bytes(token: str) -> bytes:
    """The bytes of a C-escaped string literal (XLA escapes backend_config with absl::CEscape): an octal or hex
    escape is one byte, whatever UTF-8 it is part of."""
    body, out, at = token[1:-1], bytearray(), 0
    for match in _ESCAPE.finditer(body):
        out += body[at:match.start()].encode("utf-8") + _unescape_one(match.group(1))
        at = match.end()
    return bytes(out + body[at:].encode("utf-8"))


def unquote(token: str) -> str:
    return decode_bytes(unquote_bytes(token))


def decode_bytes(data: bytes) -> str:
    """Bytes a module carries (a proto's backend_config) as text; bytes that are not UTF-8 stay visible as \\xNN."""
    return data.decode("utf-8", errors="backslashreplace")


def text_of(value: object, source: str) -> str:
    """A string value's content, or any other value as written."""
    if isinstance(value, Token) and value.type == "STRING":
        return unquote(value)
    return raw(value, source)


# ---------------------------------------------------------------- shapes

_SHAPE = re.compile(r"\b([a-z][a-z0-9]*)\[([^\]]*)\](?:\{([^{}:]*)(?::[^{}]*)?\})?")


@lru_cache(maxsize=4096)
def array_shape(text: str) -> HloShape:
    """f32[<=8,4]{1,0} -> dtype f32, dims [8, 4], dynamic [True, False], layout [1, 0]. Shapes repeat, so cached
    (records are not changed after they are built)."""
    match = _SHAPE.fullmatch(text)
    if match is None:
        raise ValueError(f"not a shape: {text}")
    dtype, dims_text, layout_text = match.groups()
    dims, dynamic = [], []
    for part in filter(None, (p.strip() for p in dims_text.split(","))):
        bounded = part.startswith("<=")
        dims.append(int(part[2:] if bounded else part) if part.lstrip("<=") != "?" else -1)
        dynamic.append(bounded or part.endswith("?"))
    layout = [int(p) for p in layout_text.split(",") if p.strip()] if layout_text else None
    return HloShape.model_construct(dtype=dtype, dims=dims, dynamic=dynamic, layout=layout or None, tuple_shapes=[])


def tuple_shape(parts: list[HloShape]) -> HloShape:
    return HloShape.model_construct(dtype="tuple", dims=[], dynamic=[], layout=None, tuple_shapes=parts)


# ---------------------------------------------------------------- windows and convolutions

_WINDOW_KEYS = {"size": "size", "stride": "stride", "lhs_dilate": "lhs_dilate", "rhs_dilate": "rhs_dilate",
                "rhs_reversal": "reversal"}


def window(value: object) -> list[WindowDim] | None:
    """window={size=7x7 stride=2x2 pad=3_3x3_3 lhs_dilate=2x2 rhs_dilate=1x1 rhs_reversal=0x1}."""
    if not isinstance(value, Group):
        return None
    columns: dict[str, list[int]] = {}
    for item in value.items:
        if not isinstance(item, Pair) or not isinstance(item.value, Token):
            continue
        key, text = str(item.key), str(item.value)
        if key == "pad":
            pads = [side.split("_") for side in text.split("x")]
            columns["pad_low"] = [int(low) for low, *_ in pads]
            columns["pad_high"] = [int(rest[0]) if rest else 0 for _, *rest in pads]
        elif key in _WINDOW_KEYS:
            columns[_WINDOW_KEYS[key]] = [int(n) for n in text.split("x")]
    sizes = columns.get("size")
    if not sizes:
        return None
    dims = []
    for i in range(len(sizes)):
        dim: dict[str, Any] = {"stride": 1, "pad_low": 0, "pad_high": 0, "lhs_dilate": 1, "rhs_dilate": 1, "reversal": False}
        dim.update({key: (bool(column[i]) if key == "reversal" else column[i])
                    for key, column in columns.items() if i < len(column)})
        dims.append(WindowDim.model_construct(**dim))
    return dims


def _labels(text: str, batch: str, feature: str) -> tuple[int, int, list[int]]:
    spatial = sorted((int(char), index) for index, char in enumerate(text) if char.isdigit())
    return text.find(batch), text.find(feature), [index for _, index in spatial]


def conv_dims(labels: str) -> ConvDims | None:
    """dim_labels=bf01_oi01->bf01 as the ConvolutionDimensionNumbers a proto carries."""
    try:
        inputs, output = labels.split("->")
        lhs, rhs = inputs.split("_")
    except ValueError:
        return None
    in_b, in_f, in_s = _labels(lhs, "b", "f")
    k_o, k_i, k_s = _labels(rhs, "o", "i")
    out_b, out_f, out_s = _labels(output, "b", "f")
    return ConvDims.model_construct(input_batch=in_b, input_feature=in_f, input_spatial=in_s, kernel_input=k_i,
                                    kernel_output=k_o, kernel_spatial=k_s, output_batch=out_b, output_feature=out_f,
                                    output_spatial=out_s)


def dim_labels(dims: ConvDims) -> str:
    """The text form of convolution dimension numbers: bf01_oi01->bf01."""

    def spell(rank: int, marks: dict[int, str], spatial: list[int]) -> str:
        chars = ["?"] * rank
        for index, mark in marks.items():
            if 0 <= index < rank:
                chars[index] = mark
        for number, index in enumerate(spatial):
            if 0 <= index < rank:
                chars[index] = str(number)
        return "".join(chars)

    rank = 2 + len(dims.input_spatial)
    return (spell(rank, {dims.input_batch: "b", dims.input_feature: "f"}, dims.input_spatial) + "_"
            + spell(rank, {dims.kernel_output: "o", dims.kernel_input: "i"}, dims.kernel_spatial) + "->"
            + spell(rank, {dims.output_batch: "b", dims.output_feature: "f"}, dims.output_spatial))


# ---------------------------------------------------------------- collectives


def iota_groups(groups: int, per_group: int, reshape: list[int], perm: list[int]) -> list[list[int]]:
    """[2,2]<=[4] (and [2,2]<=[2,2]T(1,0)): iota(prod(reshape)) reshaped, transposed by perm, cut into groups."""
    count = 1
    for n in reshape:
        count *= n
    ids = list(range(count))
    if perm and len(perm) == len(reshape) and sorted(perm) == list(range(len(reshape))):
        strides = [1] * len(reshape)
        for axis in range(len(reshape) - 2, -1, -1):
            strides[axis] = strides[axis + 1] * reshape[axis + 1]
        shape = [reshape[axis] for axis in perm]
        ids = []
        for flat in range(count):
            index, rest = 0, flat
            for axis in range(len(shape) - 1, -1, -1):
                rest, coordinate = divmod(rest, shape[axis])
                index += coordinate * strides[perm[axis]]
            ids.append(index)
    if groups * per_group != count or per_group <= 0:
        return [ids]
    return [ids[i * per_group:(i + 1) * per_group] for i in range(groups)]


_IOTA = re.compile(r"\[([\d,]*)\]<=\[([\d,]*)\](?:T\(([\d,]*)\))?")


def _ints(text: str) -> list[int]:
    return [int(n) for n in text.split(",") if n.strip()]


def groups_of(value: object) -> list[list[int]] | None:
    """replica_groups={{0,1},{2,3}}, replica_groups={} or replica_groups=[2,2]<=[4]."""
    if isinstance(value, Token) and value.type == "IOTA":
        match = _IOTA.fullmatch(str(value))
        if match is None:
            return None
        outer = _ints(match.group(1))
        if len(outer) != 2:
            return None
        return iota_groups(outer[0], outer[1], _ints(match.group(2)), _ints(match.group(3) or ""))
    if isinstance(value, Group):
        return [[int(str(n)) for n in item.items if isinstance(n, Token)] for item in value.items if isinstance(item, Group)]
    return None


# ---------------------------------------------------------------- metadata

_METADATA_INTS = ("source_line", "stack_frame_id")
_METADATA_STRINGS = ("op_type", "op_name", "source_file")


def metadata(value: object) -> HloMetadata | None:
    """metadata={op_type="..." op_name="..." source_file="..." source_line=12 stack_frame_id=3}."""
    if not isinstance(value, Group):
        return None
    fields: dict[str, Any] = {}
    for item in value.items:
        if isinstance(item, Pair) and isinstance(item.value, Token):
            key = str(item.key)
            if key in _METADATA_STRINGS and item.value.type == "STRING":
                fields[key] = unquote(item.value) or None
            elif key in _METADATA_INTS and str(item.value).lstrip("-").isdigit():
                fields[key] = int(str(item.value)) or None
    if not any(value is not None for value in fields.values()):
        return None
    return HloMetadata.model_construct(**{name: fields.get(name) for name in _METADATA_STRINGS + _METADATA_INTS})


def pairs_of(value: object) -> dict[str, str]:
    """{file_name_id=1 line=7} -> {"file_name_id": "1", "line": "7"}: the words of a flat group of key=value items."""
    if not isinstance(value, Group):
        return {}
    return {str(item.key): str(item.value) for item in value.items if isinstance(item, Pair)}
