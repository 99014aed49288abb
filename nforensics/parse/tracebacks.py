"""Python and IPython tracebacks (frames, their source lines, the final exception) and the native, TorchScript
and Go stacks printed beside them."""

from __future__ import annotations

from nforensics.linear_regex import compile_linear
from nforensics.parse.messages import MessageReader
from nforensics.parse.shapes import ExceptionLine, LiveThread, TracebackHeader
from nforensics.records import Frame, ProcessOutcome, PythonTraceback, StackTrace

# IPython's numbered source context under a frame; the arrow marks the line that failed.
_IPYTHON_CONTEXT = compile_linear(r"^\s*(-+>)?\s*\d+\s(.*)$")
# rich's, inside its panel (`│ ❱ 622 │   main()   │`, the code behind rich's indent guides), after the blank
# panel line under the frame; and the function of a frame whose path filled the panel's line, on the next one
# (`│ __post_init__   │`, `│ in <module> │`).
_RICH_CONTEXT = compile_linear(r"^│\s*(❱)?\s*(?:\d+(?:\s(.*?))?)?\s*│\s*$")
_RICH_FUNCTION = compile_linear(r"^│\s+(?:in\s+)?([A-Za-z_<][\w<>.]*)\s*│\s*$")
# A panel row of one path piece and its padding: the start of a path too long for the panel, folded mid-word
# onto the rows below it, the last of which is the frame's row.
RICH_FOLDED = compile_linear(r"^│ ([^\s│]*/[^\s│]*) │\s*$")
# What a running process was doing, by the frames it was sampled in (`package/file.py:function`, innermost
# first): the first frame that names an operation says which one.
_LIVE_OPERATION = compile_linear(
    r"(?i)(?P<collectives>torch/distributed/|all_reduce|all_gather|reduce_scatter|barrier|rendezvous|nccom)"
    r"|(?P<compile>neuronxcc/|neuroncc/|libneuronxla/|_dynamo/|compile|trace)"
    r"|(?P<load>\bload)"
    r"|(?P<execute>forward|execute|generate|step\b)")
_OPERATIONS = ("collectives", "compile", "load", "execute")


