"""Run variants of a reproducer and judge them.

One run = one `RunSpec` -> `execute()` -> `Outcome`: its own temporary directory, its own process group
(start_new_session), a timeout that kills the whole group, stdout and stderr kept. `execute` is a plain
function of a picklable spec so a cluster backend (Ray: `ray.remote(execute)`) can run it elsewhere;
nforensics/experiments/backends.py runs it on a local pool or on Ray. `Experiment` adds the journal: each
result is written as soon as it finishes, an identical variant is never run twice in a session, and
`--resume` continues a session.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Iterable, Iterator, Protocol

from nforensics.errors import InputError
from nforensics.experiments import compilers
from nforensics.procs import RUN_MARK, Tail, drain, kill_tree, spawn, writing
from nforensics.experiments.slots import CORES, VISIBLE_CORES
from nforensics.experiments.oracle import (
    REPRODUCES,
    UNTESTABLE,
    Expectation,
    Judgement,
    Verdict,
    judge,
)

if TYPE_CHECKING:  # the journal and the backends import this module
    from nforensics.experiments.backends import Backend
    from nforensics.experiments.journal import Journal, RunRecord

CORES_PLACEHOLDER = f"{{{CORES}}}"
OUTPUT_CAP = 256 * 1024  # bytes of stdout/stderr kept per run: the tail, where failures are printed
LINK_ABOVE = 64 * 1024 * 1024  # input files larger than this are symlinked into a run's directory, not copied


@dataclass(frozen=True)
class Variant:
    """One configuration of the reproducer. Identity = command, environment changes, working directory
    and the content of its input files; `knobs` only label which point of a plan it is."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()  # set on top of the inherited environment
    unset_env: tuple[str, ...] = ()
    inputs: tuple[tuple[str, str], ...] = ()  # (name in the run directory, or "" when not copied; source)
    cwd: str | None = None  # None: a fresh temporary directory per run
    knobs: tuple[tuple[str, str], ...] = ()
    compiler: str | None = None  # the neuronx-cc release to run with (experiments/compilers.py); None: PATH's

    def key(self) -> str:
        identity: dict[str, object] = {
            "argv": self.argv,
            "env": sorted(self.env),
            "unset_env": sorted(self.unset_env),
            "cwd": self.cwd,
            "inputs": sorted((name, src, _file_digest(src, *_stamp(src))) for name, src in self.inputs),
        }
        if self.compiler is not None:
            identity["compiler"] = self.compiler
        return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:16]


