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
from dataclasses import dataclass, field
from pathlib import Path

from nforensics.artifacts.models import BackToBack, CallSite, KernelFacts, LoopFacts, NkiReport
from nforensics.artifacts.nki_tree import SourceTree, bound_constants, const_int
from nforensics.errors import InputError

MAX_SOURCE_BYTES = 8 * 2**20
ALLOCATORS = {"ndarray", "zeros", "ones", "full", "empty", "rand", "zeros_like", "ones_like", "full_like", "empty_like"}
DEFAULT_BUFFER = "sbuf"  # nl.ndarray & co. allocate in SBUF unless given buffer=
BUFFERS = ("shared_hbm", "private_hbm", "hbm", "sbuf", "psum")
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


class _Module(SourceTree):
    """Kernels, scopes and the calls in each scope, in the order they run."""

    def __init__(self, tree: ast.Module) -> None:
        super().__init__(tree)
        self.constants = bound_constants(tree.body, {})
        self.kernels: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}  # name used to call it -> definition
        self.scopes: list[_Scope] = [_Scope("<module>", tree, env=self.constants)]
        self._collect(tree.body, prefix="", cls=None)
        # bare name -> scope, for plain functions (nested ones too) called by name
        self.functions = {s.name.rsplit(".", 1)[-1]: s.name for s in self.scopes[1:] if s.cls is None}
        self.by_name = {s.name: s for s in self.scopes}
        self.classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        self.events = {s.name: self._events(s) for s in self.scopes}
    def _collect(self, body: list[ast.stmt], prefix: str, cls: str | None) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{node.name}"
                self.scopes.append(_Scope(name, node, cls, bound_constants(node.body, self.constants)))
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
        env = bound_constants(definition.body, self.constants)  # type: ignore[attr-defined]
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
            grid = [const_int(d, scope.env) for d in dims]
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
