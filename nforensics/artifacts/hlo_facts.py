"""An HloModule's facts, as hypotheses about Neuron compiler failures need them (`nforensics hlo`).

Op histogram; element types and the converts between bf16 and f32; custom-calls by target with their kernel
names and call counts; convolutions with their window, and whether each is a gradient, decided from the graph's
structure (never the op's name); an HBM estimate from shapes; dynamic shapes; collectives with replica groups;
and the biggest tensors with the framework source line that created them.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence

from nforensics.artifacts.conv_roles import conv_roles
from nforensics.artifacts.hlo_models import (
    BigOp,
    CollectiveFacts,
    ConvFacts,
    ConvertSite,
    CustomCallFacts,
    DtypeFacts,
    DynamicShape,
    HloComputation,
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


def source_of(module: HloModule, instruction: HloInstruction) -> str | None:
    """The framework source line that created the op: metadata's source_file:source_line, or (newer XLA) the
    frame its stack_frame_id names."""
    meta = instruction.metadata
    if meta is None:
        return None
    if meta.source_file:
        return f"{meta.source_file}:{meta.source_line}" if meta.source_line else meta.source_file
    if meta.stack_frame_id and 0 < meta.stack_frame_id <= len(module.frames):
        frame = module.frames[meta.stack_frame_id - 1]
        if frame.file:
            where = f"{frame.file}:{frame.line}" if frame.line else frame.file
            return f"{where} ({frame.function})" if frame.function else where
    return None


def _op_name(instruction: HloInstruction) -> str | None:
    return instruction.metadata.op_name if instruction.metadata else None


def hlo_report(module: HloModule, path: str, named: Sequence[str] = ()) -> HloReport:
    """`named`: instruction names, or words of the framework op name (`conv_general_dilated`), whose ops are
    listed with their source lines whatever their size."""
    everything = [(c, i) for c in module.computations for i in c.instructions]
    ops = Counter(i.opcode for _, i in everything)
    return HloReport.model_construct(
        path=path, form=module.form, module=module.name, entry=module.entry, computations=len(module.computations),
        instructions=len(everything), ops=dict(sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))),
        dtypes=_dtypes(module), custom_calls=_custom_calls(everything), convolutions=_convolutions(module),
        memory=_memory(module), dynamic=_dynamic(everything), collectives=_collectives(everything),
        biggest=_biggest(module, everything), named=_named(module, everything, named))


def _dtypes(module: HloModule) -> DtypeFacts:
    compute: Counter[str] = Counter()
    converts: Counter[str] = Counter()
    sites: list[ConvertSite] = []
    for computation in module.computations:
        shapes = {i.name: i.shape for i in computation.instructions}
        for instruction in computation.instructions:
            if instruction.opcode == "convert" and instruction.operands:
                source = shapes.get(instruction.operands[0])
                change = f"{source.dtype if source else '?'}->{instruction.shape.dtype}"
                converts[change] += 1
                if change in ("bf16->f32", "f32->bf16") and len(sites) < SITES:
                    sites.append(ConvertSite.model_construct(name=instruction.name, computation=computation.name,
                                                             change=change, op_name=_op_name(instruction)))
            elif instruction.opcode not in STRUCTURAL:
                compute.update(_leaf_dtypes(instruction.shape))
    return DtypeFacts.model_construct(compute=dict(compute.most_common()), converts=dict(converts.most_common()),
                                      mixed_bf16_f32=bool(compute["bf16"] and compute["f32"]), sites=sites)


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


def _custom_calls(everything: list[tuple[HloComputation, HloInstruction]]) -> list[CustomCallFacts]:
    by_target: dict[str, list[HloInstruction]] = {}
    for _, instruction in everything:
        if instruction.opcode == "custom-call":
            by_target.setdefault(instruction.custom_call_target or "?", []).append(instruction)
    return [CustomCallFacts.model_construct(target=target, calls=len(calls),
                                            kernels=dict(Counter(kernel_name(i) for i in calls).most_common()),
                                            instructions=[i.name for i in calls])
            for target, calls in sorted(by_target.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


def _joined(numbers: list[int]) -> str:
    return "x".join(str(n) for n in numbers)


def _convolutions(module: HloModule) -> list[ConvFacts]:
    facts = []
    for computation in module.computations:
        roles = conv_roles(computation)
        for instruction in computation.instructions:
            if instruction.opcode != "convolution":
                continue
            window = instruction.window or []
            role = roles.get(instruction.name)
            facts.append(ConvFacts.model_construct(
                name=instruction.name, computation=computation.name, shape=shape_text(instruction.shape),
                window=_joined([d.size for d in window]), stride=_joined([d.stride for d in window]),
                padding="x".join(f"{d.pad_low}_{d.pad_high}" for d in window),
                lhs_dilate=_joined([d.lhs_dilate for d in window]), rhs_dilate=_joined([d.rhs_dilate for d in window]),
                feature_group_count=instruction.feature_group_count, batch_group_count=instruction.batch_group_count,
                dim_labels=dim_labels(instruction.conv_dims) if instruction.conv_dims else "",
                backward=role.kind if role else None, backward_of=role.of if role else None, why=role.why if role else None,
                op_name=_op_name(instruction), source=source_of(module, instruction)))
    return facts


def _entry(module: HloModule) -> HloComputation:
    return next(c for c in module.computations if c.name == module.entry)


def _memory(module: HloModule) -> MemoryFacts:
    entry = _entry(module).instructions
    parameters = [i for i in entry if i.opcode == "parameter"]
    root = next((i for i in entry if i.is_root), entry[-1] if entry else None)
    created = [i for i in entry if i.opcode not in ("parameter", "tuple", "get-tuple-element", "bitcast")]
    largest = max(created, key=lambda i: nbytes(i.shape), default=None)
    parameter_bytes = sum(nbytes(i.shape) for i in parameters)
    output_bytes = nbytes(root.shape) if root else 0
    return MemoryFacts.model_construct(
        parameters=len(parameters), parameter_bytes=parameter_bytes, output_bytes=output_bytes,
        intermediate_bytes=sum(nbytes(i.shape) for i in created if i is not root),
        largest=f"{largest.name} {shape_text(largest.shape)}" if largest else None,
        largest_bytes=nbytes(largest.shape) if largest else 0, estimate_bytes=parameter_bytes + output_bytes)


def _is_dynamic(shape: HloShape) -> bool:
    return any(shape.dynamic) or any(_is_dynamic(s) for s in shape.tuple_shapes)


def _dynamic(everything: list[tuple[HloComputation, HloInstruction]]) -> list[DynamicShape]:
    return [DynamicShape.model_construct(name=i.name, opcode=i.opcode, shape=shape_text(i.shape))
            for _, i in everything if _is_dynamic(i.shape)]


def _collectives(everything: list[tuple[HloComputation, HloInstruction]]) -> list[CollectiveFacts]:
    return [CollectiveFacts.model_construct(
        name=i.name, opcode=i.opcode, computation=c.name, replica_groups=i.replica_groups,
        source_target_pairs=i.source_target_pairs, channel_id=i.channel_id, bytes=nbytes(i.shape), op_name=_op_name(i))
        for c, i in everything if i.opcode in COLLECTIVES]


def _biggest(module: HloModule, everything: list[tuple[HloComputation, HloInstruction]]) -> list[BigOp]:
    computing = [(c, i) for c, i in everything if i.opcode not in STRUCTURAL]
    computing.sort(key=lambda ci: (-nbytes(ci[1].shape), ci[0].name, ci[1].name))
    return [_big_op(module, c, i) for c, i in computing[:BIGGEST]]


def _named(module: HloModule, everything: list[tuple[HloComputation, HloInstruction]], names: Sequence[str]) -> list[BigOp]:
    """The ops an instruction name or a word of the framework's op name picks, in module order (at most SITES)."""
    if not names:
        return []
    picked = [(c, i) for c, i in everything
              if any(name == i.name or name in (_op_name(i) or "").split("/") or name == i.opcode for name in names)]
    return [_big_op(module, c, i) for c, i in picked[:SITES]]


def _big_op(module: HloModule, computation: HloComputation, instruction: HloInstruction) -> BigOp:
    return BigOp.model_construct(name=instruction.name, opcode=instruction.opcode, computation=computation.name,
                                 shape=shape_text(instruction.shape), bytes=nbytes(instruction.shape),
                                 op_name=_op_name(instruction), source=source_of(module, instruction))
