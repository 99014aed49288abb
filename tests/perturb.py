"""Text perturbations of a log, as users really paste them (generalisation.md, section 5): each one a pure
function (text, rng) -> text, exported by name in PERTURBATIONS; plus measure_stability, which checks that
the top finding's identity (its family, else its signature) survives each of them."""

from __future__ import annotations

import html
import json
import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

Perturbation = Callable[[str, random.Random], str]


def _lines(text: str) -> tuple[list[str], str]:
    """The lines of text and the line ending to put back (a final newline is kept as it was)."""
    return text.splitlines(), "\n" if text.endswith("\n") else ""


def _join(lines: list[str], tail: str) -> str:
    return "\n".join(lines) + tail


def _each_line(text: str, change: Callable[[str], str]) -> str:
    lines, tail = _lines(text)
    return _join([change(line) for line in lines], tail)


# --- truncation ------------------------------------------------------------------------------------------

def last_k_lines(text: str, rng: random.Random) -> str:
    """Keep only the last 60% of the lines (never fewer than 8), as a paste that starts mid-log."""
    lines, tail = _lines(text)
    return _join(lines[tail_start(len(lines)):], tail)


def tail_start(count: int) -> int:
    """The 0-based index of the first line last_k_lines keeps out of `count` lines."""
    return max(0, count - max(8, math.ceil(count * 0.6)))


