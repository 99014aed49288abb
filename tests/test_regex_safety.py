"""No regex blow-ups (issue 12): every regular expression of the catalogue and of the code is timed on
adversarial strings, and the catalogue and the fingerprint run in RE2 (linear time) by construction.

A pattern that backtracks (`\\s*-?\\s*X` on a run of spaces, `\\w+\\(\\)` on a run of word characters) takes
seconds to minutes on one long line; here every pattern gets 8 KB strings built to provoke it and must
answer within BOUND_SECONDS. The catalogue's few patterns RE2 cannot run (a lookaround it lacks, a
backreference) are listed in BOUNDED_CATALOGUE: they keep Python's re but only see bounded windows.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import time

import pytest

import nforensics

from conftest import run_cli_text
from nforensics import linear_regex
from nforensics.knowledge import builtin_kb, compiled
from nforensics.linear_regex.necessary import sre_parse

SIZE = 8 * 1024
BOUND_SECONDS = 0.1  # per pattern and string; RE2 answers these in well under a millisecond

# Catalogue patterns RE2 cannot run even after rewriting a trailing lookahead or a leading one-character
# lookbehind: Python's re on windows of linear_regex.WINDOW characters. Add to this list only with a reason
# the pattern cannot be written without the lookaround.
BOUNDED_CATALOGUE = {
    "sig:ncc-ehca005-unknown-custom-call-target:evidence",  # AwsNeuron(?!known names): any other name
    "sig:ncc-evrf015-unknown-custom-call-target:evidence",
    "sig:ncc-evrf035-integer-dot:evidence",  # a flag value list without `dot` or `all`
    "sig:ncc-evrf039-quantizemx-block-size:evidence",  # any block size but 32
    "sig:ncc-evrf040-quantizemx-scale-method:evidence",  # any scale method but EMAX
    "sig:ncc-evrf042-quantizemx-malformed:evidence",  # a backend_config without dtype
    "sig:ncc-evrf052-f8e4m3-after-trn3:evidence",  # float8_e4m3 but not float8_e4m3fn
    "sig:ncc-evrf053-scaled-matmul-contracting-batch-overlap:evidence",  # backreference: the same index twice
    "sig:ncc-evrf060-integer-scatter-compute:evidence",  # a flag value list without `scatter` or `all`
    "sig:nrt-execution-timeout:match",  # not after "(Ignoring)"
    "fam:collectives-bootstrap:runtime_heads",  # a collectives head that is not a registration
    "fam:compiler-internal-crash:frame_paths",  # neuronxcc/ but not its nki/ parts
    "fam:runtime-process-crash:frame_paths",  # runtime libraries when no compiler frame is there
}


def catalogue_patterns() -> list[tuple[str, str]]:
    """(where, pattern) for every regex of the built-in catalogue: signatures, families, stages."""
    kb = builtin_kb()
    found = []
    for s in kb.signatures:
        found += [(f"sig:{s.id}:match", p) for p in s.match.patterns]
        found += [(f"sig:{s.id}:message", s.match.message)] if s.match.message else []
        found += [(f"sig:{s.id}:extract", e.pattern) for e in s.extract]
        found += [(f"sig:{s.id}:evidence", r.pattern) for h in s.hypotheses for r in h.evidence if r.pattern]
    for f in kb.families.values():
        for rule in f.detect:
            for kind in ("runtime_heads", "frame_paths", "frame_code", "exceptions"):
                found += [(f"fam:{f.id}:{kind}", p) for p in getattr(rule, kind)]
        found += [(f"fam:{f.id}:evidence", r.pattern) for h in f.hypotheses for r in h.evidence if r.pattern]
    from nforensics.diagnose.stages import stage_rules

    found += [(f"stage:{rule.stage}", rule.pattern.pattern) for rule in stage_rules()]
    return found


def _patterns_in(value, depth=0):
    if isinstance(value, (re.Pattern, linear_regex.LinearPattern, linear_regex.BoundedPattern)):
        yield value
    elif depth < 3 and isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _patterns_in(item, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for item in value.values():
            yield from _patterns_in(item, depth + 1)


_RE_CALLS = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}


def _inline_patterns(module) -> list[tuple[str, re.Pattern, str]]:
    """The regexes a module writes inline, as a literal in a call of `re` (`re.search(r"...", text)`),
    read off its source (compiled where they are used, so no module variable holds them), with the call."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return []
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RE_CALLS
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            use = "search" if node.func.attr == "compile" else node.func.attr  # (compiled for later: search it)
            found.append((f"{module.__name__}:{node.lineno}", re.compile(node.args[0].value), use))
    return found


