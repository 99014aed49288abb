"""Facts about NKI kernels and the code that calls them, read with Python `ast` (no nki import, nothing run).

Per `@nki.jit` kernel: nki.isa calls (nc_matmul, sendrecv, core_barrier, ...), SBUF/PSUM/HBM allocations,
program_id use and loops with constant trip counts. For the calling code: grid launches `kernel[N](...)`,
an estimate of how many times each kernel runs per traced graph, and NKI launches that follow each other
with no `xm.mark_step()` / `torch_xla.sync()` between them (XLA's lazy mode fuses those into one graph).
The counting rules and their limits are in docs/artifacts.md.
"""

from __future__ import annotations

import ast
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from forensics.artifacts.models import BackToBack, CallSite, KernelFacts, LoopFacts, NkiReport
from forensics.errors import InputError

MAX_SOURCE_BYTES = 8 * 2**20
# Used when a file calls nl./nisa. without importing them (snippets, notebooks cut into files).
CONVENTIONAL_ALIASES = {"nl": "nki.language", "nisa": "nki.isa", "nki": "nki"}
ALLOCATORS = {"ndarray", "zeros", "ones", "full", "empty", "rand", "zeros_like", "ones_like", "full_like", "empty_like"}
DEFAULT_BUFFER = "sbuf"  # nl.ndarray & co. allocate in SBUF unless given buffer=
BUFFERS = ("shared_hbm", "private_hbm", "hbm", "sbuf", "psum")
NKI_RANGES = {"affine_range", "sequential_range", "static_range"}
UNKNOWN_REPEAT = 2  # a loop or repeated module without a constant count runs the call at least twice
INSTANCE_CALLED = {"forward", "__call__"}  # methods that run when a module instance is called


@dataclass
class _Scope:
    name: str  # Class.method, function, or <module>
    node: ast.AST
    cls: str | None = None
    env: dict[str, int] = field(default_factory=dict)  # names bound once to a constant int here


@dataclass
class _Event:
    """A call in a scope, in evaluation order, with the repeat factor of the loops around it."""

    line: int
    kind: str  # kernel / function / method / class / sync
    name: str  # kernel, scope (function / method), class or sync call
    grid: list[int | None] | None = None
    end: tuple[int, int] = (0, 0)
    repeat: int = 1
    exact: bool = True


def read_nki_source(path: Path | str) -> NkiReport:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if len(raw) > MAX_SOURCE_BYTES:
        raise InputError(f"{path}: {len(raw)} bytes is too large for a kernel source (limit {MAX_SOURCE_BYTES})")
    try:
        tree = ast.parse(raw.decode("utf-8"), filename=str(path))
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 Python source") from None
    except SyntaxError as exc:
        raise InputError(f"{path}: not valid Python: line {exc.lineno}: {exc.msg}") from None
    return _Module(tree).report(str(path))


