"""An HloModule's facts, as hypotheses about Neuron compiler failures need them (`nforensics hlo`).

Op histogram; element types and the converts between bf16 and f32; custom-calls by target with their kernel
names and call counts; convolutions with their window, and whether each is a gradient, decided from the graph's
structure (never the op's name); an HBM estimate from shapes; dynamic shapes; collectives with replica groups;
and the biggest tensors with the framework source line that created them.

The facts are gathered one instruction at a time, in module order (`FactsGatherer`), and keep only what they
report: a proto reader hands over a module of a million instructions as it decodes them and holds none of them
(hlo_proto_stream.py); a module already in records is fed the same way (`hlo_report`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence

from nforensics.artifacts.conv_roles import ConvRole, conv_roles
from nforensics.artifacts.hlo_models import (
    BigOp,
    CollectiveFacts,
    ConvFacts,
    ConvertSite,
    CustomCallFacts,
    DtypeFacts,
    DynamicShape,
    HloComputation,
    HloFrame,
    HloInstruction,
    HloModule,
    HloReport,
    HloShape,
    MemoryFacts,
)
from nforensics.artifacts.hlo_values import dim_labels

# Bits per element (sub-byte types round up per tensor). Types not listed (token, opaque) hold no data.
_BITS = {"pred": 8, "s1": 1, "u1": 1, "s2": 2, "u2": 2, "s4": 4, "u4": 4, "f4e2m1fn": 4, "s8": 8, "u8": 8, "s16": 16,
         "u16": 16, "f16": 16, "bf16": 16, "s32": 32, "u32": 32, "f32": 32, "s64": 64, "u64": 64, "f64": 64, "c64": 64,
         "c128": 128}
# Instructions that move, view or name data rather than compute it.
STRUCTURAL = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "convert", "bitcast", "bitcast-convert",
                        "reshape", "broadcast", "transpose", "copy", "slice", "concatenate", "pad", "iota",
                        "dynamic-slice", "dynamic-update-slice", "after-all", "partition-id", "replica-id"})
COLLECTIVES = frozenset({"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
                         "collective-broadcast", "ragged-all-to-all", "all-reduce-start", "all-gather-start",
                         "collective-permute-start", "send", "recv"})
_KERNEL_KEYS = ("kernel_name", "kernel", "func_name", "function_name", "name")
_KERNEL_TEXT = re.compile(r"(?:kernel_name|kernel|func_name|function_name)\W{1,3}([A-Za-z_][\w.]*)")
SITES, BIGGEST = 20, 10


def shape_text(shape: HloShape) -> str:
    """f32[2,3], f32[<=8,4], (f32[2], s32[]): a shape as HLO spells it, without its layout."""
    if shape.dtype == "tuple":
        return "(" + ", ".join(shape_text(s) for s in shape.tuple_shapes) + ")"
    dynamic = shape.dynamic or [False] * len(shape.dims)
    dims = [f"<={d}" if bounded else str(d) for d, bounded in zip(shape.dims, dynamic, strict=False)]
    return f"{shape.dtype}[{','.join(dims)}]"


def nbytes(shape: HloShape) -> int:
    if shape.dtype == "tuple":
        return sum(nbytes(s) for s in shape.tuple_shapes)
    count = 1
    for d in shape.dims:
        count *= max(d, 0)
    return (count * _BITS.get(shape.dtype, 0) + 7) // 8


def _leaf_dtypes(shape: HloShape) -> Iterator[str]:
    if shape.dtype == "tuple":
        for part in shape.tuple_shapes:
            yield from _leaf_dtypes(part)
    else:
        yield shape.dtype


def source_of(frames: Sequence[HloFrame], instruction: HloInstruction) -> str | None:
    """The framework source line that created the op: metadata's source_file:source_line, or (newer XLA) the
    frame its stack_frame_id names in the module's `frames`."""
    meta = instruction.metadata
    if meta is None:
        return None
    if meta.source_file:
        return f"{meta.source_file}:{meta.source_line}" if meta.source_line else meta.source_file
    if meta.stack_frame_id and 0 < meta.stack_frame_id <= len(frames):
        frame = frames[meta.stack_frame_id - 1]
        if frame.file:
            where = f"{frame.file}:{frame.line}" if frame.line else frame.file
            return f"{where} ({frame.function})" if frame.function else where
    return None


def _op_name(instruction: HloInstruction) -> str | None:
    return instruction.metadata.op_name if instruction.metadata else None


def hlo_report(module: HloModule, path: str, named: Sequence[str] = ()) -> HloReport:
    """`named`: instruction names, or words of the framework op name (`conv_general_dilated`), whose ops are
    listed with their source lines whatever their size."""
    gatherer = FactsGatherer(module.frames, named)
    for computation in module.computations:
        gatherer.add_computation(computation)
    return gatherer.report(path, module.form, module.name, module.entry)


