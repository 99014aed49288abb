"""`nforensics reduce --hlo FILE`: shrink an HLO module to the smallest one the user's compile command still fails
on with the expected code.

Every candidate is a set of the entry computation's ops, written as a valid module (nforensics/artifacts/
hlo_write.py: cut values become parameters, unused instructions and computations go), as .pb and as .hlo text,
under a name that is its content's hash, and compiled with the user's command (`{hlo}` is the .pb, `{hlo_text}`
the text) through the experiment runner: the journal, the pool and `--resume` as for every strategy, the oracle
pinned on the expected code (a different failure is not "still failing"). The search, in phases:

1. **prefix**: the shortest prefix of the ops, in the module's (topological) order, that still fails: a search
   over its length, `--workers` points per round (binary with one worker): ceil(log2 n) compiles;
2. **cone**: the last op of that prefix and only what lies upstream of it: one compile;
3. **depth**: only the ops within distance d of the outputs, the rest cut into parameters: the smallest d,
   galloping 0, 1, 3, 7, ... then halving: about 2 log2(d) compiles;
4. **ddmin** (strategies.ddmin) over what is left, for a 1-minimal set of ops: O(k log r) compiles for k
   needed ops among r, r^2 at worst;
5. **shapes**: each class of dimensions that may change size together (nforensics/artifacts/hlo_shapes.py),
   largest first, set to the smallest size that still fails, galloping 1, 2, 4, 8, ... then halving: one
   compile for a class whose failure does not depend on its size, about 2 log2(size) for one that does.

Each phase assumes the failure is monotone in the set it shrinks (a module holding the failing structure
fails); a phase whose candidates do not fail leaves the module as it was, so the answer is always a module that
was compiled and failed. `--budget N` caps the distinct compiles; the smallest failing module found so far is
the answer when it runs out.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from nforensics.artifacts.hlo_reduce import EntryGraph, Removed
from nforensics.artifacts.hlo_shapes import DimClass, ShapeClasses, element_count
from nforensics.artifacts.hlo_write import check_module, instruction_count
from nforensics.artifacts.hlo_write_text import module_text
from nforensics.experiments.plan import Template
from nforensics.experiments.runner import Experiment
from nforensics.experiments.strategies import ddmin

HLO, HLO_TEXT = "hlo", "hlo_text"  # the placeholders a candidate fills


@dataclass
class HloReduceResult:
    reproduced: bool  # the module as given fails with the expected code
    module: Any  # the smallest module that failed (the original when nothing smaller did)
    removed: Removed
    runs: int  # distinct compiles
    phases: dict[str, int] = field(default_factory=dict)  # phase -> compiles it asked for
    exhausted: bool = False  # stopped by --budget
    warnings: list[str] = field(default_factory=list)


class _OutOfBudget(Exception):
    pass


class _Search:
    def __init__(self, exp: Experiment, template: Template, graph: EntryGraph, workdir: Path, batch: int,
                 budget: int | None, fixed: dict[str, str]) -> None:
        self.exp, self.template, self.graph, self.workdir = exp, template, graph, workdir
        self.batch, self.budget, self.fixed = max(1, batch), budget, fixed
        # ((instructions, ops, elements), module): the smallest module that failed
        self.best: tuple[tuple[int, int, int], Any] | None = None
        self.phases: dict[str, int] = {}
        self.phase = "baseline"
        self.warnings: list[str] = []
        self.exhausted = False

    def write(self, module: Any) -> tuple[Path, Path]:
        data = module.SerializeToString(deterministic=True)
        stem = self.workdir / hashlib.sha256(data).hexdigest()[:20]
        pb, text = stem.with_suffix(".pb"), stem.with_suffix(".hlo")
        if not pb.is_file():
            text.write_text(module_text(module), encoding="utf-8")
            pb.write_bytes(data)
        return pb, text

    def run(self, modules: list[Any], sizes: list[int] | None = None) -> list[bool]:
        """Compile each module (all at once, the pool takes `--workers` at a time); True where it still fails."""
        if self.budget is not None:
            left = self.budget - len(self.exp.tested)
            if left < len(modules):
                self.exhausted = True
                modules = modules[: max(left, 0)]
                if not modules:
                    raise _OutOfBudget
        paths = [self.write(m) for m in modules]
        variants = [self.template.variant({**self.fixed, HLO: str(pb), HLO_TEXT: str(text)}) for pb, text in paths]
        before = len(self.exp.tested)
        results = self.exp.run(variants)
        self.phases[self.phase] = self.phases.get(self.phase, 0) + len(self.exp.tested) - before
        for module, result, ops in zip(modules, results, sizes or [0] * len(modules), strict=False):
            # at equal size, fewer ops asked for (a tuple root adds one), then fewer array elements
            size = (instruction_count(module), ops, element_count(module))
            if result.reproduces and (self.best is None or size < self.best[0]):
                self.best = (size, module)
        return [r.reproduces for r in results]

    def test(self, candidates: list[frozenset[int]]) -> list[bool]:
        modules = []
        for ops in candidates:
            module = self.graph.write(ops)
            problems = check_module(module)
            if problems:  # never expected: the writer keeps modules valid; an invalid one is not tried
                self.warnings.append(f"candidate skipped, not a valid module: {problems[0]}")
                return [False] * len(candidates)
            modules.append(module)
        return self.run(modules, [len(ops) for ops in candidates])

    def test_modules(self, modules: list[Any]) -> list[bool]:
        """Candidates that are whole modules (shapes shrunk), each as large in ops as the best so far."""
        ops = self.best[0][1] if self.best else 0
        return self.run(modules, [ops] * len(modules))

    def first(self, candidates: list[Any]) -> int | None:
        """The first candidate (a set of ops, or a module) that still fails, `batch` at a time."""
        for start in range(0, len(candidates), self.batch):
            chunk = candidates[start : start + self.batch]
            results = self.test(chunk) if isinstance(chunk[0], frozenset) else self.test_modules(chunk)
            if True in results:
                return start + results.index(True)
        return None

    def smallest(self, lo: int, hi: int, candidate: Callable[[int], Any]) -> int:
        """The smallest k in (lo, hi] whose candidate fails, given that hi's does (or is taken to): `batch` points
        of the interval per round."""
        while hi - lo > 1:
            step = (hi - lo) / (min(self.batch, hi - lo - 1) + 1)
            points = sorted({lo + max(1, round(step * (i + 1))) for i in range(self.batch)} - {hi})
            points = [p for p in points if lo < p < hi]
            found = self.first([candidate(p) for p in points])
            if found is None:
                lo = points[-1]
            else:
                lo, hi = (points[found - 1] if found else lo), points[found]
        return hi

    def gallop(self, top: int, candidate: Callable[[int], Any]) -> int:
        """The smallest k in [0, top] whose candidate fails (top's is taken to), probing 0, 1, 3, 7, ... first."""
        lo, probe = -1, 0
        while probe < top:
            points: list[int] = []
            while len(points) < self.batch and probe < top:
                points.append(probe)
                probe = 2 * probe + 1
            found = self.first([candidate(p) for p in points])
            if found is not None:
                return self.smallest(points[found - 1] if found else lo, points[found], candidate)
            lo = points[-1]
        return self.smallest(lo, top, candidate)


def reduce_hlo(exp: Experiment, template: Template, module: Any, workdir: Path, batch: int,
               budget: int | None = None, fixed: dict[str, str] | None = None) -> HloReduceResult:
    workdir.mkdir(parents=True, exist_ok=True)
    graph = EntryGraph(module)
    search = _Search(exp, template, graph, workdir, batch, budget, fixed or {})
    try:
        (reproduced,) = search.run([module], [len(graph.ops)])
        if reproduced:
            _phases(search, graph)
    except _OutOfBudget:
        reproduced = search.best is not None
    smallest = search.best[1] if search.best else module
    warnings = search.warnings
    if not reproduced:
        warnings = [*warnings, "the module as given does not fail with the expected code: nothing to reduce"]
    return HloReduceResult(reproduced, smallest, graph.removed(smallest), len(exp.tested), search.phases,
                           search.exhausted, warnings)


def _phases(search: _Search, graph: EntryGraph) -> None:
    ops = graph.ops
    search.phase = "prefix"
    length = search.smallest(0, len(ops), lambda k: frozenset(ops[:k]))
    current = frozenset(ops[:length])
    if not current:
        return
    search.phase = "cone"
    cone = graph.cone(ops[length - 1], current)
    if cone != current and search.test([cone]) == [True]:
        current = cone
    search.phase = "depth"
    depth = graph.depths(current)
    top = max(depth.values())
    if top > 0:
        within = search.gallop(top, lambda d: frozenset(op for op in current if depth[op] <= d))
        current = frozenset(op for op in current if depth[op] <= within)
    search.phase = "ddmin"
    ddmin(graph.sorted(current), lambda sets: search.first([frozenset(s) for s in sets]))
    _shrink_shapes(search, graph)


def _shrink_shapes(search: _Search, graph: EntryGraph) -> None:
    assert search.best is not None
    search.phase = "shapes"
    module = search.best[1]
    if module is graph.module:  # nothing was removed: the module as written, without the fields that name its
        module = graph.write(graph.ops)  # parameters and outputs (an input/output alias would pin their sizes)
    classes = ShapeClasses(module)
    for dim_class in classes.classes():
        # The smallest size that still fails (the class's own size is taken to): candidate k has size k + 1.
        def candidate(k: int, base: Any = module, shrinking: DimClass = dim_class) -> Any:
            return classes.resized(base, shrinking, k + 1)

        size = 1 + search.gallop(dim_class.size - 1, candidate)
        if size < dim_class.size:
            module = classes.resized(module, dim_class, size)