class _Module:
    def __init__(self, tree: ast.Module) -> None:
        self.aliases = _aliases(tree)
        self.constants = _constants(tree.body, {})
        self.kernels: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}  # name used to call it -> definition
        self.scopes: list[_Scope] = [_Scope("<module>", tree, env=self.constants)]
        self._collect(tree.body, prefix="", cls=None)
        # bare name -> scope, for plain functions (nested ones too) called by name
        self.functions = {s.name.rsplit(".", 1)[-1]: s.name for s in self.scopes[1:] if s.cls is None}
        self.by_name = {s.name: s for s in self.scopes}
        self.classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        self.events = {s.name: self._events(s) for s in self.scopes}

    # ------------------------------------------------------------ names

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

    def _collect(self, body: list[ast.stmt], prefix: str, cls: str | None) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{node.name}"
                self.scopes.append(_Scope(name, node, cls, _constants(node.body, self.constants)))
                if any(self.qualname(d.func if isinstance(d, ast.Call) else d) == "nki.jit" for d in node.decorator_list):
                    self.kernels[node.name] = node
                self._collect(node.body, f"{name}.", None)
            elif isinstance(node, ast.ClassDef):
                self._collect(node.body, f"{prefix}{node.name}.", node.name)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                # kernel = nki.jit(function)
                call = node.value
                if self.qualname(call.func) == "nki.jit" and call.args and isinstance(call.args[0], ast.Name):
                    definition = next((n for n in body if isinstance(n, ast.FunctionDef) and n.name == call.args[0].id), None)
                    for target in node.targets:
                        if definition and isinstance(target, ast.Name):
                            self.kernels[target.id] = definition

    # ------------------------------------------------------------ loops and constants

    def loop(self, node: ast.AST, env: dict[str, int]) -> tuple[str, int | None]:
        """Kind and constant trip count of a for/while loop or a comprehension generator."""
        if isinstance(node, ast.While):
            return "while", None
        iterator = node.iter  # type: ignore[attr-defined]
        if not isinstance(iterator, ast.Call):
            return "for", _literal_length(iterator)
        name = (self.qualname(iterator.func) or "").rsplit(".", 1)[-1]
        if name not in NKI_RANGES and name != "range":
            return "for", None
        found = [_const_int(a, env) for a in iterator.args]
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

    # ------------------------------------------------------------ kernels

    def kernel_facts(self, name: str, definition: ast.FunctionDef | ast.AsyncFunctionDef) -> KernelFacts:
        facts = KernelFacts(name=name, line=definition.lineno)
        isa: Counter[str] = Counter()
        buffers: Counter[str] = Counter()
        self._count(definition, facts, isa, buffers, (), {definition.name})
        facts.isa_calls = dict(isa)
        facts.allocations = dict(buffers)
        facts.nc_matmul_calls = isa["nc_matmul"]
        facts.sbuf_allocations = buffers["sbuf"]
        facts.psum_allocations = buffers["psum"]
        facts.hbm_allocations = buffers["hbm"] + buffers["shared_hbm"] + buffers["private_hbm"]
        facts.uses_sendrecv = isa["sendrecv"] > 0
        facts.uses_core_barrier = isa["core_barrier"] > 0
        return facts

    def _count(self, definition: ast.AST, facts: KernelFacts, isa: Counter[str], buffers: Counter[str],
               outer: tuple[int | None, ...], seen: set[str]) -> None:
        """Count ISA calls and allocations; helper functions the kernel calls are traced into it, so they count."""
        env = _constants(definition.body, self.constants)  # type: ignore[attr-defined]
        for node, inner in self._walk(definition, env):
            loops = outer + inner
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                kind, trip = self.loop(node, env)
                facts.loops.append(LoopFacts.model_validate({"kind": kind, "line": node.lineno, "trip_count": trip}))
            if not isinstance(node, ast.Call):
                continue
            called = self.qualname(node.func) or ""
            module, _, function = called.rpartition(".")
            if module == "nki.isa":
                isa[function] += 1
                if function == "nc_matmul":
                    facts.nc_matmul_calls_unrolled += math.prod(t or 1 for t in loops)
            elif module == "nki.language" and function in ALLOCATORS:
                buffers[self._buffer(node)] += 1
            elif called in ("nki.language.program_id", "nki.language.num_programs"):
                facts.uses_program_id = True
            elif isinstance(node.func, ast.Name) and node.func.id in self.functions and node.func.id not in seen:
                helper = self.by_name[self.functions[node.func.id]].node
                self._count(helper, facts, isa, buffers, loops, seen | {node.func.id})

    def _buffer(self, call: ast.Call) -> str:
        keyword = next((k for k in call.keywords if k.arg == "buffer"), None)
        if keyword is None:
            return DEFAULT_BUFFER
        names = {n.attr for n in ast.walk(keyword.value) if isinstance(n, ast.Attribute)}
        names |= {n.id for n in ast.walk(keyword.value) if isinstance(n, ast.Name)}
        return next((b for b in BUFFERS if b in names), "other")

    # ------------------------------------------------------------ calling code

    def _events(self, scope: _Scope) -> list[_Event]:
        events = []
        for node, loops in self._walk(scope.node, scope.env):
            if not isinstance(node, ast.Call):
                continue
            event = self._classify(node, scope)
            if event:
                event.end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
                event.repeat = math.prod(UNKNOWN_REPEAT if t is None else t for t in loops)
                event.exact = None not in loops
                events.append(event)
        return sorted(events, key=lambda e: e.end)  # inner calls finish, and so run, first

    def _classify(self, call: ast.Call, scope: _Scope) -> _Event | None:
        func = call.func
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) and func.value.id in self.kernels:
            dims = func.slice.elts if isinstance(func.slice, ast.Tuple) else [func.slice]
            grid = [_const_int(d, scope.env) for d in dims]
            return _Event(call.lineno, "kernel", func.value.id, grid=grid)
        if isinstance(func, ast.Name):
            if func.id in self.kernels:
                return _Event(call.lineno, "kernel", func.id)
            if func.id in self.functions:
                return _Event(call.lineno, "function", self.functions[func.id])
            if func.id in self.classes:
                return _Event(call.lineno, "class", func.id)
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")
                and scope.cls and f"{scope.cls}.{func.attr}" in self.by_name):
            return _Event(call.lineno, "method", f"{scope.cls}.{func.attr}")
        if self._is_sync(call):
            return _Event(call.lineno, "sync", self.qualname(func) or "sync")
        return None

    def multiplicity(self, scope_name: str, seen: frozenset[str] = frozenset()) -> tuple[int, bool]:
        """How many times a scope runs per traced graph (estimate, and whether it is exact)."""
        scope = self.by_name.get(scope_name)
        if scope is None or scope.name == "<module>" or scope_name in seen:
            return 1, True
        method = scope.name.rsplit(".", 1)[-1]
        if scope.cls and method in INSTANCE_CALLED:
            # A module's forward runs once per instance: count where the class is instantiated.
            sites = [e for events in self.events.values() for e in events if e.kind == "class" and e.name == scope.cls]
            if not sites:
                return 1, True
            return sum(e.repeat for e in sites), all(e.exact for e in sites)
        total, exact = 0, True
        for caller, events in self.events.items():
            for event in events:
                if event.kind in ("function", "method") and event.name == scope.name:
                    times, caller_exact = self.multiplicity(caller, seen | {scope_name})
                    total += event.repeat * times
                    exact = exact and event.exact and caller_exact
        return (total, exact) if total else (1, True)

    def nki_callers(self) -> dict[str, str]:
        """Functions and methods that launch a kernel, directly or through each other -> the kernel."""
        launches: dict[str, str] = {}
        changed = True
        while changed:
            changed = False
            for scope, events in self.events.items():
                if scope in launches or scope == "<module>":
                    continue
                for event in events:
                    kernel = event.name if event.kind == "kernel" else launches.get(event.name)
                    if kernel and event.kind != "class":
                        launches[scope] = kernel
                        changed = True
                        break
        return launches

    def back_to_back(self) -> list[BackToBack]:
        callers = self.nki_callers()
        pairs = []
        for scope, events in self.events.items():
            previous: _Event | None = None
            for event in events:
                if event.kind == "sync":
                    previous = None
                    continue
                if event.kind != "kernel" and event.name not in callers:
                    continue
                if previous:
                    pairs.append(BackToBack(scope=scope, first=self._label(previous, callers), first_line=previous.line,
                                            second=self._label(event, callers), second_line=event.line))
                previous = event
        return pairs

    @staticmethod
    def _label(event: _Event, callers: dict[str, str]) -> str:
        return event.name if event.kind == "kernel" else f"{event.name}() -> {callers[event.name]}"

    # ------------------------------------------------------------ report

    def report(self, path: str) -> NkiReport:
        report = NkiReport(path=path)
        for name, definition in self.kernels.items():
            facts = self.kernel_facts(name, definition)
            total, exact = 0, True
            for scope, events in self.events.items():
                for event in events:
                    if event.kind == "kernel" and event.name == name:
                        times, scope_exact = self.multiplicity(scope)
                        facts.call_sites.append(
                            CallSite(line=event.line, scope=scope, grid=event.grid, repeat=event.repeat, scope_runs=times)
                        )
                        total += event.repeat * times
                        exact = exact and event.exact and scope_exact
                        grid = math.prod(d or 1 for d in event.grid) if event.grid else 1
                        facts.grid_max = max(facts.grid_max or 0, grid)
            facts.calls_per_graph, facts.calls_per_graph_exact = total, exact
            report.kernels.append(facts)
        report.back_to_back = self.back_to_back()
        report.sync_calls = sum(e.kind == "sync" for events in self.events.values() for e in events)
        if not self.kernels:
            report.warnings.append("no @nki.jit kernel found")
        return report


