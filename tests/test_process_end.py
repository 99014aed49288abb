"""The `nforensics` process ends without the interpreter's teardown (nforensics/__main__.py): what a user
relies on at the end of a run must survive that: the exit status, every byte of output (or one line saying it
could not be written), the exit handlers a command registers and those registered before it; ^C while it
starts; and the garbage collector, paused during start-up, works again for the command."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from conftest import ENV, REPO, SEED000

# Buffered as a pipe or a file is when no one asked for unbuffered output: what the end of the process must flush.
BUFFERED = {name: value for name, value in ENV.items() if name != "PYTHONUNBUFFERED"}

# A stand-in for nforensics.cli.main, swapped in before run() imports it: it registers an exit handler, leaves
# a small write in the buffer, makes a reference cycle and reports whether the collector freed it, then exits.
_COMMAND = """
    import atexit, gc, sys, weakref
    {before}
    import nforensics.cli

    def stand_in_main():
        atexit.register(lambda: open({marker!r}, "a").write("command's handler ran\\n"))
        sys.stdout.write("first line\\nlast line\\n")  # no flush: the process's end must do it
        class Node: pass
        node = Node(); node.self = node
        freed = weakref.ref(node); del node
        from nforensics.__main__ import YOUNG_OBJECTS
        kept = [[] for _ in range(2 * YOUNG_OBJECTS)]  # enough new objects for the collector to run on its own
        sys.stderr.write(f"collector enabled={{gc.isenabled()}} cycle freed={{freed() is None}}\\n")
        sys.exit({status})

    nforensics.cli.main = stand_in_main
    from nforensics.__main__ import run
    run()
"""


def _run(tmp_path, status: int, before: str = "",
         stdout: int | None = subprocess.PIPE) -> tuple[subprocess.CompletedProcess, str]:
    marker = tmp_path / f"handler-{status}"
    script = textwrap.dedent(_COMMAND.format(marker=str(marker), status=status,
                                             before=before.format(marker=str(marker))))
    done = subprocess.run([sys.executable, "-c", script], stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=REPO,
                          env=BUFFERED, timeout=120)
    return done, marker.read_text() if marker.exists() else ""


def test_the_exit_status_output_and_handlers_of_a_command_survive_the_fast_end(tmp_path):
    for status in (0, 1, 2, 130):
        done, handlers = _run(tmp_path, status)
        assert done.returncode == status, done.stderr
        assert done.stdout == "first line\nlast line\n"
        assert handlers == "command's handler ran\n"


def test_a_handler_registered_before_the_command_started_still_runs(tmp_path):
    # (a sitecustomize or a coverage hook registers its handler before nforensics is imported)
    before = 'atexit.register(lambda: open({marker!r}, "a").write("earlier handler ran\\n"))'
    done, handlers = _run(tmp_path, 1, before=before)
    assert done.returncode == 1 and done.stdout == "first line\nlast line\n"
    assert handlers == "command's handler ran\nearlier handler ran\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full (a device that is always full) here")
def test_an_output_that_cannot_be_written_is_one_line_and_exit_2(tmp_path):
    with open("/dev/full", "w") as full:
        left, _ = _run(tmp_path, 0, stdout=full.fileno())  # left in the buffer for the end of the process
        commands = [subprocess.run([sys.executable, "-m", "nforensics", *args], stdout=full, stderr=subprocess.PIPE,
                                   text=True, cwd=REPO, env=BUFFERED, timeout=120)
                    for args in (["--version"], ["explain", str(SEED000)])]
    # (the stand-in's own line about the collector aside)
    said = [line for line in left.stderr.splitlines() if not line.startswith("collector")]
    assert left.returncode == 2 and said == ["nforensics: cannot write <stdout>: No space left on device"]
    for done in commands:
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("nforensics: ")
        assert "No space left on device" in done.stderr


def test_a_closed_output_is_no_error_of_the_end(tmp_path):
    done = subprocess.run(f"'{sys.executable}' -m nforensics --version >&-", shell=True, capture_output=True, text=True,
                          cwd=REPO, env=BUFFERED, timeout=120)
    assert done.stderr == "" and done.returncode == 0


def test_the_collector_paused_for_start_up_frees_the_commands_cycles(tmp_path):
    done, _ = _run(tmp_path, 0)
    assert "collector enabled=True cycle freed=True" in done.stderr


def test_an_interrupt_while_starting_is_answered_as_one_while_running(tmp_path):
    interrupt = textwrap.dedent("""
        import sys
        class Interrupting:  # ^C arriving while nforensics.cli is being imported
            def find_spec(self, name, path=None, target=None):
                if name == "nforensics.cli":
                    raise KeyboardInterrupt
        sys.meta_path.insert(0, Interrupting())
        from nforensics.__main__ import run
        run()
    """)
    done = subprocess.run([sys.executable, "-c", interrupt], capture_output=True, text=True, cwd=REPO, env=BUFFERED,
                          timeout=120)
    assert done.returncode == 130 and done.stderr == "nforensics: interrupted\n"


def test_a_user_error_still_ends_with_one_line_and_exit_2(tmp_path):
    done = subprocess.run([sys.executable, "-m", "nforensics", "explain", str(tmp_path / "missing.log")],
                          capture_output=True, text=True, cwd=REPO, env=ENV, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and done.stderr.startswith("nforensics: ")
