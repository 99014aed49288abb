"""Turn numbered lines into records: one streaming pass, bounded memory.

Each physical line is split where several runtime records run together, stripped of outer wrappers
(Ray, Python logging, CloudWatch, ...) and classified by the producer grammars. Multi-line constructs
(a coded message over several lines, the ICE banner, a BIR verifier block, a traceback, the NRT
"cut here" block) are assembled by small open-block states. Lines that cannot matter are only counted.

The assembler is put together from one reader per responsibility: normalise.py undoes JSON, ANSI, folding
and prefixes; gates.py decides which parsers a line reaches; messages.py reads records inside a message;
blocks.py the compiler's multi-line blocks and the NRT infodump; tracebacks.py tracebacks and stacks;
state.py holds what they share. This module runs the pass and dispatches each producer line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from nforensics.ingest import LogLines
from nforensics.parse.blocks import BlockReader
from nforensics.parse.endings import DIGITS, EndingReader
from nforensics.parse.gates import (
    SHELL_PROMPT_MARK,
    WAITING_WORD,
    compiler_block_starts,
    daemon_head,
    environment_starts,
    CatalogueAnchors,
    candidate_test,
    is_quiet,
    maybe_traceback,
    maybe_untimed_compiler,
    maybe_untimed_framework,
    maybe_untimed_runtime,
    skip_finder,
    timestamped_grammars,
)
from nforensics.parse.rewrap import Rejoined
from nforensics.parse.grammars import parse
from nforensics.parse.normalise import (
    GLUED_PROGRESS,
    MARKDOWN_BOLD,
    NRT_RECORD_START,
    SPLIT_COLONS,
    unescaped,
    unfold_traceback,
    unwrap,
)
from nforensics.parse.shapes import CutMark, ProducerLine
from nforensics.parse.state import (
    BIG_FILE,
    BIG_FILE_UNGATED_LINES,
    CONTEXT_LINES,
    MAX_DECODED_LINES,
    MAX_RETAINED,
    MAX_SKELETONS,
    UNGATED_LINES,
)
from nforensics.parse.tracebacks import RICH_FOLDED, TracebackReader
from nforensics.records import ERROR_LEVELS, ParsedLog, SourceLine

# A line that starts a record of its own (a level word, a timestamp, a bracketed tag), not the message an
# exception printed below its class.
_RECORD_HEAD = re.compile(r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\b|\d|\[")
# A shell's prompt before a command: `ubuntu@ip-172-31-3-88:~$ python train.py`, `(venv) $ torchrun ...` (bounded repeats:
# no backtracking on a long line).
_SHELL_PROMPT = re.compile(r"(?:\([\w.-]{1,64}\) ?)?(?:[\w.-]{1,64}@[\w.-]{1,128}:[^$\s]{0,256})?\$ \S")
INTERRUPT_AFTERMATH = 20  # lines after a ^C whose errors are the run shutting down, not a new failure
GLUED_TWIN_CHARS = 12  # a line that is one shorter line twice over (`KeyboardInterruptKeyboardInterrupt`)
# What a person writes where they left output out of a paste: the run went on past it.
_ELISION = re.compile(r"\.\.\.|\u2026|[\[(<](?:\.\.\.|\u2026|snip(?:ped)?|truncated|omitted)[\])>]")


class _Assembler(BlockReader, TracebackReader, EndingReader):
    """One pass over the lines: normalise each, gate it, hand it to the producer grammars and the readers."""

    def feed(self, number: int, raw: str) -> None:
        self.last_line = number
        pieces = unescaped(raw)
        if len(pieces) == 1 and raw.count(' File "') > 1:
            pieces = unfold_traceback(raw)
        first = number + self.decoded_extra
        if len(pieces) == 1:
            self._feed_piece(first, pieces[0])
            return
        numbers: Iterable[int] = [first] * len(pieces)
        if len(self.log.decoded_lines) >= MAX_DECODED_LINES:  # past the cap the lines share a number: keep their order
            for index, piece in enumerate(pieces[:MAX_RETAINED - len(self.piece_order)]):
                self.piece_order.setdefault((first, piece), index)
        else:
            # The lines of text a physical line held (a notebook's stream, a JSON log record with its newlines
            # escaped, a folded traceback) are lines of their own, numbered on from it: one line after another
            # means what it means in any log. Findings get the physical line back (nforensics/line_numbers.py).
            self.log.decoded_lines.append((first, len(pieces) - 1))
            self.decoded_extra += len(pieces) - 1
            numbers = range(first, first + len(pieces))
        for line, piece in zip(numbers, pieces, strict=True):
            self._feed_piece(line, piece)

    def _feed_piece(self, line: int, piece: str) -> None:
        segments = NRT_RECORD_START.split(piece) if piece.count(":") > SPLIT_COLONS else [piece]
        for segment in segments:
            if _ELISION.fullmatch(segment.strip()):
                self.elided_at = line
            if segment.startswith("."):
                segment = GLUED_PROGRESS.sub("", segment)
            self._feed_segment(line, piece, segment)

    def _feed_segment(self, number: int, raw: str, segment: str) -> None:
        if not segment.strip():
            self.open_diagnostic = None
            self.ice_field = None if self.ice_field != "Error message" else self.ice_field
            return
        self._progress(number, segment)
        # A Go frame's function call sits on the line between two path lines.
        if self.open_stack is not None and number > self.open_stack.end_line + (2 if self.open_stack.syntax == "go" else 1):
            self.open_stack = None
        block_open = (self.open_diagnostic or self.open_ice or self.open_bir or self.open_traceback or self.in_cut_here
                      or self.open_stack)  # a stack's next frame has no failure word of its own
        gated = number > self.ungated
        if not block_open and (is_quiet(segment) or gated and not self._is_candidate(segment)):
            if self.context_left:
                # Detail lines right under an error (`Exception PC: 0x...`) carry no failure word of their own;
                # an indented run of them (the runtime's `\t* dma rings: 28.000MB` breakdown) goes on as one.
                self.context_left -= not segment[:1].isspace()
                self._remember_recent(number, raw)
            return
        skeleton = DIGITS.sub("", segment) if not block_open else None
        if skeleton is not None and skeleton in self.uneventful:
            # The same shape as an earlier line that yielded no record (a flood of one warning): keep the
            # line for patterns, skip the parsers; it reads as that line did (its level, a Python warning).
            self._remember_recent(number, raw)
            self.repeats.append((number, self.uneventful[skeleton]))
            self.track_operations(number, segment)
            return
        before, events_before = self._record_count(), len(self.log.events)
        body, wrapper_level = unwrap(segment.lstrip() if segment[:1].isspace() and segment.lstrip()[:1].isdigit() else segment)
        if wrapper_level is not None:  # a logger's levelled record, not an exception's message going on
            self.message_awaited = None
        # Two ranks' lines glued into one, and progress dots glued in front, also behind a relay's tag.
        body = _untwinned(body)
        if body.startswith("."):
            body = GLUED_PROGRESS.sub("", body)
        if body.startswith("**") and (bold := MARKDOWN_BOLD.match(body)):
            body = bold.group(1)
        if self.frame_awaiting_code is not None:
            self._frame_code(body)
        self._keep(number, raw, body, bool(block_open), counted_before=before if gated else None)
        folded = RICH_FOLDED.match(body) if body[:1] == "│" else None
        self.rich_fold = [*self.rich_fold, folded.group(1)] if folded else []
        if (wrapper_level and body.strip() and not block_open and self._record_count() == before
                and not any(e.level for e in self.log.events[events_before:])):
            # The line's own producer printed no level the grammars read, but its logger's prefix gave one:
            # a WARNING behind vLLM's prefix is a warning (claims_warnings), an ERROR an error. (TensorFlow's
            # `... I tensorflow/...cc:456] ...` relayed at ERROR is still at its own level, I.)
            self._event(number, ProducerLine("framework", body, level=wrapper_level))
        if skeleton is not None and self._record_count() == before and len(self.uneventful) < MAX_SKELETONS:
            self.uneventful[skeleton] = number

    def _is_candidate(self, segment: str) -> bool:
        """The gate past the ungated head (gates.candidate_test with the catalogue's anchors), built at first use."""
        if self.candidate is None:
            self.candidate = candidate_test(self.anchors())
        return self.candidate(segment)

    def at_rest(self) -> bool:
        """Past the ungated head with no block open and no context owed: the next lines reach a parser, or
        change what is known, only if they hold a gate word (a line at rest that does not is only counted).
        (A blank line would reset an ICE field other than "Error message": with one open, nothing is at rest.)"""
        return (self.last_line > self.ungated and not self.context_left and self.ice_field in (None, "Error message")
                and not (self.open_diagnostic or self.open_ice or self.open_bir or self.open_traceback
                         or self.in_cut_here or self.open_stack))

    def _progress(self, number: int, segment: str) -> None:
        """How the log goes on and ends: its last lines, a shell prompt (a command started), a poll repeating."""
        self.last_text = number
        self.tail.append((number, segment))
        if SHELL_PROMPT_MARK in segment and _SHELL_PROMPT.match(segment):
            self.last_prompt = number
        if WAITING_WORD in segment:  # a polling loop prints the same line, its counters and clock aside
            shape = DIGITS.sub("", segment)
            if self.waiting and self.waiting[0] != shape and self.waiting[0].startswith(shape):
                return  # the loop's line again, cut by the paste: the loop goes on
            self.waiting = (shape, self.waiting[1] + 1 if self.waiting and self.waiting[0] == shape else 1)
            self.waiting_line = segment

    def _keep(self, number: int, raw: str, body: str, block_open: bool, counted_before: int | None) -> None:
        """Read the line; keep it when it carried something, with the plain lines after it as its context.
        Past the head (`counted_before`: the records before it), a line kept for its level alone (a warning)
        owes no context, a record or an error does: else a log of warnings is never at rest, never skipped."""
        if self._classify(number, body):
            self._retain(number, raw)
            if counted_before is None or self._record_count() > counted_before or self.last_error == number:
                self.context_left = CONTEXT_LINES
        elif block_open and self._continue_block(number, body):
            self._retain(number, raw)
        else:
            self._remember_recent(number, raw)

    def _remember_recent(self, number: int, raw: str) -> None:
        if not self.recent or self.recent[-1] != (number, raw):
            self.recent.append((number, raw))

    def _record_count(self) -> int:
        log = self.log
        return (len(log.diagnostics) + len(log.nrt_statuses) + len(log.exits) + len(log.invocations) + len(log.ice)
                + len(log.bir) + len(log.tracebacks) + len(log.environment.lines) + self.in_cut_here
                + len(log.stacks) + len(log.outcomes) + len(log.api_calls) + self.resolver_steps
                + bool(self.open_diagnostic or self.open_ice or self.open_bir or self.open_traceback))

    def _classify(self, number: int, body: str) -> bool:
        """Recognise the line's producer; True when the line carried something worth keeping."""
        warned, self.warned = self.warned, None
        awaited, self.message_awaited = self.message_awaited, None
        if awaited is not None and not any(c.isalnum() for c in body):
            self.message_awaited = awaited  # a rule of `====` under torchrun's ChildFailedError: the message follows
        elif awaited is not None and _traceback_shape(body) is None and not _RECORD_HEAD.match(body):
            awaited.message, awaited.end_line = body.strip(), number
            self._message(number, f"{awaited.exception}: {awaited.message}", producer=None, level=None, component=None)
            return True
        if warned is not None and body.startswith("  ") and _traceback_shape(body) is None:
            # Python's warnings module prints the source line that warned under the warning, indented: it is
            # the warning's (`  warnings.warn(f"Warning: {error}")` is no error of its own).
            self._event(number, warned._replace(message=body.strip()))
            return False
        if body[:1].isdigit() or body.startswith("NRT:") or daemon_head().match(body):
            for grammar in timestamped_grammars(body):
                line = parse(grammar, body)
                if line is not None:
                    return self._producer_line(number, line)
        line = _traceback_shape(body)
        if line is not None:
            return self._traceback_line(number, line)
        start = body.lstrip()
        if start.startswith(compiler_block_starts()) and (line := parse("compiler", body)) is not None:
            return self._producer_line(number, line)
        if maybe_untimed_runtime(start) and (line := parse("runtime", start)) is not None:
            return self._producer_line(number, line)
        if maybe_untimed_compiler(start) and (line := parse("compiler", start)) is not None:
            return self._producer_line(number, line)
        if maybe_untimed_framework(body) and (line := parse("framework", body)) is not None:
            return self._producer_line(number, line)
        if start.startswith(environment_starts()) and self._environment_line(number, body):
            return True
        return self._message(number, body, producer=None, level=None, component=None)

    def _producer_line(self, number: int, line: object) -> bool:
        match line:
            case ProducerLine(producer="compiler"):
                return self._compiler_line(number, line)
            case ProducerLine(producer="runtime"):
                self._event(number, line)
                if self.in_cut_here:
                    self._cut_here_field(number, line.message)
                if line.message.startswith("API:") and line.function:  # the API trace names its API in the head
                    return self._api_calls(number, f"{line.function} {line.message}")
                return self._message(number, line.message, producer="runtime", level=line.level,
                                     component=line.component)
            case ProducerLine():
                self._event(number, line)
                if line.producer == "framework" and (line.component or "").endswith("Warning"):
                    self.warned = line
                return self._message(number, line.message, producer=line.producer, level=line.level,
                                     component=line.component)
            case CutMark(opens=opens):
                self.in_cut_here = opens
                return True
        return self._compiler_block_line(number, line)

    def _compiler_line(self, number: int, line: ProducerLine) -> bool:
        text = line.message
        # The driver prefixes every line of a banner, block or crash traceback: read the message as a
        # line of its own.
        if (frame := _traceback_shape(text)) is not None:
            read = self._traceback_line(number, frame)
            if self.open_traceback is not None:
                self.open_traceback.printed_by = "compiler"
            return read
        inner = parse("compiler", text) if text.lstrip().startswith(compiler_block_starts()) else None
        if inner is not None and self._compiler_block_line(number, inner, from_compiler=True):
            if (line.level or "").upper() in ERROR_LEVELS:  # the ICE banner reports an error too
                self.last_error = number
            return True
        if self.open_ice and line.level is not None:  # a driver record, not a bare timing line
            if self._continue_block(number, text):
                return True
        self._event(number, line)
        return self._message(number, text, producer="compiler", level=line.level, component=line.component)

    def _event(self, number: int, line: ProducerLine) -> None:
        if (line.level or "").upper() in ERROR_LEVELS:
            self.last_error = number
        self._add(self.log.events, line.event(number))

    def finish(self) -> tuple[ParsedLog, list[SourceLine]]:
        self._hangs()
        self._live_outcomes()
        # neuronx-cc names the failing pass's file and then each folder above it: one `root = ...` line alone
        # is a setting someone printed (a dataset root), not that chain.
        self.log.stacks[:] = [s for s in self.log.stacks if s.syntax != "root" or s.end_line > s.line]
        # faulthandler dumps every thread; where it says which one crashed, the others were only waiting.
        if self.crashed_thread_seen:
            waiting = {id(t) for t in self.other_threads}
            self.log.tracebacks[:] = [t for t in self.log.tracebacks if id(t) not in waiting]
        self._drop_retyped_codes()
        # A run stopped by hand and then started again, failing: the interrupt is history, not the outcome.
        # (Errors right after it are its aftermath: workers and engines reporting that they were stopped.)
        # A shell prompt between them says the run was started again.
        self.log.outcomes[:] = [o for o in self.log.outcomes if o.kind != "interrupted" or (
            o.line + INTERRUPT_AFTERMATH >= self.last_error and not o.line < self.last_prompt < self.last_error)]
        self.log.repeats = dict(self.repeats)
        self.log.total_lines = self.last_line
        kept = {(line.line, line.text): line for line in self.retained}
        for number, raw in self.recent:
            kept.setdefault((number, raw), SourceLine.model_construct(line=number, text=raw))
        return self.log, sorted(kept.values(), key=lambda line: (line.line, self.piece_order.get((line.line, line.text), 0)))

    def _drop_retyped_codes(self) -> None:
        """A code without its brackets counts while it is all the log has; where the tool printed its own
        bracketed diagnostics, an unbracketed code is a mention (a summary, a wrapper quoting, a user's note)."""
        diagnostics = self.log.diagnostics
        if self.unbracketed_codes and any(d.line not in self.unbracketed_codes for d in diagnostics):
            diagnostics[:] = [d for d in diagnostics if d.line not in self.unbracketed_codes]


def _traceback_shape(body: str) -> object | None:
    """What the line is as a record of a traceback (a frame, an exception line, ...), None when it is not one
    (a message or a source line going on): the quick test first, then the grammar."""
    return parse("traceback", body.strip()) if maybe_traceback(body) else None


def _untwinned(segment: str) -> str:
    """One copy of a line two ranks printed at the same moment, glued together (`KeyboardInterruptKeyboardInterrupt`)."""
    half = len(segment) // 2
    if half >= GLUED_TWIN_CHARS and len(segment) % 2 == 0 and segment.startswith(segment[half:]):
        return segment[:half]
    return segment


def assemble(source: str, lines: Iterable[tuple[int, str]],
             anchors: Callable[[], CatalogueAnchors] | None = None) -> tuple[ParsedLog, list[SourceLine]]:
    """Parse numbered lines into a ParsedLog plus the retained lines (for patterns and evidence); lines a
    terminal hard-wrapped are joined first (nforensics/parse/rewrap.py). `anchors` gives the catalogue's
    anchors (KnowledgeBase.anchors), asked for when the first line past the ungated head is gated: a line
    a signature's pattern may read is let through, and in bulk a warning without one is passed over."""
    big = isinstance(lines, LogLines) and (lines.size or 0) >= BIG_FILE
    assembler = _Assembler(source, BIG_FILE_UNGATED_LINES if big else UNGATED_LINES, anchors)
    joined = Rejoined(lines)
    # A reader that can skip does so while the assembler is at rest: the lines it passes over are the ones
    # the gate would have let by (the finder is a superset of the gate), so the records are the same.
    reader = lines if isinstance(lines, LogLines) and not joined.joins else None
    finder = None
    for number, raw in joined:
        assembler.feed(number, raw)
        if reader is not None and reader.number == number and assembler.at_rest():  # (not while reading ahead)
            finder = finder or skip_finder(assembler.anchors())
            reader.skip_to(finder)
    return assembler.finish()
