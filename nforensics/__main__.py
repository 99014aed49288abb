"""The `nforensics` command as a process: the console script and `python -m nforensics` (for an environment
whose scripts folder is not on PATH: a venv that is not activated, a notebook's `!python -m nforensics`).

A command line process lives for one command, so it skips two costs a library importing nforensics must not:
- collecting cyclic garbage while start-up builds what lives until exit (the catalogue, the grammars, the
  record models): a quarter of a cold `explain` went to collections that found nothing to free. Once the
  command's modules are imported the collector runs again, with everything built so far frozen out of its
  scans, and only after YOUNG_OBJECTS more containers are alive (not Python's 700): the lazy start-up of a
  first analysis is not scanned over and over, and a long run over a big log or a folder, or an
  experiment, still frees its cycles (an analysis leaves one or two unreachable objects behind);
- the interpreter's teardown, which frees every object one at a time (about 60 ms for a seed log's run)
  only for the process to end. The process ends right after every exit handler has run and the output is
  flushed, with the status the command gave (an output that could not be written is one line on stderr and
  exit 2, as any write of ours is). Where exit handlers were registered before the command started (a
  sitecustomize, a coverage hook), it ends as Python does: those would run after ours.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from typing import NoReturn

from nforensics.errors import EXIT_INTERRUPTED, EXIT_USAGE

YOUNG_OBJECTS = 100_000


def run() -> NoReturn:
    gc.disable()
    status = 1  # an exception that escapes (Python prints its traceback and exits 1)
    if _registered_exit_handlers() == 0:
        atexit.register(lambda: _end(status))  # first, so it runs after every handler registered later
    try:
        from nforensics.cli import main
    except KeyboardInterrupt:  # ^C while starting: as ^C while running
        sys.stderr.write("nforensics: interrupted\n")
        status = EXIT_INTERRUPTED
        sys.exit(status)
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])
    gc.enable()
    try:
        main()
    except SystemExit as exit_request:
        code = exit_request.code
        status = code if isinstance(code, int) else 0 if code is None else 1  # a message: Python prints it, 1
        raise
    status = 0
    sys.exit(0)


def _registered_exit_handlers() -> int:
    """How many exit handlers are registered (CPython's count; -1 where an interpreter does not tell)."""
    count = getattr(atexit, "_ncallbacks", None)
    return count() if callable(count) else -1


def _end(status: int) -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # started with the descriptor closed (`>&-`): nothing to flush
            continue
        try:
            stream.flush()
        except BrokenPipeError:  # the reader has gone (`| head`): no error of ours
            pass
        except ValueError:  # closed already
            pass
        except OSError as exc:  # a full disk, a quota: what Python would report as an ignored exception
            if status != EXIT_USAGE:  # (the command has said already what it could not write)
                try:
                    sys.stderr.write(f"nforensics: cannot write {getattr(stream, 'name', 'output')}: "
                                     f"{exc.strerror or exc}\n")
                    sys.stderr.flush()
                except (AttributeError, OSError, ValueError):
                    pass
            status = EXIT_USAGE
    os._exit(status)


if __name__ == "__main__":  # importing the package's modules (a test walking them) runs nothing
    run()