def cut_mid_line(text: str, rng: random.Random) -> str:
    """Cut the last non-blank line in half and drop the final newline, as a paste that stops mid-line."""
    lines, _ = _lines(text)
    while lines and not lines[-1].strip():
        lines.pop()
    if lines:
        lines[-1] = lines[-1][: max(1, len(lines[-1]) // 2)]
    return "\n".join(lines)


# --- line shape ------------------------------------------------------------------------------------------

def hard_wrap_80(text: str, rng: random.Random) -> str:
    """Wrap every line longer than 80 columns at column 80, as a terminal paste does."""
    def wrap(line: str) -> str:
        return "\n".join(line[i:i + 80] for i in range(0, len(line), 80)) if len(line) > 80 else line
    return _each_line(text.expandtabs(8), wrap)


def indent_4(text: str, rng: random.Random) -> str:
    """Indent every non-blank line by 4 spaces, as a Markdown code block or a quoted paste."""
    return _each_line(text, lambda line: "    " + line if line.strip() else line)


def collector_tags(text: str, rng: random.Random) -> str:
    """Tag every line as a collector, launcher or test runner does (compose, kubectl, MPI, CI, journald, srun, pytest)."""
    tag = rng.choice(["tgi-3-1         | ", "[pod/train-0/main] ", "[1,{rank}]<stderr>:", "{ci} ",
                      "[1,mpirank:{rank},algo-1]<stderr>:", "Jan 08 21:53:{s:02d} ip-10-0-0-31 python3[4154]: ",
                      "2024-05-01T10:00:{s:02d}.123Z\t", "{rank}: ", "E       "])
    def tagged(line: str) -> str:
        stamp = f"2024-05-01T10:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 9999999):07d}Z"
        return tag.format(rank=rng.randint(0, 31), ci=stamp, s=rng.randint(0, 59)) + line
    return _each_line(text, tagged)


def markdown_quote(text: str, rng: random.Random) -> str:
    """Quote every line with `> `, as a reply quoting a paste does (a blank line becomes `>`)."""
    return _each_line(text, lambda line: "> " + line if line.strip() else ">")


def html_escaped(text: str, rng: random.Random) -> str:
    """Escape `&`, `<`, `>` and quotes as HTML entities, as text taken from a web page's source."""
    return html.escape(text, quote=True)


def nbsp_spaces(text: str, rng: random.Random) -> str:
    """Turn runs of spaces into no-break spaces, as a web page renders indentation and alignment."""
    return text.replace("  ", "\u00a0 ")


_LEADING_STAMP = re.compile(
    r"^\s*(?:"
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"  # 2024-08-15T14:51:41Z, ...,123
    r"|\d{4}-[A-Z][a-z]{2}-\d\d \d\d:\d\d:\d\d(?:\.\d+)?"  # 2024-Jun-26 00:32:47.943821
    r"|\d\d/\d\d/\d{4} \d\d:\d\d:\d\d(?: [AP]M)?"  # 06/16/2021 08:46:36 AM
    r"|\[\d{4}-\d\d-\d\d[T ][\d:.,]+Z?\]"  # [2024-08-15 14:51:41,123]
    r")(?::(?=\s))?\s+")
_LEADING_PID = re.compile(r"^\[(?:pid[ =:]?)?\d+\]:?\s+")


def strip_timestamps_and_prefixes(text: str, rng: random.Random) -> str:
    """Remove leading timestamps (ISO, NRT 2024-Jun-26, US 06/16/2021 AM, logging ,123) and `[pid] ` prefixes."""
    def strip(line: str) -> str:
        for _ in range(2):  # a pid prefix before a stamp, or a stamp before a pid prefix
            line = _LEADING_PID.sub("", _LEADING_STAMP.sub("", line, count=1), count=1)
        return line
    return _each_line(text, strip)


# --- wrappers that prefix every line ---------------------------------------------------------------------

def ray_prefix(text: str, rng: random.Random) -> str:
    """Prefix every line with a Ray worker tag, e.g. `(RayWorker pid=1234) `."""
    actor = rng.choice(["RayWorker", "RayWorkerWrapper", "NeuronWorker", "RayTrainWorker"])
    tag = f"({actor} pid={rng.randint(1000, 99999)}) "
    if rng.random() < 0.5:
        tag = f"({actor} pid={rng.randint(1000, 99999)}, ip=10.0.{rng.randint(0, 255)}.{rng.randint(1, 254)}) "
    return _each_line(text, lambda line: tag + line)


def vllm_prefix(text: str, rng: random.Random) -> str:
    """Prefix every line as vLLM's V1 engine logs a multi-line error: process tag, level, date, [file:line]."""
    pid = rng.randint(100, 99999)
    month, day, hour, minute = rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59)
    where = rng.choice(["core.py:700", "core.py:123", "multiproc_executor.py:487", "worker_base.py:619"])
    head = f"(EngineCore_0 pid={pid}) ERROR {month:02d}-{day:02d} {hour:02d}:{minute:02d}:"
    lines, tail = _lines(text)
    second = rng.randint(0, 50)
    out = []
    for n, line in enumerate(lines):
        out.append(f"{head}{min(59, second + n // 40):02d} [{where}] {line}")
    return _join(out, tail)


def torchrun_prefix(text: str, rng: random.Random) -> str:
    """Prefix every line with torchrun's rank tag `[rank0]: `."""
    rank = rng.choice([0, 0, 1, 3, 7])
    return _each_line(text, lambda line: f"[rank{rank}]: {line}")


# --- Jupyter -------------------------------------------------------------------------------------------

_EXC_NAME = re.compile(r"^(\s*)((?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure))(?=:|\s*$)")
_RED, _RESET = "\x1b[0;31m", "\x1b[0m"


def _coloured(line: str) -> str:
    return _EXC_NAME.sub(lambda m: f"{m[1]}{_RED}{m[2]}{_RESET}", line)


def _last_exception(lines: list[str]) -> tuple[str, str]:
    for line in reversed(lines):
        m = _EXC_NAME.match(line)
        if m:
            return m[2], line[m.end():].lstrip(": ").strip()
    return "RuntimeError", ""


def jupyter_cell(text: str, rng: random.Random) -> str:
    """Render the log as a saved .ipynb error output: "traceback" holds one JSON string per line, names in ANSI red."""
    lines, _ = _lines(text)
    ename, evalue = _last_exception(lines)
    cell = {"ename": ename, "evalue": evalue, "output_type": "error",
            "traceback": [_RED + "-" * 75 + _RESET, *(_coloured(line) for line in lines)]}
    return json.dumps(cell, indent=1) + "\n"


def jupyter_stream(text: str, rng: random.Random) -> str:
    """Render the log as a saved .ipynb stderr stream: one JSON string with literal \\n escapes, names in ANSI red."""
    lines, tail = _lines(text)
    cell = {"name": "stderr", "output_type": "stream", "text": _join([_coloured(line) for line in lines], tail)}
    return json.dumps(cell) + "\n"


def json_records(text: str, rng: random.Random) -> str:
    """Ship every line as a JSON record beside its metadata (Docker's json-file driver, Kubernetes, a JSON logger)."""
    lines, tail = _lines(text)
    key = rng.choice(["log", "message"])
    records = [json.dumps({"log": f"{line}\n", "stream": "stderr", "time": f"2024-05-01T10:00:{n % 60:02d}.123456789Z"}
                          if key == "log" else {"time": f"2024-05-01T10:00:{n % 60:02d}Z", "level": "info", "message": line})
               for n, line in enumerate(lines)]
    return _join(records, tail)


# --- glued and interleaved output ------------------------------------------------------------------------

def progress_dots(text: str, rng: random.Random) -> str:
    """Glue `.....` (progress printed without a newline) onto 1/3 of the lines that start with a letter or digit."""
    lines, tail = _lines(text)
    starts = [n for n, line in enumerate(lines) if line[:1].isalnum()]
    for n in rng.sample(starts, math.ceil(len(starts) / 3)) if starts else []:
        lines[n] = "." * rng.randint(3, 12) + lines[n]
    return _join(lines, tail)


_BENIGN = [
    "INFO:data_loader:Prefetched shard {a}/{b} ({c} samples) in {d}.{e}s",
    "INFO:metrics:step {a} throughput {c}.{e} samples/s, memory {d}.{e} GiB",
    "INFO:checkpoint:Checkpoint manager idle, next save at step {c}",
    "INFO:tokenizer:Tokenized batch {a} of {b} ({c} tokens)",
    "INFO:heartbeat:worker {d} alive, uptime {c}s",
]


def interleave_two_processes(text: str, rng: random.Random) -> str:
    """Interleave the log, line by line, with a second benign process's INFO lines (two writers, one terminal)."""
    lines, tail = _lines(text)
    out = []
    for line in lines:
        out.append(line)
        out.append(rng.choice(_BENIGN).format(a=rng.randint(1, 64), b=64, c=rng.randint(100, 9999),
                                              d=rng.randint(0, 31), e=rng.randint(0, 9)))
    return _join(out, tail)


# --- wording ---------------------------------------------------------------------------------------------

_NCC_CODE = re.compile(r"\bNCC_([A-Z]{3,5}\d{3})\b")
_NCC_BRACKETED = re.compile(r"\[NCC_[A-Z]{3,5}\d{3}\] ?")


def drop_ncc_prefix(text: str, rng: random.Random) -> str:
    """Drop the `NCC_` of compiler error codes: `[NCC_IXLV002]` becomes `[IXLV002]` (older compilers)."""
    return _NCC_CODE.sub(r"\1", text)


def drop_ncc_code(text: str, rng: random.Random) -> str:
    """Remove bracketed compiler error codes like `[NCC_IXLV002] ` entirely (the message alone remains)."""
    return _NCC_BRACKETED.sub("", text)


# A lower-case word in prose: not part of a dotted, pathed, snake/kebab-cased, quoted or called identifier.
_BEFORE_PROSE, _AFTER_PROSE = r"(?<![\w./\\\-=:'\"`<\[$%@])", r"(?![\w/\\\-=('\"`<\[>]|\.\w|:\w)"
_PROSE_WORD = re.compile(_BEFORE_PROSE + r"[a-z]{3,}" + _AFTER_PROSE)
_FRAME = re.compile(r"^\s*(?:File \"|at |#\d+ |Cell In\[|----> |\$ |>>> |\.\.\. )")  # frames, commands
_ERRORISH = re.compile(r"error|fail|fatal|exception|abort|assert|invalid|unsupported|exceed|killed", re.I)


def _code_lines(lines: list[str]) -> set[int]:
    """Indexes of traceback frames, shell commands and the indented source line under each frame."""
    code = set()
    for n, line in enumerate(lines):
        if _FRAME.match(line):
            code.add(n)
            if line.lstrip().startswith("File \"") and n + 1 < len(lines) and lines[n + 1].startswith("    "):
                code.add(n + 1)
    return code


def swap_case_words(text: str, rng: random.Random) -> str:
    """Upper-case a few lower-case prose words (not identifiers, paths, frames), half from error-looking lines."""
    lines, tail = _lines(text)
    hot: set[str] = set()
    cold: set[str] = set()
    code = _code_lines(lines)
    for n, line in enumerate(lines):
        if n in code:
            continue
        words = set(_PROSE_WORD.findall(line))
        (hot if _ERRORISH.search(line) else cold).update(words)
    cold -= hot
    chosen = rng.sample(sorted(hot), min(3, len(hot))) + rng.sample(sorted(cold), min(2, len(cold)))
    if not chosen:
        return text
    pick = re.compile(_BEFORE_PROSE + "(" + "|".join(map(re.escape, chosen)) + ")" + _AFTER_PROSE)
    return _join([line if n in code else pick.sub(lambda m: m[1].upper(), line) for n, line in enumerate(lines)], tail)


_PAIR = r"[A-Za-z_][\w ]{0,30}: [^,()]+"
_PAREN_GROUP = re.compile(r"\((" + _PAIR + r"(?:, " + _PAIR + r")+)\)")
_BRACE_PAIR = r"[A-Za-z_]\w*=[^,{}=]+"
_BRACE_GROUP = re.compile(r"\{(" + _BRACE_PAIR + r"(?:, ?" + _BRACE_PAIR + r")+)\}")


def extra_detail_key(text: str, rng: random.Random) -> str:
    """Insert `extra_key: 1` / `extra_key=1` at a random place in `(k: v, k2: v2)` / `{k=v, k2=v2}` groups."""
    def insert(items: list[str], extra: str) -> list[str]:
        at = rng.randint(1, len(items))
        return items[:at] + [extra] + items[at:]

    def paren(m: re.Match) -> str:
        return "(" + ", ".join(insert(m[1].split(", "), "extra_key: 1")) + ")"

    def brace(m: re.Match) -> str:
        sep = ", " if ", " in m[1] else ","
        return "{" + sep.join(insert(re.split(r", ?", m[1]), "extra_key=1")) + "}"

    return _BRACE_GROUP.sub(brace, _PAREN_GROUP.sub(paren, text))


PERTURBATIONS: dict[str, Perturbation] = {
    "last_k_lines": last_k_lines,
    "cut_mid_line": cut_mid_line,
    "hard_wrap_80": hard_wrap_80,
    "indent_4": indent_4,
    "markdown_quote": markdown_quote,
    "collector_tags": collector_tags,
    "html_escaped": html_escaped,
    "nbsp_spaces": nbsp_spaces,
    "strip_timestamps_and_prefixes": strip_timestamps_and_prefixes,
    "ray_prefix": ray_prefix,
    "vllm_prefix": vllm_prefix,
    "torchrun_prefix": torchrun_prefix,
    "jupyter_cell": jupyter_cell,
    "jupyter_stream": jupyter_stream,
    "json_records": json_records,
    "progress_dots": progress_dots,
    "interleave_two_processes": interleave_two_processes,
    "drop_ncc_prefix": drop_ncc_prefix,
    "drop_ncc_code": drop_ncc_code,
    "swap_case_words": swap_case_words,
    "extra_detail_key": extra_detail_key,
}

SEED = 20240815
RECOGNISED = ("exact", "family")


# --- measurement -----------------------------------------------------------------------------------------

def identity(analysis) -> str | None:
    """The identity of an analysis's top finding: its family if it has one, else its signature; None if no
    finding."""
    if not analysis.findings:
        return None
    top = analysis.findings[0]
    return top.family or top.signature


def top_tier(analysis) -> str:
    """The tier of the top finding, or "nothing"."""
    return analysis.findings[0].tier if analysis.findings else "nothing"


@dataclass
class Stability:
    """The outcome of measure_stability over a set of logs."""

    logs: int = 0  # recognised logs perturbed
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, tier) of logs not recognised
    pairs: int = 0  # (log, perturbation) pairs whose text actually changed
    unchanged: Counter = field(default_factory=Counter)  # perturbation -> pairs left identical (not counted)
    tried: Counter = field(default_factory=Counter)  # perturbation -> pairs counted
    failed: Counter = field(default_factory=Counter)  # perturbation -> pairs whose identity changed
    misses: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)
    cut: Counter = field(default_factory=Counter)  # perturbation -> pairs not counted: the evidence was cut away
    errors: list[tuple[str, str, str]] = field(default_factory=list)  # (file, perturbation, exception)

    @property
    def kept(self) -> int:
        return self.pairs - sum(self.failed.values())

    @property
    def share(self) -> float:
        return self.kept / self.pairs if self.pairs else 1.0

    def table(self, examples: int = 20) -> str:
        """Per-perturbation failures, then up to `examples` misses: what the assertion message shows."""
        rows = [f"stability {self.kept}/{self.pairs} = {self.share:.1%} over {self.logs} recognised logs "
                f"({len(self.skipped)} not recognised, not perturbed)",
                f"{'perturbation':32} {'failed':>6} {'tried':>6} {'n/a':>5} {'cut':>5}   (not counted: n/a, the text "
                f"was unchanged; cut, every evidence line of the original top finding was cut away)"]
        for name in PERTURBATIONS:
            rows.append(f"{name:32} {self.failed[name]:6d} {self.tried[name]:6d} {self.unchanged[name]:5d} "
                        f"{self.cut[name]:5d}")
        if self.errors:
            rows.append(f"{len(self.errors)} perturbed inputs raised: " +
                        "; ".join(f"{f} [{p}] {e}" for f, p, e in self.errors[:5]))
        if self.misses:
            rows.append(f"examples (file, perturbation, before -> after), {min(examples, len(self.misses))} "
                        f"of {len(self.misses)}:")
            rows += [f"  {f}  [{p}]  {b} -> {a}" for f, p, b, a in self.misses[:examples]]
        return "\n".join(rows)