# Entry instructions that create no tensor of their own, for the HBM estimate.
_NOT_CREATED = frozenset({"parameter", "tuple", "get-tuple-element", "bitcast"})
_KEEP_CANDIDATES = 256  # biggest-op candidates held before they are cut back to BIGGEST


class FactsGatherer:
    """A module's facts, gathered computation by computation and instruction by instruction, in module order.

    A computation is opened with `begin` (its convolutions' gradient roles, found on the whole computation, come
    with it), fed with `add`, and closed with `end`. Only what the report shows is kept."""

    def __init__(self, frames: Sequence[HloFrame], named: Sequence[str] = ()) -> None:
        self.frames, self.named_words = frames, named
        self.computations = self.instructions = 0
        self.ops: Counter[str] = Counter()
        self.compute: Counter[str] = Counter()
        self.converts: Counter[str] = Counter()
        self.sites: list[ConvertSite] = []
        self.custom_calls: dict[str, tuple[list[str], Counter[str]]] = {}  # target -> (instructions, kernels)
        self.convolutions: list[ConvFacts] = []
        self.dynamic: list[DynamicShape] = []
        self.collectives: list[CollectiveFacts] = []
        self.candidates: list[tuple[tuple[int, str, str], HloComputation, HloInstruction]] = []
        self.named: list[BigOp] = []
        self.memory = MemoryFacts.model_construct()
        self._entry_root: HloInstruction | None = None
        self._entry_last: HloInstruction | None = None
        self._created_bytes = 0
        self._computation = HloComputation.model_construct(name="", is_entry=False, instructions=[])
        self._roles: dict[str, ConvRole] = {}

    def add_computation(self, computation: HloComputation) -> None:
        """A computation held whole: its convolutions' roles and its converts' source types come from it."""
        dtypes = {i.name: i.shape.dtype for i in computation.instructions}
        self.begin(computation.name, computation.is_entry, conv_roles(computation))
        for instruction in computation.instructions:
            operands = instruction.operands
            self.add(instruction, dtypes.get(operands[0], "?") if operands else None)
        self.end()

    def begin(self, name: str, is_entry: bool, roles: dict[str, ConvRole]) -> None:
        self.computations += 1
        self._computation = HloComputation.model_construct(name=name, is_entry=is_entry, instructions=[])
        self._roles = roles

    def add(self, instruction: HloInstruction, first_operand_dtype: str | None) -> None:
        """`first_operand_dtype`: the element type of the instruction's first operand ("?" when the computation
        does not hold it, None when it has no operand); only a convert's is read."""
        self.instructions += 1
        opcode = instruction.opcode
        self.ops[opcode] += 1
        if opcode == "convert":
            if first_operand_dtype is not None:
                self._convert(instruction, first_operand_dtype)
        elif opcode not in STRUCTURAL:
            self.compute.update(_leaf_dtypes(instruction.shape))
            self.candidates.append(((-nbytes(instruction.shape), self._computation.name, instruction.name),
                                    self._computation, instruction))
            if len(self.candidates) > _KEEP_CANDIDATES:
                self.candidates = sorted(self.candidates, key=lambda candidate: candidate[0])[:BIGGEST]
        if opcode == "custom-call":
            names, kernels = self.custom_calls.setdefault(instruction.custom_call_target or "?", ([], Counter()))
            names.append(instruction.name)
            kernels[kernel_name(instruction)] += 1
        elif opcode == "convolution":
            self.convolutions.append(self._conv(instruction))
        elif opcode in COLLECTIVES:
            self.collectives.append(CollectiveFacts.model_construct(
                name=instruction.name, opcode=opcode, computation=self._computation.name,
                replica_groups=instruction.replica_groups, source_target_pairs=instruction.source_target_pairs,
                channel_id=instruction.channel_id, bytes=nbytes(instruction.shape), op_name=_op_name(instruction)))
        if _is_dynamic(instruction.shape):
            self.dynamic.append(DynamicShape.model_construct(name=instruction.name, opcode=opcode,
                                                             shape=shape_text(instruction.shape)))
        if self.named_words and len(self.named) < SITES and _picked(instruction, self.named_words):
            self.named.append(self._big_op(self._computation, instruction))
        if self._computation.is_entry:
            self._entry(instruction)

    def _convert(self, instruction: HloInstruction, source: str) -> None:
        change = f"{source}->{instruction.shape.dtype}"
        self.converts[change] += 1
        if change in ("bf16->f32", "f32->bf16") and len(self.sites) < SITES:
            self.sites.append(ConvertSite.model_construct(name=instruction.name, computation=self._computation.name,
                                                          change=change, op_name=_op_name(instruction)))

    def _conv(self, instruction: HloInstruction) -> ConvFacts:
        window = instruction.window or []
        role = self._roles.get(instruction.name)
        return ConvFacts.model_construct(
            name=instruction.name, computation=self._computation.name, shape=shape_text(instruction.shape),
            window=_joined([d.size for d in window]), stride=_joined([d.stride for d in window]),
            padding="x".join(f"{d.pad_low}_{d.pad_high}" for d in window),
            lhs_dilate=_joined([d.lhs_dilate for d in window]), rhs_dilate=_joined([d.rhs_dilate for d in window]),
            feature_group_count=instruction.feature_group_count, batch_group_count=instruction.batch_group_count,
            dim_labels=dim_labels(instruction.conv_dims) if instruction.conv_dims else "",
            backward=role.kind if role else None, backward_of=role.of if role else None, why=role.why if role else None,
            op_name=_op_name(instruction), source=source_of(self.frames, instruction))

    def _entry(self, instruction: HloInstruction) -> None:
        """The HBM estimate, from the entry computation alone."""
        memory, size = self.memory, nbytes(instruction.shape)
        self._entry_last = instruction
        if instruction.is_root and self._entry_root is None:
            self._entry_root = instruction
        if instruction.opcode == "parameter":
            memory.parameters += 1
            memory.parameter_bytes += size
        elif instruction.opcode not in _NOT_CREATED:
            self._created_bytes += size
            if memory.largest is None or size > memory.largest_bytes:
                memory.largest, memory.largest_bytes = f"{instruction.name} {shape_text(instruction.shape)}", size

    def end(self) -> None:
        if not self._computation.is_entry:
            return
        root = self._entry_root or self._entry_last
        output = nbytes(root.shape) if root else 0
        self.memory.output_bytes = output
        self.memory.intermediate_bytes = self._created_bytes - (output if root and root.opcode not in _NOT_CREATED else 0)
        self.memory.estimate_bytes = self.memory.parameter_bytes + output

    def _big_op(self, computation: HloComputation, instruction: HloInstruction) -> BigOp:
        return BigOp.model_construct(name=instruction.name, opcode=instruction.opcode, computation=computation.name,
                                     shape=shape_text(instruction.shape), bytes=nbytes(instruction.shape),
                                     op_name=_op_name(instruction), source=source_of(self.frames, instruction))

    def report(self, path: str, form: str, module: str, entry: str) -> HloReport:
        custom_calls = [CustomCallFacts.model_construct(target=target, calls=len(names), kernels=dict(kernels.most_common()),
                                                        instructions=names)
                        for target, (names, kernels) in sorted(self.custom_calls.items(), key=lambda kv: (-len(kv[1][0]), kv[0]))]
        biggest = sorted(self.candidates, key=lambda candidate: candidate[0])[:BIGGEST]
        return HloReport.model_construct(
            path=path, form=form, module=module, entry=entry, computations=self.computations,
            instructions=self.instructions, ops=dict(sorted(self.ops.items(), key=lambda kv: (-kv[1], kv[0]))),
            dtypes=DtypeFacts.model_construct(compute=dict(self.compute.most_common()),
                                              converts=dict(self.converts.most_common()),
                                              mixed_bf16_f32=bool(self.compute["bf16"] and self.compute["f32"]),
                                              sites=self.sites),
            custom_calls=custom_calls, convolutions=self.convolutions, memory=self.memory, dynamic=self.dynamic,
            collectives=self.collectives, biggest=[self._big_op(c, i) for _, c, i in biggest], named=self.named)


