"""The facts of a serialized module (`nforensics hlo FILE.pb`) without holding it: bounded memory for a module of
a million instructions.

protobuf parses a whole HloModuleProto into one message tree of about 8 times the file's size, and records for
every instruction take 40 times (4.4 GB for a 100 MB module). Here the wire format is walked by hand only as
deep as the messages that repeat (the module's computations, a computation's instructions); each instruction
is parsed by protobuf alone, made a record, handed to the facts gatherer and dropped. Held besides the bytes:
the module's and each computation's own fields, each instruction's id and element type (12 bytes) and a bit
for its id, and the types of the converts' operands.

A computation with a convolution is read whole (hlo_proto.computation_records), as its gradient roles come
from its graph; CNN graphs are small, and a language model's graph of a million instructions has no
convolution. The records made here carry operand ids (`#id`), not names: the facts read operands only through
those roles and the converts' source types, which are resolved by id.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any

from nforensics.artifacts.hlo_facts import FactsGatherer
from nforensics.artifacts.hlo_models import HloReport
from nforensics.artifacts.hlo_proto import computation_records, entry_name, frame_records, instruction_record, message_classes
from nforensics.errors import InputError

MODULE_COMPUTATIONS = 3  # HloModuleProto.computations
COMPUTATION_INSTRUCTIONS = 2  # HloComputationProto.instructions
HLO_PROTO_MODULE = 1  # HloProto.hlo_module
BITMAP_IDS = 1 << 28  # ids a computation's id range may span for a bitmap of them (32 MB at most)
_LENGTH_DELIMITED = 2
_FIXED = {1: 8, 5: 4}  # wire type -> bytes of a fixed64 / fixed32 value


class _NotAModule(ValueError):
    pass


def proto_report(data: bytes, where: str, named: Sequence[str] = ()) -> HloReport:
    """The facts of the HloModuleProto (or HloProto around one) in `data`; InputError for other bytes."""
    from google.protobuf.message import DecodeError

    view = memoryview(data)
    for start, end in _module_spans(view):
        try:
            read = _read_module(view, start, end)
            if read is not None:
                return _gather_module(view, *read, where, named)
        except (_NotAModule, DecodeError, RuntimeError, ValueError, IndexError):
            continue
    raise InputError(f"{where}: not an HLO module proto (truncated, or another kind of file)")


def _varint(view: memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = view[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise _NotAModule("a varint longer than 10 bytes")


def _fields(view: memoryview, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(field number, where its tag starts, where its value starts, where it ends) for each field of the message
    in view[start:end]; _NotAModule when the bytes are not a message."""
    at = start
    while at < end:
        tag_at = at
        tag, at = _varint(view, at)
        kind = tag & 7
        if kind == 0:
            _, value_end = _varint(view, at)
        elif kind == _LENGTH_DELIMITED:
            length, at = _varint(view, at)
            value_end = at + length
        elif kind in _FIXED:
            value_end = at + _FIXED[kind]
        else:
            raise _NotAModule(f"wire type {kind}")
        if value_end > end or tag >> 3 == 0:
            raise _NotAModule("a field that runs past its message")
        yield tag >> 3, tag_at, at, value_end
        at = value_end


def _each(view: memoryview, start: int, end: int, number: int) -> Iterator[tuple[int, int]]:
    """The spans of the repeated message field `number`."""
    return ((value_at, value_end) for field, _, value_at, value_end in _fields(view, start, end) if field == number)


def _header(view: memoryview, start: int, end: int, repeated: int) -> bytes:
    """The message without its field `repeated`: its own fields, parsed by protobuf as the same message."""
    return b"".join(view[tag_at:value_end] for field, tag_at, _, value_end in _fields(view, start, end) if field != repeated)


def _module_spans(view: memoryview) -> Iterator[tuple[int, int]]:
    """Where the module may be: the whole input, then (only if that was not one) the module an HloProto holds."""
    yield 0, len(view)
    try:
        yield from list(_each(view, 0, len(view), HLO_PROTO_MODULE))[-1:]
    except (_NotAModule, IndexError):
        return


