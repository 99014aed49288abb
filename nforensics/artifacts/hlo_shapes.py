"""Shrinking the shapes of an HLO module the reducer has cut down: which dimensions of the entry computation must
keep one size together (a class), which must keep the size they have, and the module with one class set to a
new size.

Each opcode says how its value's dimensions follow its operands' (the table in `_relate`): an elementwise op's
are its operands', a broadcast or transpose maps them by its `dimensions`, a reduce drops the reduced ones, a dot
pairs its batch and contracting dimensions, a convolution its batch and feature dimensions, a reshape the
dimensions it leaves whole. Dimensions related so are one class and change size together, so the module stays
one XLA accepts. Everything the table cannot vouch for keeps its size:
- every dimension of an op the table does not know, and of its operands (a custom-call, a gather, a fusion: its
  semantics or its called computation depend on the sizes);
- a constant's (its literal holds that many values), a convolution's spatial dimensions (window, stride and
  padding fix them), a concatenation's joined dimension, a slice's that does not span the whole operand, a
  reshape's that split or merge, a dynamic dimension.
A parameter's dimensions are free: the reducer's module takes whatever it is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any, Iterator

from nforensics.artifacts.hlo_write import entry_computation, program_shapes

Dim = tuple[int, tuple[int, ...], int]  # instruction id, path into its tuple shape, dimension

# Ops whose value has its operands' shape, dimension for dimension (an operand of rank 0 is a scalar broadcast by
# the op itself, as clamp's bounds may be).
_ELEMENTWISE = frozenset({
    "abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "clz", "compare", "complex", "convert", "copy", "cosine",
    "divide", "erf", "exponential", "exponential-minus-one", "floor", "imag", "is-finite", "log", "log-plus-one",
    "logistic", "map", "maximum", "minimum", "multiply", "negate", "not", "or", "popcnt", "power", "real",
    "reduce-precision", "remainder", "round-nearest-afz", "round-nearest-even", "rsqrt", "select",
    "shift-left", "shift-right-arithmetic", "shift-right-logical", "sign", "sine", "sqrt", "stochastic-convert",
    "subtract", "tan", "tanh", "xor", "all-reduce", "collective-permute", "optimization-barrier",
})
_FREE = frozenset({"parameter", "iota"})  # nothing to keep: the writer gives them any shape


@dataclass(frozen=True)
class DimClass:
    """Dimensions that keep one size together, and that size."""

    members: tuple[Dim, ...]
    size: int


def _array_dims(shape: Any, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], int]]:
    if shape.tuple_shapes:
        for index, part in enumerate(shape.tuple_shapes):
            yield from _array_dims(part, (*path, index))
        return
    for d in range(len(shape.dimensions)):
        yield path, d


def _at(shape: Any, path: tuple[int, ...]) -> Any:
    for index in path:
        shape = shape.tuple_shapes[index]
    return shape


def element_count(module: Any) -> int:
    """How many array elements the entry computation's values hold: what shrinking shapes makes smaller."""
    return sum(prod(_at(i.shape, path).dimensions) for i in entry_computation(module).instructions
               for path in {p for p, _ in _array_dims(i.shape)})