def _picked(instruction: HloInstruction, names: Sequence[str]) -> bool:
    """An instruction `--op NAME` asks for: by its name, its opcode, or a word of its framework op name."""
    op_words = (_op_name(instruction) or "").split("/")
    return any(name == instruction.name or name in op_words or name == instruction.opcode for name in names)


def kernel_name(instruction: HloInstruction) -> str:
    """The kernel a custom-call launches: from its backend_config (a JSON key such as kernel_name, or
    kernel_name=... in plain text), else the last part of its op_name; "?" when neither says."""
    config = instruction.backend_config or ""
    if config.startswith("{"):
        try:
            decoded = json.loads(config)
        except ValueError:
            decoded = None
        if isinstance(decoded, dict):
            for key in _KERNEL_KEYS:
                if isinstance(decoded.get(key), str) and decoded[key]:
                    return decoded[key]
    match = _KERNEL_TEXT.search(config)
    if match:
        return match.group(1)
    op_name = _op_name(instruction)
    return op_name.rsplit("/", 1)[-1] if op_name else "?"


def _joined(numbers: list[int]) -> str:
    return "x".join(str(n) for n in numbers)


def _is_dynamic(shape: HloShape) -> bool:
    return any(shape.dynamic) or any(_is_dynamic(s) for s in shape.tuple_shapes)