def _read_module(view: memoryview, start: int, end: int) -> tuple[Any, list[tuple[Any, int, int]]] | None:
    """The module's own fields and its computations' (with their spans), if view[start:end] is a module whose
    computations all have names."""
    classes = message_classes()
    module = classes["HloModuleProto"].FromString(_header(view, start, end, MODULE_COMPUTATIONS))
    computations = [(classes["HloComputationProto"].FromString(_header(view, s, e, COMPUTATION_INSTRUCTIONS)), s, e)
                    for s, e in _each(view, start, end, MODULE_COMPUTATIONS)]
    if not computations or not all(computation.name for computation, _, _ in computations):
        return None
    return module, computations


def _gather_module(view: memoryview, module: Any, computations: list[tuple[Any, int, int]], where: str,
                   named: Sequence[str]) -> HloReport:
    names = {computation.id: computation.name for computation, _, _ in computations}
    entry = entry_name(module, names, [computation.name for computation, _, _ in computations], where)
    gatherer = FactsGatherer(frame_records(module.stack_frame_index), named)
    for computation, start, end in computations:
        _gather_computation(gatherer, view, computation, start, end, names, computation.name == entry, where)
    return gatherer.report(where, "proto", module.name, entry)


def _gather_computation(gatherer: FactsGatherer, view: memoryview, computation: Any, start: int, end: int,
                        names: dict[int, str], is_entry: bool, where: str) -> None:
    classes = message_classes()
    instruction_class, dtypes = classes["HloInstructionProto"], classes["dtypes"]
    # First pass: each instruction's id and type, the operands whose type a convert needs, and whether the
    # computation has a convolution (then it is read whole).
    ids, types, wanted, convolution = array("q"), array("i"), set(), False
    for value_at, value_end in _each(view, start, end, COMPUTATION_INSTRUCTIONS):
        instruction = instruction_class.FromString(view[value_at:value_end])
        ids.append(instruction.id)
        types.append(instruction.shape.element_type)
        if instruction.opcode == "convert" and instruction.operand_ids:
            wanted.add(instruction.operand_ids[0])
        convolution = convolution or instruction.opcode == "convolution"
    held = _HeldIds(ids)
    if not held(computation.root_id):
        raise _not_held(computation, where)
    if convolution:
        whole = computation_records(classes["HloComputationProto"].FromString(view[start:end]), names, dtypes, where)
        whole.is_entry = is_entry
        gatherer.add_computation(whole)
        return
    sources = {id_: dtypes.get(type_, f"type{type_}") for id_, type_ in zip(ids, types, strict=True) if id_ in wanted}
    del ids, types
    gatherer.begin(computation.name, is_entry, {})
    for value_at, value_end in _each(view, start, end, COMPUTATION_INSTRUCTIONS):
        instruction = instruction_class.FromString(view[value_at:value_end])
        operands = instruction.operand_ids
        if not all(held(operand) for operand in operands):
            raise _not_held(computation, where)
        record = instruction_record(instruction, {}, names, dtypes, instruction.id == computation.root_id)
        gatherer.add(record, sources.get(operands[0], "?") if operands else None)
    gatherer.end()


def _not_held(computation: Any, where: str) -> InputError:
    return InputError(f"{where}: an HLO proto whose computation {computation.name!r} refers to instructions it does not "
                      "hold (truncated?)")


class _HeldIds:
    """Whether an id is one of the computation's instructions: a bit per id between the least and the greatest
    (ids are dense within a computation: a few MB for a million), else a set."""

    def __init__(self, ids: array) -> None:
        self.low = min(ids, default=0)
        span = max(ids, default=0) - self.low + 1
        dense = span <= min(BITMAP_IDS, max(64 * len(ids), 4096))  # (two ids far apart are a set, not 32 MB of bits)
        self.bits: bytearray | None = bytearray((span >> 3) + 1) if dense else None
        self.ids: set[int] = set() if self.bits is not None else set(ids)
        if self.bits is not None:
            for id_ in ids:
                offset = id_ - self.low
                self.bits[offset >> 3] |= 1 << (offset & 7)

    def __call__(self, id_: int) -> bool:
        if self.bits is None:
            return id_ in self.ids
        offset = id_ - self.low
        return 0 <= offset < len(self.bits) << 3 and bool(self.bits[offset >> 3] & (1 << (offset & 7)))
