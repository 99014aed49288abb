"""The `nforensics` process ends without the interpreter's teardown (nforensics/__main__.py): what a user
relies on at the end of a run must survive that: the exit status, every byte of output, the exit handlers
a command registers; and the garbage collector, paused during start-up, works again for the command."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from conftest import ENV, REPO

# A stand-in for nforensics.cli.main, swapped in before run() imports it: it registers an exit handler, leaves
# a large write unflushed, makes a reference cycle and reports whether the collector freed it, then exits.
_COMMAND = """
    import atexit, gc, sys, weakref
    import nforensics.cli

    def stand_in_main():
        atexit.register(lambda: open({marker!r}, "w").write("handler ran"))
        sys.stdout.write("x" * 1_000_000 + "\\nlast line\\n")  # no flush: the process's end must do it
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


def _run(tmp_path, status: int) -> tuple[subprocess.CompletedProcess, str]:
    marker = tmp_path / f"handler-{status}"
    script = textwrap.dedent(_COMMAND.format(marker=str(marker), status=status))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, env=ENV,
                          timeout=120)
    return done, marker.read_text() if marker.exists() else ""


def test_the_exit_status_output_and_handlers_of_a_command_survive_the_fast_end(tmp_path):
    for status in (0, 1, 2, 130):
        done, handler = _run(tmp_path, status)
        assert done.returncode == status, done.stderr
        assert done.stdout.endswith("last line\n") and len(done.stdout) == 1_000_000 + len("\nlast line\n")
        assert handler == "handler ran"


def test_the_collector_paused_for_start_up_frees_the_commands_cycles(tmp_path):
    done, _ = _run(tmp_path, 0)
    assert "collector enabled=True cycle freed=True" in done.stderr


def test_a_user_error_still_ends_with_one_line_and_exit_2(tmp_path):
    done = subprocess.run([sys.executable, "-m", "nforensics", "explain", str(tmp_path / "missing.log")],
                          capture_output=True, text=True, cwd=REPO, env=ENV, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and done.stderr.startswith("nforensics: ")
