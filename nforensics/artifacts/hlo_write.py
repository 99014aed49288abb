"""Write HLO modules: an HloModuleProto's entry computation cut down to a set of its instructions, kept valid.

The reducer (nforensics/experiments/hlo_reduce.py) asks for sub-modules; this module makes each one a module XLA
accepts, whatever set it is given:
- an operand of a kept instruction that is not kept becomes an entry parameter of the same shape (the graph is
  cut at that frontier), under the cut instruction's own id and name, so no operand id changes; an operand that
  is itself a parameter, or a leaf (a constant or an iota without operands), is kept as it is;
- a kept parameter nobody kept uses is dropped; parameters are numbered 0..n-1 in instruction order;
- the root is the one kept instruction nobody kept uses, or a new tuple of all of them, in instruction order;
- the entry's and the module's program shapes are rewritten from the parameters and the root;
- computations the kept instructions do not call (directly or through the computations they call) are dropped;
- module fields that name parameters, outputs or instructions of the original (schedule, input/output
  aliasing, buffer donors, dynamic parameter bindings, cross-program prefetches, SPMD shardings) are dropped.

Everything else is copied, unknown fields included (dot dimension numbers, literals, frontend attributes: fields
nforensics' .proto does not declare), so a kept instruction means exactly what it meant. `check_module` states
the invariants; the tests check them on every candidate the reducer writes.
"""

from __future__ import annotations

from typing import Any, Iterable

# HloModuleProto fields (XLA's numbers) that refer to the original's parameters, outputs or instruction ids.
_STALE_MODULE_FIELDS = frozenset({7, 8, 9, 10, 12, 14, 18})
_WIRE_VARINT, _WIRE_FIXED64, _WIRE_BYTES, _WIRE_FIXED32 = 0, 1, 2, 5
ROOT_NAME = "reduced_root"
TUPLE = 13  # PrimitiveType.TUPLE


def entry_computation(module: Any) -> Any:
    for computation in module.computations:
        if computation.id == module.entry_computation_id or (not module.entry_computation_id
                                                            and computation.name == module.entry_computation_name):
            return computation
    return module.computations[-1]


LEAVES = frozenset({"constant", "iota"})


def is_leaf(instruction: Any) -> bool:
    """Cheap to keep rather than cut, and never the failure itself: a constant or an iota (no operands). Anything
    else without operands (a custom-call, a replica-id, an rng-get-and-update-state) is an op the reducer weighs."""
    return instruction.opcode in LEAVES and not instruction.operand_ids


def sub_module(module: Any, keep: Iterable[int]) -> Any:
    """A new HloModuleProto whose entry computation holds the instructions `keep` names (ids of the entry), made
    valid as the module docstring says. `module` is not changed."""
    entry = entry_computation(module)
    by_id = {i.id: i for i in entry.instructions}
    kept = {i for i in keep if i in by_id}
    for instruction_id in list(kept):
        for operand in by_id[instruction_id].operand_ids:
            if by_id[operand].opcode == "parameter" or is_leaf(by_id[operand]):
                kept.add(operand)
    needed = {o for i in kept for o in by_id[i].operand_ids}
    cut = needed - kept
    used = needed & kept
    kept = {i for i in kept if by_id[i].opcode != "parameter" or i in used or len(kept) == 1}
    new = type(module)()
    _copy_module_fields(module, new)
    computation = new.computations.add()
    computation.CopyFrom(entry)
    del computation.instructions[:]
    number = 0
    for original in entry.instructions:
        if original.id not in kept and original.id not in cut:
            continue
        instruction = computation.instructions.add()
        if original.id in cut:
            instruction.id, instruction.name, instruction.opcode = original.id, original.name, "parameter"
            instruction.shape.CopyFrom(original.shape)
            if original.HasField("metadata"):
                instruction.metadata.CopyFrom(original.metadata)
        else:
            instruction.CopyFrom(original)
            del instruction.control_predecessor_ids[:]
            instruction.control_predecessor_ids.extend(p for p in original.control_predecessor_ids if p in kept)
        if instruction.opcode == "parameter":
            instruction.parameter_number = number
            number += 1
    _set_root(module, computation, used)
    program_shapes(computation, new)
    _keep_called(module, new, computation)
    return new


def _copy_module_fields(module: Any, new: Any) -> None:
    for field, value in module.ListFields():
        if field.name != "computations":
            getattr(new, field.name).CopyFrom(value) if field.message_type else setattr(new, field.name, value)
    for number, wire_type, data in _unknown_fields(module):
        if number not in _STALE_MODULE_FIELDS:
            new.MergeFromString(_encode(number, wire_type, data))


def _set_root(module: Any, computation: Any, used: set[int]) -> None:
    sinks = [i for i in computation.instructions if i.id not in used and i.opcode != "parameter"]
    sinks = sinks or list(computation.instructions[-1:])
    if len(sinks) == 1:
        computation.root_id = sinks[0].id
        return
    names = {i.name for c in module.computations for i in c.instructions}
    root = computation.instructions.add()
    root.id = 1 + max(i.id for c in module.computations for i in c.instructions)
    root.name = next(f"{ROOT_NAME}.{n}" if n else ROOT_NAME for n in range(len(names) + 1)
                     if (f"{ROOT_NAME}.{n}" if n else ROOT_NAME) not in names)
    root.opcode = "tuple"
    root.shape.element_type = TUPLE
    for sink in sinks:
        root.shape.tuple_shapes.add().CopyFrom(sink.shape)
        root.operand_ids.append(sink.id)
    computation.root_id = root.id