def _built_by_cached_functions(module) -> list[tuple[str, object, str]]:
    """The regexes a module builds once in a cached function of no arguments (`daemon_head()`, built from
    a grammar's terminal): called here, as the first line that needs one calls it; with how the module
    uses each (`.match`, else `.search`)."""
    found = []
    source = inspect.getsource(module)
    for name, value in vars(module).items():
        if (callable(value) and hasattr(value, "cache_info") and getattr(value, "__module__", None) == module.__name__
                and not any(p.default is p.empty for p in inspect.signature(value).parameters.values())):
            uses = set(re.findall(rf"\b{name}\(\)\.(\w+)\(", source)) & _RE_CALLS
            found += [(f"{module.__name__}.{name}()", pattern, use) for pattern in _patterns_in(value()) for use in uses or {"search"}]
    return found


def code_patterns() -> list[tuple[str, object]]:
    """(where, compiled pattern) for every regex a module of the package compiles at import."""
    return [(where, pattern) for where, pattern, _ in all_code_patterns() if ":" not in where and not where.endswith("()")]


def all_code_patterns() -> list[tuple[str, object, str]]:
    """(where, compiled pattern, the call that runs it) for every regex of the package: the ones a module
    compiles at import (timed with `search`, the widest), the ones written inline in a call of `re`, and the
    ones a cached builder of no arguments makes."""
    found, seen = [], set()
    for module_info in pkgutil.walk_packages(nforensics.__path__, "nforensics."):
        module = importlib.import_module(module_info.name)
        named = [(f"{module_info.name}.{name}", pattern, "search") for name, value in vars(module).items()
                 if not name.startswith("__") for pattern in _patterns_in(value)]
        for where, pattern, use in [*named, *_inline_patterns(module), *_built_by_cached_functions(module)]:
            key = (pattern.pattern, getattr(pattern, "flags", 0), use)
            if key not in seen:
                seen.add(key)
                found.append((where, pattern, use))
    return found


def _literals(pattern: str) -> list[str]:
    """The literal runs of a pattern (`Please open a support ticket at`, `() got an unexpected`)."""
    try:
        parsed = sre_parse.parse(pattern)
    except Exception:  # noqa: BLE001 - a pattern sre cannot parse has no literal pieces to offer
        return []
    runs, current = [], []

    def walk(items):
        for op, arg in items:
            if op is sre_parse.LITERAL:
                current.append(chr(arg))
                continue
            if current:
                runs.append("".join(current))
                current.clear()
            if op is sre_parse.SUBPATTERN:
                walk(arg[-1])
            elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT):
                walk(arg[2])
            elif op is sre_parse.BRANCH:
                for branch in arg[1]:
                    walk(branch)

    walk(parsed)
    if current:
        runs.append("".join(current))
    return [r for r in runs if r.strip()][:8]


_GENERIC = [" ", "\t", "a", "A", "0", "_", ".", "-", "/a", "a ", "0 ", "-1 ", "1,", "x(", "{", "aA1_", "a\u00e9 "]


