"""Child processes that cannot outlive, outwait or outgrow us: what `run` and the experiment runner share.

- `drain`: read a child's pipes until it exits, then stop. A daemon the child left behind (`sleep 15 &`)
  inherits the pipes and would keep them open for its whole life: after the child exits we read what is
  already there and stop as soon as the pipes go quiet (`IDLE` seconds, at most `AFTER_EXIT`).
- `spawn`: `subprocess.Popen` under one lock with every file nforensics writes for a run (`writing`):
  a file copied into a run folder while another thread forks would stay open for writing in that fork
  until it execs, and executing the copy then fails with "Text file busy" (ETXTBSY).
- `kill_tree`: a run's whole process tree. Its process group, every process still marked with the run's
  `RUN_MARK` environment variable (children that called `setsid` leave the group but keep the variable),
  and on Linux every descendant of the run's first process found by walking /proc.
"""

from __future__ import annotations

import errno
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

READ_SIZE = 1 << 16
IDLE = 0.1  # seconds without output after the child exited: the rest belongs to a daemon
AFTER_EXIT = 2.0  # at most this long reading after the child exited
RUN_MARK = "NFORENSICS_RUN_ID"

_spawn_lock = threading.RLock()


@contextmanager
def writing() -> Iterator[None]:
    """Hold while writing a file a run may execute: no fork happens meanwhile (see `spawn`)."""
    with _spawn_lock:
        yield


def spawn(argv: list[str] | tuple[str, ...], **kwargs) -> subprocess.Popen:
    """Popen, never concurrently with a `writing()` block; Popen returns once the child has exec'd, so no
    fork of ours holds a half-written file open. ETXTBSY from elsewhere is retried briefly."""
    for attempt in range(5):
        try:
            with _spawn_lock:
                return subprocess.Popen(argv, **kwargs)
        except OSError as exc:
            if exc.errno != errno.ETXTBSY or attempt == 4:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def drain(proc: subprocess.Popen, sinks: dict[int, Callable[[bytes], None]], deadline: float | None = None,
          on_exit: Callable[[], None] | None = None) -> bool:
    """Feed each pipe's bytes (file descriptor -> callback) until `proc` exits and its pipes are drained
    or quiet; True when `deadline` (time.monotonic) passed first. `on_exit` runs once when the child has
    exited (the experiment runner kills what it left behind there, which closes the pipes at once)."""
    selector = selectors.DefaultSelector()
    for fd in sinks:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    exited_at: float | None = None
    quiet_since = time.monotonic()
    try:
        while selector.get_map():
            now = time.monotonic()
            if deadline is not None and now >= deadline and exited_at is None:
                return True
            if exited_at is None and proc.poll() is not None:
                exited_at = quiet_since = now
                if on_exit is not None:
                    on_exit()
            if exited_at is not None and (now - quiet_since >= IDLE or now - exited_at >= AFTER_EXIT):
                break
            wait = 0.05 if exited_at is None else IDLE / 2
            if deadline is not None and exited_at is None:
                wait = max(0.0, min(wait, deadline - now))
            for key, _ in selector.select(wait):
                try:
                    data = os.read(key.fd, READ_SIZE)
                except BlockingIOError:
                    continue
                if data:
                    sinks[key.fd](data)
                    quiet_since = time.monotonic()
                else:
                    selector.unregister(key.fd)
        if exited_at is None:  # every pipe closed before the child exited
            if deadline is None:
                proc.wait()
            else:
                try:
                    proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    return True
            if on_exit is not None:
                on_exit()
        return False
    finally:
        selector.close()


class Tail:
    """The last `cap` bytes of a stream, in memory: a run's output never spools to disk."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > 2 * self.cap:
            del self.data[: len(self.data) - self.cap]

    def text(self) -> str:
        return bytes(self.data[-self.cap :]).decode("utf-8", errors="replace")


def _marked(mark: str) -> set[int]:
    """Processes of ours whose environment carries `RUN_MARK=mark` (Linux /proc; empty elsewhere)."""
    needle = f"{RUN_MARK}={mark}\0".encode()
    found = set()
    for entry in Path("/proc").iterdir() if Path("/proc/self/environ").exists() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes() + b"\0":
                found.add(int(entry.name))
        except OSError:  # gone, or not ours
            continue
    return found


def _descendants(root: int) -> set[int]:
    """Every process below `root`, from the parent ids in /proc/<pid>/stat (Linux; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc/self/stat").exists() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def kill_tree(pid: int, mark: str | None = None) -> None:
    """SIGKILL the run started as `pid` (a session leader): its group, its descendants, its marked processes."""
    victims = _descendants(pid) | (_marked(mark) if mark else set())
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for victim in victims:
        try:
            os.kill(victim, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