def program_shapes(computation: Any, module: Any) -> None:
    """Both program shapes (the entry's and the module's) rewritten from the entry's parameters and root."""
    parameters = sorted((i for i in computation.instructions if i.opcode == "parameter"), key=lambda i: i.parameter_number)
    root = next(i for i in computation.instructions if i.id == computation.root_id)
    for shape in (computation.program_shape, module.host_program_shape):
        shape.Clear()
        for parameter in parameters:
            shape.parameters.add().CopyFrom(parameter.shape)
            shape.parameter_names.append(parameter.name)
        shape.result.CopyFrom(root.shape)


def _keep_called(module: Any, new: Any, entry: Any) -> None:
    """Copy the computations the entry still calls, transitively, in their original order (callees first)."""
    by_id = {c.id: c for c in module.computations}
    wanted: set[int] = set()
    todo = [c for i in entry.instructions for c in i.called_computation_ids]
    while todo:
        cid = todo.pop()
        if cid not in wanted and cid in by_id:
            wanted.add(cid)
            todo.extend(c for i in by_id[cid].instructions for c in i.called_computation_ids)
    called = [c for c in module.computations if c.id in wanted]
    entry_copy = type(entry)()
    entry_copy.CopyFrom(entry)
    del new.computations[:]
    for computation in called:
        new.computations.add().CopyFrom(computation)
    new.computations.add().CopyFrom(entry_copy)
    new.entry_computation_id, new.entry_computation_name = entry.id, entry.name


def instruction_count(module: Any) -> int:
    return sum(len(c.instructions) for c in module.computations)


def check_module(module: Any) -> list[str]:  # noqa: C901 - one flat list of independent invariants
    """What makes the module one XLA would refuse: [] when every invariant holds. Ids and names are unique, every
    operand, control predecessor and root is an instruction of its computation defined before its users, every
    called computation exists, the entry's parameters are numbered 0..n-1 and both program shapes say what the
    parameters and the root are."""
    problems: list[str] = []
    computations = {c.id: c for c in module.computations}
    ids = [i.id for c in module.computations for i in c.instructions]
    names = [i.name for c in module.computations for i in c.instructions]
    if len(set(ids)) != len(ids):
        problems.append("instruction ids repeat")
    if len(set(names)) != len(names):
        problems.append("instruction names repeat")
    for computation in module.computations:
        seen: set[int] = set()
        for instruction in computation.instructions:
            missing = [o for o in [*instruction.operand_ids, *instruction.control_predecessor_ids] if o not in seen]
            if missing:
                problems.append(f"{computation.name}: {instruction.name} uses {missing[0]} before it is defined (or never)")
            if any(c not in computations for c in instruction.called_computation_ids):
                problems.append(f"{computation.name}: {instruction.name} calls a computation the module does not hold")
            seen.add(instruction.id)
        if computation.root_id not in seen:
            problems.append(f"{computation.name}: no root instruction")
    entry = computations.get(module.entry_computation_id)
    if entry is None or entry.name != module.entry_computation_name:
        return problems + ["the entry computation's id and name do not name one computation"]
    parameters = sorted((i for i in entry.instructions if i.opcode == "parameter"), key=lambda i: i.parameter_number)
    if [p.parameter_number for p in parameters] != list(range(len(parameters))):
        problems.append("entry parameters are not numbered 0..n-1")
    root = next((i for i in entry.instructions if i.id == entry.root_id), None)
    for where, shape in (("entry", entry.program_shape), ("module", module.host_program_shape)):
        if list(shape.parameters) != [p.shape for p in parameters]:
            problems.append(f"the {where} program shape's parameters are not the entry parameters' shapes")
        if root is not None and shape.result != root.shape:
            problems.append(f"the {where} program shape's result is not the root's shape")
    return problems


def _unknown_fields(message: Any) -> list[tuple[int, int, Any]]:
    try:
        from google.protobuf import unknown_fields

        return [(f.field_number, f.wire_type, f.data) for f in unknown_fields.UnknownFieldSet(message)]
    except ImportError:  # protobuf before 4.21
        return [(f.field_number, f.wire_type, f.data) for f in message.UnknownFields()]


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _encode(number: int, wire_type: int, data: Any) -> bytes:
    """One field on the wire, from what protobuf's unknown-field set holds for it."""
    tag = _varint(number << 3 | wire_type)
    if wire_type == _WIRE_VARINT:
        return tag + _varint(data)
    if wire_type == _WIRE_FIXED64:
        return tag + int(data).to_bytes(8, "little")
    if wire_type == _WIRE_FIXED32:
        return tag + int(data).to_bytes(4, "little")
    if wire_type == _WIRE_BYTES:
        return tag + _varint(len(data)) + bytes(data)
    return b""  # groups: deprecated, never written by XLA