def adversarial(pattern: str) -> list[str]:
    """8 KB strings meant to make a backtracking engine work: long runs of what quantifiers eat, and the
    pattern's own literal pieces repeated, alone, joined and between runs of spaces."""
    strings = [(unit * (SIZE // len(unit) + 1))[:SIZE] for unit in _GENERIC]
    pieces = _literals(pattern)
    if pieces:
        joined = "".join(pieces)
        strings.append((joined * (SIZE // len(joined) + 1))[:SIZE])
        strings.append(pieces[0] + " " * SIZE + pieces[-1][:-1])
        strings.append(pieces[0] + "a" * SIZE)
        for piece in pieces:
            strings.append(((piece + " ") * (SIZE // (len(piece) + 1) + 1))[:SIZE])
    return strings


def _slowest(search, strings) -> tuple[float, str]:
    worst, which = 0.0, ""
    for text in strings:
        start = time.perf_counter()
        search(text)
        spent = time.perf_counter() - start
        if spent > BOUND_SECONDS:  # once more: a busy CI machine is not a slow pattern
            start = time.perf_counter()
            search(text)
            spent = min(spent, time.perf_counter() - start)
        if spent > worst:
            worst, which = spent, text[:40]
    return worst, which


def _runner(pattern, use: str):
    """A one-argument call of the pattern the way the code runs it: a substitution or a split goes over the
    whole text, so does finding every match."""
    if use in ("sub", "subn"):
        return lambda text: pattern.sub("", text)
    if use in ("findall", "finditer", "split"):
        return lambda text: list(pattern.finditer(text))
    return getattr(pattern, use)


def test_every_catalogue_pattern_answers_fast_on_adversarial_strings():
    slow = []
    for where, pattern in catalogue_patterns():
        search = compiled(pattern).search if not where.startswith("stage:") else re.compile(pattern).search
        spent, text = _slowest(search, adversarial(pattern))
        if spent > BOUND_SECONDS:
            slow.append(f"{spent:.2f}s {where} {pattern[:80]!r} on {text!r}...")
    assert not slow, "\n".join(slow)


def test_every_code_pattern_answers_fast_on_adversarial_strings():
    slow = []
    patterns = all_code_patterns()
    assert len(patterns) > 50  # the collection found the modules' patterns
    assert any(":" in where for where, _, _ in patterns) and any(where.endswith("()") for where, _, _ in patterns)
    for where, pattern, use in patterns:
        spent, text = _slowest(_runner(pattern, use), adversarial(pattern.pattern))
        if spent > BOUND_SECONDS:
            slow.append(f"{spent:.2f}s {where} {pattern.pattern[:80]!r} on {text!r}...")
    assert not slow, "\n".join(slow)


def test_catalogue_runs_in_re2_but_for_the_listed_patterns():
    bounded = {where for where, pattern in catalogue_patterns()
               if not where.startswith("stage:") and compiled(pattern).engine != "re2"}
    assert bounded == BOUNDED_CATALOGUE, "patterns left to Python's re changed: rewrite them for RE2 or list them"


def test_fingerprint_and_masking_run_in_re2():
    from nforensics import masking

    fingerprint = importlib.import_module("nforensics.diagnose.fingerprint")
    patterns = [p for where, p in code_patterns() if where.startswith(("nforensics.masking.", "nforensics.diagnose.fingerprint."))]
    assert len(patterns) >= 14 and all(p.engine == "re2" for p in patterns)
    # What the masks do is unchanged by the engine: a path after '=', numbers after '-', hex with digits.
    assert masking.mask("x=/tmp/a/b/c.py 1-2 a-5 deadbeef12 deadbeefcafe status=4 nd0") == \
        "x=<path>/c.py <n>-<n> a-<n> <hex> deadbeefcafe status=4 nd<n>"
    assert fingerprint.compiler_pass("Internal tensorizer error: BirCodeGenLoop: x") == "BirCodeGenLoop"


def test_rewritten_lookarounds_read_the_same_groups():
    """The two rewrites compile_search makes for RE2 leave every group as Python's re reads it."""
    cases = [
        (r"Expect ap datatype to be of type (?P<t>[a-z0-9 ]+?)(?=\s+Instruction:|$)",
         ["Expect ap datatype to be of type fp32 bf16 Instruction: x", "Expect ap datatype to be of type fp8"]),
        (r"(?<![\d.])(?P<gb>0)\s*B\s+I/O tensors", ["0 B I/O tensors", "1.0 B I/O tensors", "x 0B  I/O tensors"]),
    ]
    for pattern, texts in cases:
        assert linear_regex.compile_search(pattern).engine == "re2"
        for text in texts:
            ours, theirs = linear_regex.compile_search(pattern).search(text), re.search(pattern, text)
            assert (ours and list(ours.groupdict().items())) == (theirs and list(theirs.groupdict().items())), text


def test_bounded_fallback_still_finds_matches_in_long_lines():
    pattern = linear_regex.compile(r"float8_e4m3\b(?!fn)")
    assert pattern.engine == "re"
    line = "x" * 100_000 + " float8_e4m3 weights"
    start = time.perf_counter()
    assert pattern.search(line) and not pattern.search(line.replace("e4m3 ", "e4m3fn "))
    assert time.perf_counter() - start < 1


@pytest.mark.parametrize("line", [
    "[NCC_EXYZ001] a" + " " * 8000 + "b",  # the fingerprint's tail stripping: 5 minutes with Python's re
    "TypeError: " + "_" * 65_000 + "() got an unexpected keyword argument 'x'",
    "[NCC_EVRF009] " + "input" * 13_000 + " of shape",
    "Total failed compilations " + "fail" * 16_000,
])
def test_hostile_long_lines_are_explained_quickly(tmp_path, line):
    log = tmp_path / "hostile.log"
    log.write_text(line + "\n")
    start = time.perf_counter()
    result = run_cli_text("explain", log)
    assert time.perf_counter() - start < 20 and result.returncode in (0, 1) and "internal error" not in result.stderr


def test_the_pattern_set_finds_what_each_pattern_finds_on_every_sample_line():
    """The matcher scans each line once with every signature pattern in one RE2 set: the answer must be the
    one the patterns give one by one (and the pattern RE2 cannot run is still searched on its own)."""
    from conftest import SAMPLE_LOGS

    patterns = [p for s in builtin_kb().signatures for p in s.match.patterns]
    together = linear_regex.SearchSet(patterns)
    assert len(together._others) == len([p for p in patterns if compiled(p).engine == "re"])
    lines = {line for path in sorted(SAMPLE_LOGS.glob("*.log")) for line in path.read_text(errors="replace").splitlines()}
    found = 0
    for line in sorted(lines) + ["héllo wörld: Segmentation fault", ""]:
        alone = [n for n, p in enumerate(patterns) if compiled(p).search(line)]
        assert together.matching(line) == alone, line
        found += bool(alone)
    assert found > 100  # tried on lines the patterns do find
