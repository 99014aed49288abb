"""`nforensics run -- CMD ARGS...`: run a build or job, pass its output through, explain it if it fails.

The wrapper must be invisible when nothing goes wrong: the child's bytes reach our stdout/stderr
unchanged as they arrive, its exit status is ours, Ctrl-C/SIGTERM reach it. A compile or training run
can print gigabytes, so we never hold the output: a bounded capture keeps what explaining needs (the
first lines, where environment listings and flags are printed, and the last lines, where the failure
is) and the line numbers they had in the full output.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO, BinaryIO, TextIO, cast

from nforensics.errors import InputError
from nforensics.procs import drain
from nforensics.records import Analysis

READ_SIZE = 1 << 16  # one pipe buffer
HEAD_LINES, HEAD_BYTES = 2_000, 1 << 20
TAIL_BYTES = 4 << 20
MAX_LINE = 16 << 10  # longer lines are cut for the explanation (the passthrough and --log keep them whole)


class BoundedCapture:
    """The first lines and the last bytes of a byte stream, plus its line count.

    The tail is kept as raw chunks and only split into lines once, at the end: a child printing
    hundreds of millions of short lines costs a newline count per chunk, not Python work per line.
    """

    def __init__(self) -> None:
        self.head = bytearray()
        self.head_lines = 0
        self.head_done = False
        self.chunks: deque[bytearray] = deque()
        self.kept = 0  # bytes in chunks
        self.dropped = 0  # bytes that fell out of the tail
        self.newlines = 0

    def feed(self, data: bytes) -> None:
        if not data:
            return
        self.newlines += data.count(b"\n")
        if not self.head_done:
            self._fill_head(data)
        if self.chunks and len(self.chunks[-1]) < READ_SIZE:
            self.chunks[-1] += data  # many tiny writes: grow one buffer, not a deque of tiny objects
        else:
            self.chunks.append(bytearray(data))
        self.kept += len(data)
        while self.kept - len(self.chunks[0]) >= TAIL_BYTES:
            oldest = self.chunks.popleft()
            self.kept -= len(oldest)
            self.dropped += len(oldest)

    def _fill_head(self, data: bytes) -> None:
        room = data[: HEAD_BYTES - len(self.head)]
        self.head += room
        self.head_lines += room.count(b"\n")
        if self.head_lines >= HEAD_LINES or len(self.head) >= HEAD_BYTES:
            end = 0
            for _ in range(min(self.head_lines, HEAD_LINES)):  # cut after the last whole line kept
                end = self.head.index(b"\n", end) + 1
            del self.head[end:]
            self.head_lines = min(self.head_lines, HEAD_LINES)
            self.head_done = True

    def excerpt(self) -> list[tuple[int, str]]:
        """The kept lines, each with the line number it had in the full output.

        A gap between head and tail becomes one empty line, so a message cut by the gap is not glued
        to an unrelated line."""
        tail = bytes(b"".join(self.chunks))
        head: list[bytes]
        if self.dropped:  # the first tail line is a fragment: start at the next whole line
            tail = tail[tail.find(b"\n") + 1 :] if b"\n" in tail else b""
            head = bytes(self.head).split(b"\n")[: self.head_lines]
        else:  # the tail still holds everything
            head = []
        first = self.newlines - tail.count(b"\n") + 1
        tail_lines = tail.split(b"\n")
        if tail_lines and not tail_lines[-1]:
            tail_lines.pop()  # the text after the final newline is not a line
        numbered = list(enumerate(head, 1))
        overlap = max(len(head) + 1 - first, 0)
        if first + overlap > len(head) + 1:
            numbered.append((first + overlap - 1, b""))
        numbered += enumerate(tail_lines[overlap:], first + overlap)
        # Lone \r (progress bars) also ends a line for the text reader: each piece keeps its line's number.
        return [
            (number, piece)
            for number, line in numbered
            for piece in line[:MAX_LINE].decode("utf-8", errors="replace").splitlines() or [""]
        ]


@dataclass
class RunResult:
    exit_code: int  # the child's status; 128 + N when a signal N ended it, as shells report it
    capture: BoundedCapture


def _interactive_foreground() -> bool:
    """Ctrl-C on a terminal reaches the whole foreground process group, the child included:
    forwarding it again would deliver it twice."""
    try:
        return os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp()
    except OSError:
        return False


def run_command(argv: list[str], out: BinaryIO, err: BinaryIO, log: BinaryIO | None = None) -> RunResult:
    """Run `argv`, copying its stdout to `out` and stderr to `err` byte for byte as they arrive.

    Both streams also feed, in arrival order (as `2>&1` would merge them), a bounded capture and the
    optional `log`. SIGINT/SIGTERM sent to us are forwarded to the child.
    """
    if not argv:
        raise InputError("nothing to run: give the command after `--`, e.g. nforensics run -- make")
    try:
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError:  # a shell's codes: 127 not found, 126 found but not runnable
        raise InputError(f"command not found: {argv[0]}", exit_code=127) from None
    except PermissionError:
        raise InputError(f"command is not executable: {argv[0]}", exit_code=126) from None

    def forward(signum: int, _frame: object) -> None:
        if signum == signal.SIGINT and _interactive_foreground():
            return
        try:
            child.send_signal(signum)
        except ProcessLookupError:
            pass

    # Installed before any output is passed on: whoever saw the first line can already signal us.
    forwarded = (signal.SIGINT, signal.SIGTERM)
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = {s: signal.signal(s, forward) for s in forwarded} if in_main_thread else {}

    capture = BoundedCapture()
    log_failed = False

    def sink(stream: BinaryIO) -> Callable[[bytes], None]:
        passthrough = True

        def feed(chunk: bytes) -> None:
            nonlocal passthrough, log_failed
            if passthrough:
                try:
                    stream.write(chunk)
                    stream.flush()
                except (OSError, ValueError):  # our reader went away (EPIPE, closed stream): keep draining
                    passthrough = False
            capture.feed(chunk)
            if log is not None and not log_failed:
                try:
                    log.write(chunk)
                except OSError:  # disk full: the run matters more than its copy
                    log_failed = True

        return feed

    # One loop reads both pipes in arrival order and returns when the command exits: a daemon it started
    # (`sleep 15 &`) keeps the pipes open, but not us waiting (procs.drain).
    try:
        drain(child, {_pipe(child.stdout).fileno(): sink(out), _pipe(child.stderr).fileno(): sink(err)})
        status = child.wait()
    finally:
        _pipe(child.stdout).close()
        _pipe(child.stderr).close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if log is not None:
        log.flush()
    return RunResult(128 - status if status < 0 else status, capture)


def explain_capture(capture: BoundedCapture, source: str) -> Analysis:
    """Analyse what the command printed, with line numbers of its full output."""
    from nforensics.pipeline import analyze_lines

    return analyze_lines(source, capture.excerpt())


def command_source(argv: list[str]) -> str:
    """How a wrapped command is named in reports: `<run: neuron_parallel_compile python train.py>`."""
    shown = " ".join(" ".join(argv).split())  # one line, even for `python -c` scripts
    return f"<run: {shown[:200]}>"


def run_and_explain(
    argv: list[str],
    formats: list[str],
    log_path: str | None,
    out: BinaryIO,
    err: BinaryIO,
    report: TextIO,
    env: Mapping[str, str] = os.environ,
    redact: bool = True,
) -> int:
    """`nforensics run`: the child's exit status, always; on failure its output explained in `formats`
    (redacted unless `redact` is False).

    The text explanation goes to `report` unless another format already does. On success only the
    formats going to files are written (empty), so a CI step that uploads the SARIF or JUnit file finds
    it either way.
    """
    from nforensics.ci import FormatRequest, one_per_stream, open_output, parse_formats, write_outputs

    requests = parse_formats(formats)  # usage errors before the command runs
    one_per_stream(requests, "stderr")
    if all(request.file for request in requests):  # the job log always gets the explanation
        requests.insert(0, FormatRequest("text"))
    log = cast(BinaryIO, open_output(log_path, "wb")) if log_path else None
    try:
        result = run_command(argv, out, err, log)
    finally:
        if log is not None:
            log.close()
    source = log_path or command_source(argv)
    try:
        if result.exit_code == 0:
            write_outputs([Analysis(source=source)], [r for r in requests if r.file], report, env, redact)
        else:
            write_outputs([explain_capture(result.capture, source)], requests, report, env, redact)
    except Exception as exc:  # explaining must never replace the command's own status
        report.write(f"nforensics: could not explain the output: {exc}\n")
    return result.exit_code


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    """A child's stdout/stderr, which Popen(stdout=PIPE, stderr=PIPE) always sets."""
    assert stream is not None, "the child was started with pipes"
    return stream
