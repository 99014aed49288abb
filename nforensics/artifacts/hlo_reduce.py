"""The entry computation of an HLO module as a graph the reducer cuts: which instructions are worth removing, in
what order, what lies upstream of one, how far each is from the outputs, and what a cut removed.

The reducer's moves (nforensics/experiments/hlo_reduce.py) are sets of *ops*: entry instructions that are
neither parameters nor leaves (a constant, an iota). Parameters and leaves follow the ops that use them
(nforensics/artifacts/hlo_write.py sub_module), so every set of ops is a valid module.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable

from nforensics.artifacts.hlo_write import entry_computation, instruction_count, is_leaf, sub_module


@dataclass(frozen=True)
class Removed:
    """What a reduction took out of a module."""

    instructions: tuple[int, int]  # before, after (every computation)
    computations: tuple[int, int]
    parameters: tuple[int, int]  # of the entry
    ops: dict[str, int]  # opcode -> entry instructions removed
    cut: list[str]  # instructions whose values became parameters: "name (shape opcode)"
    shrunk: list[str]  # parameters whose shapes shrank: "name: f32[1,32,8,8] -> f32[1,1,8,8]"


class EntryGraph:
    def __init__(self, module: Any) -> None:
        self.module = module
        entry = entry_computation(module)
        self.by_id = {i.id: i for i in entry.instructions}
        self.order = {i.id: n for n, i in enumerate(entry.instructions)}
        self.ops = [i.id for i in entry.instructions if i.opcode != "parameter" and not is_leaf(i)]
        self.users: dict[int, list[int]] = {i: [] for i in self.by_id}
        for instruction in entry.instructions:
            for operand in dict.fromkeys(instruction.operand_ids):
                self.users[operand].append(instruction.id)

    def name(self, op: int) -> str:
        return self.by_id[op].name

    def sorted(self, ops: Iterable[int]) -> list[int]:
        return sorted(ops, key=self.order.__getitem__)

    def cone(self, op: int, within: frozenset[int]) -> frozenset[int]:
        """`op` and every op of `within` upstream of it."""
        seen, todo = {op}, [op]
        while todo:
            for operand in self.by_id[todo.pop()].operand_ids:
                if operand in within and operand not in seen:
                    seen.add(operand)
                    todo.append(operand)
        return frozenset(seen)

    def depths(self, ops: frozenset[int]) -> dict[int, int]:
        """Each op's distance (in edges) to the nearest op of `ops` that no op of `ops` uses: 0 for the outputs."""
        depth = {op: 0 for op in ops if not any(u in ops for u in self.users[op])}
        frontier = list(depth)
        while frontier:
            following = []
            for op in frontier:
                for operand in self.by_id[op].operand_ids:
                    if operand in ops and operand not in depth:
                        depth[operand] = depth[op] + 1
                        following.append(operand)
            frontier = following
        return depth

    def write(self, ops: Iterable[int]) -> Any:
        return sub_module(self.module, ops)

    def removed(self, reduced: Any) -> Removed:
        kept = {i.id: i for i in entry_computation(reduced).instructions}
        original = self.by_id.values()
        params = sum(i.opcode == "parameter" for i in original), sum(i.opcode == "parameter" for i in kept.values())
        gone = Counter(i.opcode for i in original if i.id not in kept)
        cut = [f"{i.name} ({_shape(i.shape)} {i.opcode})" for i in original
               if i.id in kept and i.opcode != "parameter" and kept[i.id].opcode == "parameter"]
        shrunk = [f"{i.name}: {_shape(self.by_id[i.id].shape)} -> {_shape(i.shape)}" for i in kept.values()
                  if i.opcode == "parameter" and list(i.shape.dimensions) != list(self.by_id[i.id].shape.dimensions)]
        return Removed((instruction_count(self.module), instruction_count(reduced)),
                       (len(self.module.computations), len(reduced.computations)), params, dict(gone.most_common()), cut,
                       shrunk)


def _shape(shape: Any) -> str:
    from nforensics.artifacts.hlo_proto import message_classes

    dtype = message_classes()["dtypes"].get(shape.element_type, "?")
    return f"{dtype}[{','.join(str(d) for d in shape.dimensions)}]"
