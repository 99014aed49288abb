"""What Python source says without running it: dotted names with import aliases resolved, names bound once
to a constant int, and the loops around each node with their trip counts (NKI ranges, range(), literals).
The base of the NKI source reader (nforensics/artifacts/nki_source.py); the rules are in docs/artifacts.md.
"""

from __future__ import annotations

import ast
import math
from collections import Counter
from collections.abc import Iterator

# Used when a file calls nl./nisa. without importing them (snippets, notebooks cut into files).
CONVENTIONAL_ALIASES = {"nl": "nki.language", "nisa": "nki.isa", "nki": "nki"}
NKI_RANGES = {"affine_range", "sequential_range", "static_range"}


class SourceTree:
    """A parsed module's names and loops; the NKI reader builds its scopes and counts on it."""

    def __init__(self, tree: ast.Module) -> None:
        self.aliases = import_aliases(tree)

    def qualname(self, expr: ast.AST) -> str | None:
        """Dotted name of an expression with import aliases resolved: `nisa.nc_matmul` -> nki.isa.nc_matmul."""
        name: str | None
        if isinstance(expr, ast.Name):
            name = self.aliases.get(expr.id) or CONVENTIONAL_ALIASES.get(expr.id, expr.id)
        elif isinstance(expr, ast.Attribute):
            base = self.qualname(expr.value)
            name = f"{base}.{expr.attr}" if base else None
        else:
            return None
        return name.removeprefix("neuronxcc.") if name else None

    def loop(self, node: ast.AST, env: dict[str, int]) -> tuple[str, int | None]:
        """Kind and constant trip count of a for/while loop or a comprehension generator."""
        if isinstance(node, ast.While):
            return "while", None
        iterator = node.iter  # type: ignore[attr-defined]
        if not isinstance(iterator, ast.Call):
            return "for", literal_length(iterator)
        name = (self.qualname(iterator.func) or "").rsplit(".", 1)[-1]
        if name not in NKI_RANGES and name != "range":
            return "for", None
        found = [const_int(a, env) for a in iterator.args]
        bounds = [b for b in found if b is not None]
        if not bounds or len(bounds) != len(found) or len(bounds) > 3:
            return name, None
        if len(bounds) == 1:
            start, stop, step = 0, bounds[0], 1
        else:
            start, stop, step = bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else 1
        return name, max(0, math.ceil((stop - start) / step)) if step else None

    def _walk(self, node: ast.AST, env: dict[str, int],
              loops: tuple[int | None, ...] = ()) -> Iterator[tuple[ast.AST, tuple[int | None, ...]]]:
        """Nodes under `node` (not inside nested defs) with the trip counts of the loops around each.

        A loop whose body syncs (mark_step / torch_xla.sync) runs one graph per iteration: it counts as 1.
        """
        for child in ast.iter_child_nodes(node):
            yield from self._visit(child, env, loops)

    def _visit(self, node: ast.AST, env: dict[str, int],
               loops: tuple[int | None, ...]) -> Iterator[tuple[ast.AST, tuple[int | None, ...]]]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return
        yield node, loops
        if isinstance(node, (ast.For, ast.AsyncFor)):
            inside = loops + (1 if self._syncs(node) else self.loop(node, env)[1],)
            for part in (node.target, node.iter, *node.orelse):
                yield from self._visit(part, env, loops)
            for part in node.body:
                yield from self._visit(part, env, inside)
        elif isinstance(node, ast.While):
            inside = loops + (1 if self._syncs(node) else None,)
            for part in (node.test, *node.body):
                yield from self._visit(part, env, inside)
            for part in node.orelse:
                yield from self._visit(part, env, loops)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inside = loops + tuple(self.loop(g, env)[1] for g in node.generators)
            for generator in node.generators:
                yield from self._visit(generator.iter, env, loops)
                for condition in generator.ifs:
                    yield from self._visit(condition, env, inside)
            for element in [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]:
                yield from self._visit(element, env, inside)
        else:
            yield from self._walk(node, env, loops)

    def _is_sync(self, call: ast.Call) -> bool:
        name = self.qualname(call.func) or ""
        return name.endswith("mark_step") or name in ("torch_xla.sync", "torch_xla.core.xla_model.sync")

    def _syncs(self, node: ast.AST) -> bool:
        return any(isinstance(n, ast.Call) and self._is_sync(n) for n in ast.walk(node))


def import_aliases(tree: ast.Module) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                aliases[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def bound_constants(body: list[ast.stmt], outer: dict[str, int]) -> dict[str, int]:
    """Names assigned exactly once in this body to a constant integer expression (HIDDEN = 2048, N = 2 * K)."""
    env = dict(outer)
    assigned: Counter[str] = Counter()
    for node in body:
        for target in node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]:
            if isinstance(target, ast.Name):
                assigned[target.id] += 1
    for node in body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            value = const_int(node.value, env)
            if assigned[name] == 1 and value is not None:
                env[name] = value
            else:
                env.pop(name, None)
    return env


def const_int(node: ast.AST, env: dict[str, int]) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = const_int(node.operand, env)
        return -value if value is not None else None
    if isinstance(node, ast.BinOp):
        left, right = const_int(node.left, env), const_int(node.right, env)
        if left is None or right is None:
            return None
        operations = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__, ast.FloorDiv: int.__floordiv__}
        operation = operations.get(type(node.op))
        if operation and not (isinstance(node.op, ast.FloorDiv) and right == 0):
            return operation(left, right)
    return None


def literal_length(node: ast.AST) -> int | None:
    return len(node.elts) if isinstance(node, (ast.List, ast.Tuple)) else None