def _stamp(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
        return st.st_mtime_ns, st.st_size
    except OSError:
        return 0, -1


@functools.lru_cache(maxsize=256)
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    """Content hash of an input file; cached by modification time and size (inputs can be large)."""
    if size < 0:
        return "missing"
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class RunSpec:
    """Everything a worker needs for one run (picklable, for remote backends)."""

    variant: Variant
    expect: Expectation
    timeout: float | None
    attempt: int = 0
    cores: int = 0  # NeuronCores the run needs (0: compile-only, no device); a backend schedules by it
    visible_cores: str | None = None  # the slice the backend gave this run: NEURON_RT_VISIBLE_CORES, {cores}


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    code: str | None
    exit_code: int | None
    seconds: float
    note: str
    stdout: str
    stderr: str


# Runs in flight (first pid -> run mark), so an interrupted orchestrator (Ctrl-C, SIGTERM) can kill them:
# runs live in their own sessions, so the terminal's SIGINT does not reach them.
_live: dict[int, str] = {}
_live_lock = threading.Lock()


def kill_running() -> None:
    """Kill every run in flight with its whole tree (group, descendants, setsid'd children by their mark)."""
    with _live_lock:
        runs = list(_live.items())
    for pid, mark in runs:
        kill_tree(pid, mark)


_stopped_by: list[int] = []  # the signal terminate_runs_on_signal stopped us with


def stopped_by() -> int | None:
    """The signal that is stopping this orchestrator, if any (a blocking call that swallowed our SystemExit,
    as Ray's wait does, re-raises it with this)."""
    return _stopped_by[-1] if _stopped_by else None


@contextmanager
def terminate_runs_on_signal() -> Iterator[None]:
    """SIGTERM (CI cancel, Kubernetes, `timeout`) or SIGHUP to the orchestrator: kill the runs in flight,
    which would otherwise hold NeuronCores until their own timeout, then exit 128 + N. Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        _stopped_by.append(signum)
        kill_running()
        raise SystemExit(128 + signum)

    caught = (signal.SIGTERM, signal.SIGHUP)
    previous = {s: signal.signal(s, stop) for s in caught}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _copy_inputs(inputs: tuple[tuple[str, str], ...], run_dir: str) -> None:
    """Give the run its own copy of each input file; very large ones (checkpoints) are linked instead.
    Copies are written while no other run forks (procs.writing): a fork holding a copy open for writing
    makes executing it fail with "Text file busy"."""
    for name, source in inputs:
        if not name:
            continue
        target = Path(run_dir, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        if os.path.getsize(source) > LINK_ABOVE:
            target.symlink_to(source)
        else:
            with writing():
                shutil.copy2(source, target)


def _untestable(note: str, started: float) -> Outcome:
    return Outcome(UNTESTABLE, None, None, time.monotonic() - started, note, "", "")


def execute(spec: RunSpec) -> Outcome:
    """Run one variant in its own directory and process group, then judge it."""
    variant = spec.variant
    commands = None
    if variant.compiler is not None:  # installed before the clock starts: once per release, not part of a run
        try:
            commands = str(compilers.commands_dir(variant.compiler))
        except (compilers.InstallFailed, InputError) as failed:
            return _untestable(str(failed), time.monotonic())
    started = time.monotonic()
    # One directory per run (creating directories is the costliest part of a no-op run); the output comes
    # through pipes and only its last OUTPUT_CAP bytes are kept, in memory (a 4 GB writer spooled 3.8 GB to
    # /tmp when it went to files).
    with tempfile.TemporaryDirectory(prefix="nforensics-run-") as run_dir:
        mark = uuid.uuid4().hex
        env = {k: v for k, v in os.environ.items() if k not in variant.unset_env}
        argv = variant.argv
        if spec.visible_cores is not None:  # an explicit --env NEURON_RT_VISIBLE_CORES=... still wins
            env[VISIBLE_CORES] = spec.visible_cores
            argv = tuple(a.replace(CORES_PLACEHOLDER, spec.visible_cores) for a in argv)
        env.update((k, v.replace(CORES_PLACEHOLDER, spec.visible_cores or "")) for k, v in variant.env)
        env["TMPDIR"] = run_dir  # compiler workdirs stay inside the run too
        if commands is not None:
            env["PATH"] = os.pathsep.join([commands, env.get("PATH", os.defpath)])
        env[RUN_MARK] = mark  # inherited by everything the run starts, even past setsid
        try:
            _copy_inputs(variant.inputs, run_dir)
        except OSError as exc:
            return _untestable(f"cannot copy input {exc.filename}: {exc.strerror}", started)
        try:
            proc = spawn(argv, cwd=variant.cwd or run_dir, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
        except OSError as exc:
            reason = "command not found" if isinstance(exc, FileNotFoundError) else exc.strerror
            return _untestable(f"{reason}: {argv[0]}", started)
        with _live_lock:
            _live[proc.pid] = mark
        out, err = Tail(OUTPUT_CAP), Tail(OUTPUT_CAP)
        deadline = None if spec.timeout is None else started + spec.timeout
        killed: list[bool] = []

        def leftovers() -> None:  # when the command exits, what it left running goes too (closing the pipes)
            if not killed:
                killed.append(True)
                kill_tree(proc.pid, mark)

        try:
            timed_out = drain(proc, {_pipe(proc.stdout).fileno(): out.feed, _pipe(proc.stderr).fileno(): err.feed},
                              deadline, on_exit=leftovers)  # fmt: skip
        finally:
            if not killed or proc.poll() is None:
                kill_tree(proc.pid, mark)
            proc.wait()
            _pipe(proc.stdout).close()
            _pipe(proc.stderr).close()
            with _live_lock:
                _live.pop(proc.pid, None)
        stdout, stderr = out.text(), err.text()
    if timed_out:
        seconds = time.monotonic() - started
        return Outcome(UNTESTABLE, None, None, seconds, f"timeout after {spec.timeout:g} s", stdout, stderr)
    judgement = _judge_by(deadline, proc.returncode, stdout + "\n" + stderr, spec.expect)
    seconds = time.monotonic() - started  # the run and its judging: both count against --timeout
    if judgement is None:
        return Outcome(UNTESTABLE, None, proc.returncode, seconds, f"timeout after {spec.timeout:g} s (judging its output)",
                       stdout, stderr)
    return Outcome(judgement.verdict, judgement.code, proc.returncode, seconds, judgement.note, stdout, stderr)


def _judge_by(deadline: float | None, exit_code: int, output: str, expect: Expectation) -> Judgement | None:
    """The run's judgement, or None when it is not ready by the run's deadline: judging counts against the
    timeout too. (A judge still working is left to finish in the background; its answer is not waited for.)"""
    if deadline is None:
        return judge(exit_code, output, expect)
    found: list[Judgement] = []
    worker = threading.Thread(target=lambda: found.append(judge(exit_code, output, expect)), daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    return found[0] if found else None


@dataclass
class VariantResult:
    """A variant's verdict over its attempts (`--repeat N`): flaky when testable attempts disagree."""

    variant: Variant
    verdict: Verdict
    code: str | None
    seconds: float
    flaky: str | None  # "k/n reproduce" when attempts disagree
    runs: list[RunRecord]  # one per attempt

    @property
    def knobs(self) -> dict[str, str]:
        return dict(self.variant.knobs)

    @property
    def reproduces(self) -> bool:
        return self.verdict == REPRODUCES


def combine(variant: Variant, runs: list[RunRecord]) -> VariantResult:
    verdicts = [r.verdict for r in runs]
    testable = [v for v in verdicts if v != UNTESTABLE]
    if not testable:
        verdict: Verdict = UNTESTABLE
    else:
        counts = Counter(testable)
        # Majority; a tie never counts as reproducing (a reducer must not chase a coin flip).
        verdict = max(counts, key=lambda v: (counts[v], v != REPRODUCES))
    flaky = None
    if len(set(testable)) > 1:
        flaky = f"{verdicts.count(REPRODUCES)}/{len(verdicts)} reproduce"
    decisive = next((r for r in runs if r.verdict == verdict), runs[0])
    seconds = sum(r.seconds for r in runs) / len(runs)
    return VariantResult(variant, verdict, decisive.code, seconds, flaky, runs)


class Observer(Protocol):
    """Progress reporting hooks (the CLI's progress bar)."""

    def planned(self, count: int) -> None: ...

    def finished(self, record: RunRecord) -> None: ...


@dataclass
class Experiment:
    """Runs variants through a backend, journaling each result as it finishes.

    Within a session an identical variant (same key, same attempt) is never run twice; a resumed
    session starts with the runs it had already finished.
    """

    journal: Journal
    session: int
    backend: Backend
    expect: Expectation
    timeout: float | None = None
    repeat: int = 1
    observer: Observer | None = None
    cores: int = 0  # NeuronCores each run needs (0: compile-only)
    _done: dict[tuple[str, int], RunRecord] = field(default_factory=dict)
    _keys: dict[Variant, str] = field(default_factory=dict)
    tested: set[str] = field(default_factory=set)  # distinct variants this strategy asked about

    def __post_init__(self) -> None:
        for record in self.journal.session_runs(self.session):
            self._done[(record.key, record.attempt)] = record

    def key(self, variant: Variant) -> str:
        if variant not in self._keys:
            self._keys[variant] = variant.key()
        return self._keys[variant]

    def run(self, variants: Iterable[Variant], cores: int | None = None) -> list[VariantResult]:
        """`cores`: NeuronCores each of these runs needs, when not the experiment's (0: a compile-only tier)."""
        variants = list(variants)
        todo: dict[tuple[str, int], RunSpec] = {}
        for variant in variants:
            key = self.key(variant)
            self.tested.add(key)
            for attempt in range(self.repeat):
                if (key, attempt) in self._done or (key, attempt) in todo:
                    continue
                todo[(key, attempt)] = RunSpec(variant, self.expect, self.timeout, attempt,
                                               self.cores if cores is None else cores)
        if self.observer:
            self.observer.planned(len(todo))
        for spec, outcome in self.backend.run(list(todo.values())):
            key = self.key(spec.variant)
            record = self.journal.record(self.session, key, spec, outcome)
            self._done[(key, spec.attempt)] = record
            if self.observer:
                self.observer.finished(record)
        results = []
        for variant in variants:
            key = self.key(variant)
            results.append(combine(variant, [self._done[(key, a)] for a in range(self.repeat)]))
        return results


    def records(self) -> list[RunRecord]:
        """Every run behind the variants this strategy asked about (this invocation's and resumed ones)."""
        return [r for (key, _), r in self._done.items() if key in self.tested]


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    """A child's stdout/stderr, which Popen(stdout=PIPE, stderr=PIPE) always sets."""
    assert stream is not None, "the child was started with pipes"
    return stream
