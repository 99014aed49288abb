"""Python and IPython tracebacks (frames, their source lines, the final exception) and the native, TorchScript
and Go stacks printed beside them."""

from __future__ import annotations

import re

from forensics.linear_regex import compile_linear
from forensics.parse.messages import MessageReader
from forensics.parse.state import clean
from forensics.records import Frame, PythonTraceback, StackTrace

# IPython's numbered source context under a frame; the arrow marks the line that failed.
_IPYTHON_CONTEXT = compile_linear(r"^\s*(-+>)?\s*\d+\s(.*)$")
_NATIVE_PATH = compile_linear(r"(/[^\s()\[\]]+|[\w.-]+\.so(?:\.\d+)*)")
_NATIVE_SYMBOL = re.compile(r"(?:0x[0-9a-fA-F]+\s+in\s+)?([^\s(]+)")


class TracebackReader(MessageReader):
    """Traceback headers, frames and their source lines, final exception lines and non-Python stacks."""

    def _traceback_line(self, number: int, shape: str, parts: dict[str, str]) -> bool:
        if shape == "header":
            traceback = self._open_traceback(number)
            if named := parts.get("IPY_HEADER"):
                # IPython names the exception in its header; a paste often stops before the final line.
                traceback.exception = named.split()[0]
                self.named_by_header = traceback
            return True
        if shape in ("frame", "ipython_frame", "ipython_cell"):
            traceback = self.open_traceback or self._open_traceback(number)
            path = (parts.get("PATH") or parts.get("IPY_PATH") or "").strip('"') or f"Cell In{parts.get('CELL', '[]')}"
            frame = Frame.model_construct(
                file=path, lineno=int(parts["LINENO"]) if "LINENO" in parts else None, function=parts.get("FUNC"),
                syntax="python" if shape == "frame" else "ipython", line=number, code=None)
            traceback.frames.append(frame)
            self.frame_awaiting_code = frame
            traceback.end_line = number
            return True
        if shape in ("native_frame", "torchscript_frame", "go_frame"):
            self._stack_frame(number, shape, parts)
            return True
        # The final exception line: it closes the traceback (or stands alone, as pasted).
        message = clean(parts.get("MESSAGE"))
        open_traceback = self.open_traceback
        if open_traceback is None or open_traceback.exception is not None and open_traceback is not self.named_by_header:
            open_traceback = self._open_traceback(number)
        traceback = open_traceback
        self.named_by_header = None
        traceback.exception = parts["EXC_NAME"]
        traceback.message = message
        traceback.end_line = number
        self.last_error = number
        self._close_blocks()
        self._message(number, message, producer=None, level=None, component=None)
        return True

    def _frame_code(self, body: str) -> None:
        """The source line under a frame: Python prints it indented; IPython prints numbered context lines
        and marks the failing one with an arrow (`---> 174 result = ...`)."""
        frame = self.frame_awaiting_code
        assert frame is not None
        if frame.syntax == "python":
            self.frame_awaiting_code = None
            text = body.strip()
            if body[:1].isspace() and text and not text.startswith(("File ", "^", "~")):
                frame.code = text
        elif (context := _IPYTHON_CONTEXT.match(body)) is None:
            self.frame_awaiting_code = None
        elif context.group(1):
            frame.code = context.group(2).strip()
            self.frame_awaiting_code = None

    def _stack_frame(self, number: int, shape: str, parts: dict[str, str]) -> None:
        syntax = {"native_frame": "native", "torchscript_frame": "torchscript", "go_frame": "go"}[shape]
        if shape == "native_frame":
            body = parts["NATIVE_BODY"]
            paths = _NATIVE_PATH.findall(body)
            symbol = _NATIVE_SYMBOL.match(body)
            frame = Frame.model_construct(file=paths[-1] if paths else "", function=symbol.group(1) if symbol else None,
                                          syntax=syntax, line=number)
        else:
            frame = Frame.model_construct(file=parts.get("TS_PATH") or parts["GO_PATH"], lineno=int(parts["LINENO"]),
                                          function=parts.get("FUNC"), syntax=syntax, line=number)
        stack = self.open_stack
        if stack is None or stack.syntax != syntax:
            stack = self.open_stack = StackTrace.model_construct(line=number, end_line=number, syntax=syntax)
            self._add(self.log.stacks, stack)
        stack.frames.append(frame)
        stack.end_line = number

    def _open_traceback(self, number: int) -> PythonTraceback:
        self._close_blocks()
        self.open_traceback = PythonTraceback.model_construct(line=number, end_line=number)
        self._add(self.log.tracebacks, self.open_traceback)
        return self.open_traceback