class ShapeClasses:
    def __init__(self, module: Any) -> None:
        self.by_id = {i.id: i for i in entry_computation(module).instructions}
        self.parent: dict[Dim, Dim] = {}
        self.fixed: set[Dim] = set()
        for instruction in self.by_id.values():
            for path, d in _array_dims(instruction.shape):
                dim = (instruction.id, path, d)
                self.parent[dim] = dim
                if _at(instruction.shape, path).is_dynamic_dimension[d:d + 1] == [True]:
                    self.fixed.add(dim)
        for instruction in self.by_id.values():
            self._relate(instruction)

    def _find(self, dim: Dim) -> Dim:
        while self.parent[dim] != dim:
            self.parent[dim] = self.parent[self.parent[dim]]
            dim = self.parent[dim]
        return dim

    def _same(self, a: Dim, b: Dim) -> None:
        self.parent[self._find(a)] = self._find(b)

    def _keep(self, instruction: Any) -> None:
        self.fixed.update((instruction.id, path, d) for path, d in _array_dims(instruction.shape))

    def _relate(self, i: Any) -> None:  # noqa: C901 - one table of opcodes, each a few lines
        op, operands = i.opcode, [self.by_id[o] for o in i.operand_ids]
        x = operands[0] if operands else None
        rank = len(i.shape.dimensions)

        def pair(out_dim: int, operand: Any, dim: int) -> None:
            self._same((i.id, (), out_dim), (operand.id, (), dim))

        if op in _FREE:
            return
        if i.shape.tuple_shapes and op not in ("tuple", "get-tuple-element"):
            op = "unknown"  # a variadic reduce, an all-reduce of a tuple: not read here
        if op in _ELEMENTWISE and all(not o.shape.tuple_shapes and len(o.shape.dimensions) in (0, rank) for o in operands):
            for operand in (o for o in operands if len(o.shape.dimensions) == rank):
                for d in range(rank):
                    pair(d, operand, d)
        elif op == "broadcast" and x is not None:
            for d, out_dim in enumerate(i.dimensions):
                pair(out_dim, x, d)
        elif op == "transpose" and x is not None:
            for out_dim, d in enumerate(i.dimensions):
                pair(out_dim, x, d)
        elif op == "reduce" and len(operands) == 2 and x is not None:
            kept = [d for d in range(len(x.shape.dimensions)) if d not in set(i.dimensions)]
            for out_dim, d in enumerate(kept):
                pair(out_dim, x, d)
        elif op == "reshape" and x is not None:
            self._reshape(i, x)
        elif op == "dot" and len(operands) == 2:
            self._dot(i, *operands)
        elif op == "convolution" and len(operands) == 2 and i.feature_group_count <= 1 and i.batch_group_count <= 1:
            c = i.convolution_dimension_numbers
            lhs, rhs = operands
            pair(c.output_batch_dimension, lhs, c.input_batch_dimension)
            pair(c.output_feature_dimension, rhs, c.kernel_output_feature_dimension)
            self._same((lhs.id, (), c.input_feature_dimension), (rhs.id, (), c.kernel_input_feature_dimension))
            self.fixed.update((lhs.id, (), d) for d in c.input_spatial_dimensions)
            self.fixed.update((rhs.id, (), d) for d in c.kernel_spatial_dimensions)
            self.fixed.update((i.id, (), d) for d in c.output_spatial_dimensions)
        elif op == "concatenate" and i.dimensions:
            joined = i.dimensions[0]
            for operand in operands:
                self.fixed.add((operand.id, (), joined))
                for d in range(rank):
                    if d != joined:
                        pair(d, operand, d)
            self.fixed.add((i.id, (), joined))
        elif op == "slice" and x is not None and len(i.slice_dimensions) == rank:
            for d, bounds in enumerate(i.slice_dimensions):
                if (bounds.start, bounds.stride) == (0, 1) and bounds.limit == x.shape.dimensions[d]:
                    pair(d, x, d)
                else:
                    self.fixed.update({(i.id, (), d), (x.id, (), d)})
        elif op == "get-tuple-element" and x is not None:
            for path, d in _array_dims(i.shape):
                self._same((i.id, path, d), (x.id, (i.tuple_index, *path), d))
        elif op == "tuple":
            for index, operand in enumerate(operands):
                for path, d in _array_dims(operand.shape):
                    self._same((i.id, (index, *path), d), (operand.id, path, d))
        else:  # a constant, or an op not in this table: its value and its operands keep their shapes
            for instruction in (i, *operands):
                self._keep(instruction)

    def _reshape(self, i: Any, x: Any) -> None:
        """Pair the dimensions a reshape keeps whole: a run of equal products with one dimension on each side. A
        dimension it splits or merges keeps its size; a dimension of size 1 is set aside (it cannot shrink)."""
        ins, outs = list(x.shape.dimensions), list(i.shape.dimensions)
        a = b = 0
        while a < len(ins) or b < len(outs):
            if a < len(ins) and ins[a] == 1 or b >= len(outs):
                self.fixed.add((x.id, (), a))
                a += 1
                continue
            if outs[b] == 1 or a >= len(ins):
                self.fixed.add((i.id, (), b))
                b += 1
                continue
            block_in, block_out = [a], [b]
            left, right = ins[a], outs[b]
            while left != right:
                if left < right and a + len(block_in) < len(ins):
                    block_in.append(a + len(block_in))
                    left *= ins[block_in[-1]]
                elif left > right and b + len(block_out) < len(outs):
                    block_out.append(b + len(block_out))
                    right *= outs[block_out[-1]]
                else:
                    break  # the products never meet: not a reshape XLA would accept; keep what is left
            if len(block_in) == len(block_out) == 1 and left == right:
                self._same((i.id, (), b), (x.id, (), a))
            else:
                self.fixed.update({*((x.id, (), d) for d in block_in), *((i.id, (), d) for d in block_out)})
            a, b = a + len(block_in), b + len(block_out)

    def _dot(self, i: Any, lhs: Any, rhs: Any) -> None:
        n = i.dot_dimension_numbers
        lhs_free = [d for d in range(len(lhs.shape.dimensions))
                    if d not in set(n.lhs_batch_dimensions) | set(n.lhs_contracting_dimensions)]
        rhs_free = [d for d in range(len(rhs.shape.dimensions))
                    if d not in set(n.rhs_batch_dimensions) | set(n.rhs_contracting_dimensions)]
        out = 0
        for left, right in zip(n.lhs_batch_dimensions, n.rhs_batch_dimensions, strict=False):
            self._same((i.id, (), out), (lhs.id, (), left))
            self._same((i.id, (), out), (rhs.id, (), right))
            out += 1
        for left, right in zip(n.lhs_contracting_dimensions, n.rhs_contracting_dimensions, strict=False):
            self._same((lhs.id, (), left), (rhs.id, (), right))
        for operand, free in ((lhs, lhs_free), (rhs, rhs_free)):
            for d in free:
                self._same((i.id, (), out), (operand.id, (), d))
                out += 1

    def classes(self) -> list[DimClass]:
        """The classes that may shrink (no member keeps its size, the size is above 1), largest first."""
        groups: dict[Dim, list[Dim]] = {}
        for dim in self.parent:
            groups.setdefault(self._find(dim), []).append(dim)
        fixed = {self._find(dim) for dim in self.fixed}
        found = []
        for root, members in groups.items():
            size = self._size(members[0])
            if root not in fixed and size > 1:
                found.append(DimClass(tuple(sorted(members)), size))
        return sorted(found, key=lambda c: (-c.size, c.members))

    def _size(self, dim: Dim) -> int:
        iid, path, d = dim
        return int(_at(self.by_id[iid].shape, path).dimensions[d])

    def resized(self, module: Any, dim_class: DimClass, size: int) -> Any:
        """A copy of `module` (this module, or one resized from it) with every dimension of `dim_class` of size
        `size`: the instructions' shapes, the slices that span them, and both program shapes."""
        new = type(module)()
        new.CopyFrom(module)
        entry = entry_computation(new)
        by_id = {i.id: i for i in entry.instructions}
        for iid, path, d in dim_class.members:
            instruction = by_id[iid]
            _at(instruction.shape, path).dimensions[d] = size
            if instruction.opcode == "slice" and not path:
                instruction.slice_dimensions[d].limit = size
        program_shapes(entry, new)
        return new