class TracebackReader(MessageReader):
    """Traceback headers, frames and their source lines, final exception lines and non-Python stacks."""

    def _traceback_line(self, number: int, line: object) -> bool:
        match line:
            case TracebackHeader(exception=named, innermost_first=innermost_first, other_thread=other_thread):
                traceback = self._open_traceback(number)
                if innermost_first:
                    self.innermost_first = traceback
                if other_thread:
                    self.other_threads.append(traceback)
                elif innermost_first:
                    self.crashed_thread_seen = True
                if named:
                    # IPython names the exception in its header; a paste often stops before the final line.
                    traceback.exception = named
                    self.named_by_header = traceback
            case Frame(syntax="python" | "ipython" | "rich"):
                line.line = number
                if line.syntax == "rich" and self.rich_fold:
                    line.file = "".join(self.rich_fold) + line.file  # (the path's start is on the rows above)
                traceback = self.open_traceback or self._open_traceback(number)
                # A record's frames run outermost to innermost, however its producer printed them.
                traceback.frames.insert(0 if traceback is self.innermost_first else len(traceback.frames), line)
                self.frame_awaiting_code = line
                traceback.end_line = number
            case Frame():
                line.line = number
                self._stack_frame(number, line)
            case ExceptionLine():
                self._exception_line(number, line)
            case LiveThread():
                self._close_blocks()
                self.open_stack = StackTrace.model_construct(line=number, end_line=number, syntax="pyspy")
                self._add(self.log.stacks, self.open_stack)
            case _:
                return False
        return True

    def _live_outcomes(self) -> None:
        """Stacks sampled from a running process (py-spy dump) say the process had not finished: someone looked
        inside because it hung. Its frames say in which operation; several dumps of it are one hang."""
        live = [stack for stack in self.log.stacks if stack.syntax == "pyspy" and stack.frames]
        if not live:
            return
        where = (_LIVE_OPERATION.search(f"{f.package_path}:{f.function}") for stack in live for f in stack.frames)
        found = next((m for m in where if m is not None), None)
        operation = next((name for name in _OPERATIONS if found.group(name) is not None), "wait") if found else "wait"
        self._add(self.log.outcomes, ProcessOutcome.model_construct(
            line=live[0].line, kind="hang", text=f"a running process sampled inside {operation}", operation=operation))

    def _exception_line(self, number: int, line: ExceptionLine) -> None:
        """The final exception line: it closes the traceback (or stands alone, as pasted)."""
        open_traceback = self.open_traceback
        if open_traceback is None or open_traceback.exception is not None and open_traceback is not self.named_by_header:
            open_traceback = self._open_traceback(number)
        traceback = open_traceback
        self.named_by_header = None
        traceback.exception = line.name
        traceback.message = line.message
        traceback.end_line = number
        # `RuntimeError:` alone: TorchScript and C++ extensions print the message on the lines below it.
        # (A KeyboardInterrupt or SystemExit has none: the line after it is the next record.)
        self.message_awaited = None if line.message or line.name in ("KeyboardInterrupt", "SystemExit") else traceback
        if line.name == "KeyboardInterrupt":  # stopped by hand where the frames end, not failed there
            self._add(self.log.outcomes, ProcessOutcome.model_construct(line=number, kind="interrupted", signal=2,
                                                                        text=line.name))
        else:
            self.last_error = number
        self._close_blocks()
        # The exception's class says the message is a failure's (a code re-raised in it is printed, not mentioned).
        self._message(number, f"{line.name}: {line.message}" if line.message else line.name, producer=None, level=None,
                      component=None)

    def _frame_code(self, body: str) -> None:
        """The source line under a frame: Python prints it indented; IPython and rich print numbered context
        lines and mark the failing one with an arrow (`---> 174 result = ...`, `❱ 622 │ main()`)."""
        frame = self.frame_awaiting_code
        assert frame is not None
        if frame.syntax == "rich" and frame.function is None and (wrapped := _RICH_FUNCTION.match(body)):
            frame.function = wrapped.group(1)
        elif frame.syntax == "python":
            self.frame_awaiting_code = None
            text = body.strip()
            if body[:1].isspace() and text and not text.startswith(("File ", "^", "~")):
                frame.code = text
        elif (context := (_RICH_CONTEXT if frame.syntax == "rich" else _IPYTHON_CONTEXT).match(body)) is None:
            self.frame_awaiting_code = None
        elif context.group(1):
            frame.code = (context.group(2) or "").lstrip("│ \t").rstrip() or None
            self.frame_awaiting_code = None

    def _stack_frame(self, number: int, frame: Frame) -> None:
        stack = self.open_stack
        if stack is not None and stack.syntax == frame.syntax == "root" and self.root_path.startswith(
                frame.file.rstrip("/") + "/"):
            # neuronx-cc names the file where a pass failed, then each folder above it: the compile ended there.
            # (The folders say nothing more; one `root = ...` line alone is a setting someone printed.)
            stack.end_line = self.last_error = number
            self.root_path = frame.file
            return
        if frame.syntax == "root":
            self.root_path = frame.file
        if stack is None or stack.syntax != frame.syntax or frame.syntax == "root":  # a root line not above: anew
            stack = self.open_stack = StackTrace.model_construct(line=number, end_line=number, syntax=frame.syntax)
            self._add(self.log.stacks, stack)
        stack.frames.append(frame)
        stack.end_line = number

    def _open_traceback(self, number: int) -> PythonTraceback:
        self._close_blocks()
        self.open_traceback = PythonTraceback.model_construct(line=number, end_line=number)
        self._add(self.log.tracebacks, self.open_traceback)
        return self.open_traceback
