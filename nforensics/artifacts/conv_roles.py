"""Which convolutions of a computation are gradients, decided from the graph's structure, never from names.

A framework's autodiff writes the two gradients of a convolution F(x, w) as convolutions too:
- the input gradient (dL/dx) takes the output gradient and F's kernel (reversed, often through a `reverse`)
  and gives a tensor of x's shape; when F is strided, it dilates its input (lhs_dilate = F's stride);
- the filter gradient (dL/dw) takes x itself and the output gradient as its "kernel" (a window as large as
  F's output, rhs_dilate = F's stride) and gives a tensor of w's shape.

With F in the same computation, a convolution is its input gradient when its kernel operand is F's kernel
(through reverse / transpose / copy / bitcast / reshape / convert) and its output has x's dimensions; its filter
gradient when its input operand is F's input and its output has w's dimensions. The two are each other's
adjoint, so shapes alone cannot say which one is the forward: the gradient is the one downstream of the
other, or else the one with a gradient's marks. Without F (a backward-only graph), the marks decide:
lhs_dilate > 1 or a reversed kernel is an input gradient (a transposed convolution); rhs_dilate > 1 or a
window larger than its own output is a filter gradient.
"""

from __future__ import annotations

from dataclasses import dataclass

from nforensics.artifacts.hlo_models import HloComputation, HloInstruction, HloShape

# Ops that pass a tensor on without changing what it is, for tracing an operand to its origin.
_PASS_THROUGH = frozenset({"reverse", "transpose", "copy", "bitcast", "reshape", "convert"})


@dataclass(frozen=True)
class ConvRole:
    kind: str  # input | filter
    of: str | None  # the forward convolution, when the computation holds it
    why: str


def conv_roles(computation: HloComputation) -> dict[str, ConvRole]:
    """Convolution name -> its role, for the gradients in `computation`; forward convolutions are absent."""
    by_name = {i.name: i for i in computation.instructions}
    convolutions = [i for i in computation.instructions if i.opcode == "convolution" and len(i.operands) >= 2]
    roles: dict[str, ConvRole] = {}
    for conv in convolutions:
        role = _with_twin(conv, convolutions, by_name) or _alone(conv, by_name)
        if role:
            roles[conv.name] = role
    return roles


def _origin(name: str, by_name: dict[str, HloInstruction]) -> str:
    seen = 0
    while name in by_name and by_name[name].opcode in _PASS_THROUGH and by_name[name].operands and seen < 64:
        name, seen = by_name[name].operands[0], seen + 1
    return name


def _dims(name: str, by_name: dict[str, HloInstruction]) -> list[int] | None:
    producer = by_name.get(name)
    return sorted(producer.shape.dims) if producer and producer.shape.dtype != "tuple" else None


def _same_dims(shape: HloShape, dims: list[int] | None) -> bool:
    return dims is not None and sorted(shape.dims) == dims


def _ancestors(name: str, by_name: dict[str, HloInstruction]) -> set[str]:
    seen: set[str] = set()
    stack = list(by_name[name].operands) if name in by_name else []
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(by_name[current].operands if current in by_name else ())
    return seen


def _transposed(conv: HloInstruction, by_name: dict[str, HloInstruction]) -> bool:
    """Marks of an input gradient: a dilated input, a reversed window, or a kernel that passes through reverse."""
    if any(d.lhs_dilate > 1 or d.reversal for d in conv.window or []):
        return True
    name, seen = conv.operands[1], 0
    while name in by_name and by_name[name].opcode in _PASS_THROUGH and by_name[name].operands and seen < 64:
        if by_name[name].opcode == "reverse":
            return True
        name, seen = by_name[name].operands[0], seen + 1
    return False


def _gathers(conv: HloInstruction) -> bool:
    """Marks of a filter gradient: a dilated window (the forward's stride), or a window larger than the output."""
    window, dims = conv.window or [], conv.conv_dims
    if any(d.rhs_dilate > 1 for d in window):
        return True
    if dims is None or not window:
        return False
    output = [conv.shape.dims[i] for i in dims.output_spatial if i < len(conv.shape.dims)]
    return bool(output) and len(output) == len(window) and all(d.size > o for d, o in zip(window, output, strict=False))


def _with_twin(conv: HloInstruction, convolutions: list[HloInstruction], by_name: dict[str, HloInstruction]) -> ConvRole | None:
    """`conv` as a gradient of another convolution F of the computation: same kernel (input gradient) or same input
    (filter gradient), output of the other operand's dimensions, and downstream of F or marked as a gradient
    where F is not (the two are each other's adjoint, so shapes alone cannot tell which is the forward)."""
    lhs, rhs = (_origin(name, by_name) for name in conv.operands[:2])
    upstream = _ancestors(conv.name, by_name)
    for forward in convolutions:
        if forward is conv:
            continue
        f_lhs, f_rhs = (_origin(name, by_name) for name in forward.operands[:2])
        after = forward.name in upstream
        if (rhs == f_rhs and lhs != f_lhs and _same_dims(conv.shape, _dims(forward.operands[0], by_name))
                and (after or (_transposed(conv, by_name) and not _transposed(forward, by_name)))):
            return ConvRole("input", forward.name, f"its kernel is {forward.name}'s kernel and its output has the "
                                                   f"dimensions of {forward.name}'s input")
        if (lhs == f_lhs and rhs != f_rhs and _same_dims(conv.shape, _dims(forward.operands[1], by_name))
                and (after or (_gathers(conv) and not _gathers(forward)))):
            return ConvRole("filter", forward.name, f"its input is {forward.name}'s input and its output has the "
                                                    f"dimensions of {forward.name}'s kernel")
    return None


def _alone(conv: HloInstruction, by_name: dict[str, HloInstruction]) -> ConvRole | None:
    if any(d.lhs_dilate > 1 for d in conv.window or []):
        return ConvRole("input", None, "lhs_dilate > 1: a transposed convolution (the input gradient of a strided one)")
    if _transposed(conv, by_name):
        return ConvRole("input", None, "its kernel is reversed: a transposed convolution")
    if _gathers(conv):
        return ConvRole("filter", None, "its window is dilated or larger than its output: a weight gradient")
    return None