def _evidence_cut(analysis, text: str) -> bool:
    """Whether last_k_lines removed every numbered evidence line of the top finding (a lost failure, not a
    robustness miss)."""
    lines = [e.line for e in analysis.findings[0].evidence if e.line]
    return bool(lines) and max(lines) <= tail_start(len(text.splitlines()))


def measure_stability(paths: Iterable[Path], perturbations: dict[str, Perturbation] | None = None,
                      seed: int = SEED, label: Callable[[Path], str] = lambda p: p.name) -> Stability:
    """Analyse each log in this process; for those whose top finding is recognised (exact or family), apply
    every perturbation with a fixed seed and count how often the top finding's identity changes. Not
    counted: a variant identical to the log (no NCC code to drop, ...) and a truncation that cut away every
    evidence line of the original top finding (nothing is left to recognise)."""
    from nforensics.pipeline import analyze_text

    result = Stability()
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        before = analyze_text(text, path.name)
        if top_tier(before) not in RECOGNISED:
            result.skipped.append((label(path), top_tier(before)))
            continue
        result.logs += 1
        was = identity(before)
        for name, perturb in (perturbations or PERTURBATIONS).items():
            variant = perturb(text, random.Random(f"{seed}:{path.name}:{name}"))
            if variant == text:
                result.unchanged[name] += 1
                continue
            if name == "last_k_lines" and _evidence_cut(before, text):  # the failure itself was cut away
                result.cut[name] += 1
                continue
            result.pairs += 1
            result.tried[name] += 1
            try:
                now = identity(analyze_text(variant, path.name))
            except Exception as exc:  # a crash on a perturbed input is a miss, and is shown as such
                result.errors.append((label(path), name, f"{type(exc).__name__}: {exc}"[:200]))
                now = f"<{type(exc).__name__}>"
            if now != was:
                result.failed[name] += 1
                result.misses.append((label(path), name, was, now))
    return result