def _aliases(tree: ast.Module) -> dict[str, str]:
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


def _constants(body: list[ast.stmt], outer: dict[str, int]) -> dict[str, int]:
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
            value = _const_int(node.value, env)
            if assigned[name] == 1 and value is not None:
                env[name] = value
            else:
                env.pop(name, None)
    return env


def _const_int(node: ast.AST, env: dict[str, int]) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _const_int(node.operand, env)
        return -value if value is not None else None
    if isinstance(node, ast.BinOp):
        left, right = _const_int(node.left, env), _const_int(node.right, env)
        if left is None or right is None:
            return None
        operations = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__, ast.FloorDiv: int.__floordiv__}
        operation = operations.get(type(node.op))
        if operation and not (isinstance(node.op, ast.FloorDiv) and right == 0):
            return operation(left, right)
    return None


def _literal_length(node: ast.AST) -> int | None:
    return len(node.elts) if isinstance(node, (ast.List, ast.Tuple)) else None


def nki_facts(report: NkiReport) -> dict[str, object]:
    """Flat facts for hypothesis evidence rules (keys documented in docs/artifacts.md)."""
    kernels = report.kernels
    facts: dict[str, object] = {
        "nki.kernels": len(kernels),
        "nki.kernel_calls_max": max((k.calls_per_graph for k in kernels), default=0),
        "nki.kernel_calls_exact": all(k.calls_per_graph_exact for k in kernels),
        "nki.sendrecv_kernel_calls": max((k.calls_per_graph for k in kernels if k.uses_sendrecv), default=0),
        "nki.nc_matmul_calls_max": max((k.nc_matmul_calls for k in kernels), default=0),
        "nki.sbuf_allocations_max": max((k.sbuf_allocations for k in kernels), default=0),
        "nki.psum_allocations_max": max((k.psum_allocations for k in kernels), default=0),
        "nki.uses_sendrecv": any(k.uses_sendrecv for k in kernels),
        "nki.uses_core_barrier": any(k.uses_core_barrier for k in kernels),
        "nki.back_to_back_without_sync": bool(report.back_to_back),
    }
    grids = [k.grid_max for k in kernels if k.grid_max is not None]
    if grids:
        facts["nki.grid_max"] = max(grids)
    return facts
