"""How a log ends: inside an operation it opened (a hang, or a paste cut there), or not. Read once the whole log
has been seen (nforensics/parse/assemble.py `finish`), from what the readers tracked on the way: the compile
and runtime API calls still open, pip's resolver still fetching, a polling loop still waiting, the compiler's
own progress as the last thing it printed."""

from __future__ import annotations

import re

from nforensics.parse.grammars import parse
from nforensics.parse.messages import COMPILE_END, MessageReader
from nforensics.parse.normalise import unwrap
from nforensics.parse.shapes import ProducerLine
from nforensics.parse.state import CUT_LINE, HANG_TAIL, WAIT_REPEATS
from nforensics.records import ERROR_LEVELS, ProcessOutcome

_API_OPERATIONS = (("coll", "collectives"), ("load", "load"), ("init", "load"), ("exec", "execute"))
DIGITS = re.compile(r"\d+")
_CACHE_ENTRY = re.compile(r"(?i)compile[-_ ]cache|neuronxcc-\d[\w.+-]*/MODULE_")


class EndingReader(MessageReader):
    def _hangs(self) -> None:
        """A log that ends inside an operation it opened, with no error after it, hung there (or was cut).
        A paste that ends in an elision (`...`, `[snip]`) does not end there: its author left the rest out.
        Nor does one whose last line is the compiler's command line, where no compile before it ended: nothing
        shows that the compile ever ran (a quoted command, a paste cut where the interesting part began). A run
        that went through compiles before and stops at the next one's command line stopped inside it. (The
        runtime's API trace is different: it is switched on to watch a run, and a call it saw enter and never
        leave is where the run stopped.)"""
        if self.tail and self.tail[-1][0] == self.elided_at:
            return
        near_end = self.last_text - HANG_TAIL
        opened = [(line, _api_operation(api)) for api, line in self.open_apis.items()]
        if self.open_compile is not None:
            if self.open_compile < self.last_text or not self.compile_command or self.compile_ended:
                opened.append((self.open_compile, "compile"))
            elif self.open_compile > self.last_error:
                self._add(self.log.outcomes, ProcessOutcome.model_construct(
                    line=self.open_compile, kind="cut", operation="compile",
                    text="the log ends at the compiler's command line"))
        elif self.last_error < max(near_end, 1) and (progress := self._compiler_still_talking()) is not None:
            # (Progress right after an error, such as the ICE banner's own USER lines, is a compile dying.)
            opened.append((progress, "compile"))
        if self.resolving is not None:
            opened.append((self.resolving, "resolve"))
        last = DIGITS.sub("", self.tail[-1][1]) if self.tail else None
        # (A paste cut inside the last line still shows the start of the loop's line.)
        if self.waiting and self.waiting[1] >= WAIT_REPEATS and last is not None and self.waiting[0].startswith(last):
            # The log ends in a loop still waiting for something: for the compile cache's lock, when the loop's line
            # says so (libneuronxla: "Another process must be compiling <cache entry>, been waiting for: 839 minutes").
            waiting_for = "cache" if _CACHE_ENTRY.search(self.waiting_line) else "wait"
            opened.append((self.tail[-1][0], waiting_for))
        # The latest opened operation; on one line, a wait for the cache lock says more than the compile it waits on.
        for line, operation in sorted(opened, key=lambda o: (o[0], o[1] == "cache", o[1]), reverse=True)[:1]:
            if line >= near_end and line > self.last_error:
                self._add(self.log.outcomes, ProcessOutcome.model_construct(
                    line=line, kind="hang", text=f"the log ends inside {operation}", operation=operation))

    def _compiler_still_talking(self) -> int | None:
        """The line where the log stops in the compiler's own progress output (a compiler log record below
        error level, neuron-cc's progress dots) with no end of the compile after it, although no line said
        that a compile started: the compile had not finished where the log ends. A last line of a few
        characters that begins like the line before it (`INFO:Ne`) is a paste cut mid-line: that line says
        where the log ends."""
        tail = list(self.tail)
        last = tail[-1][1].strip() if tail else ""
        if len(tail) == 2 and len(last) < CUT_LINE and " " not in last and tail[0][1].strip().startswith(last):
            tail.pop()
        if not tail:
            return None
        number, segment = tail[-1]
        body = unwrap(segment.strip()).line
        if COMPILE_END.search(body):
            return None
        if set(body) == {"."}:
            return number
        line = parse("compiler", body) if body[:1].isdigit() else None
        # Progress is the compiler's INFO/DEBUG chatter; a log of its warnings alone is a file of its remarks.
        progress = (isinstance(line, ProducerLine) and line.level is not None
                    and line.level.upper() not in ERROR_LEVELS and not line.level.upper().startswith("WARN"))
        return number if progress else None


def _api_operation(api: str) -> str:
    return next((operation for word, operation in _API_OPERATIONS if word in api), "execute")
