"""The lark Transformers of the producer grammars: each alternative's tree becomes its shape
(nforensics/parse/shapes.py); grammars/messages.lark's is nforensics/parse/message_transformer.py.

They run inside the LALR parser (`Lark(transformer=...)`), so no tree is built. Each method is named after
its alternative (rule or `->` alias) and handed its parts, a list in grammar order: tokens for terminals,
shapes for sub-rules, None for an optional part written `[x]` and absent (so each alternative has a fixed
list of parts); names with a leading underscore (`_SP`, `_SKIP_TO_CODE`) are never handed over. (Lark's
`v_args(inline=True)` would hand them as arguments instead, at about 2 ms more of every start-up.)
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token, Transformer

from nforensics.linear_regex import compile_linear
from nforensics.parse.shapes import (
    BirField,
    BirHeader,
    BirInstruction,
    CutMark,
    EnvSetting,
    ExceptionLine,
    IceField,
    IceMark,
    LiveThread,
    PackageVersion,
    ProducerLine,
    SgError,
    TracebackHeader,
    Unwrapped,
)
from nforensics.records import Frame

Parts = list[Any]  # an alternative's parts: Token, None (an absent `[x]`) or a sub-rule's shape

_NATIVE_PATH = compile_linear(r"(/[^\s()\[\]]+|[\w.-]+\.so(?:\.\d+)*)")
_NATIVE_SYMBOL = re.compile(r"(?:0x[0-9a-fA-F]+\s+in\s+)?([^\s(]+)")


def clean(text: Token | None) -> str:
    """A free-text part without its padding ("" when the part is absent)."""
    return (text or "").strip()


def optional(token: Token | None) -> str | None:
    return str(token) if token is not None else None


def _java_frame(call: str, source: str) -> Frame:
    """`ai.djl.serving.wlm.WorkerThread$Builder.build` at `WorkerThread.java:344`: the file is the class's package
    as folders (`ai/djl/serving/wlm/WorkerThread.java`), as frame paths are matched; the function is Class.method."""
    owner, _, method = call.rpartition("/")[2].rpartition(".")  # `java.base/`: a JVM module, not a folder
    package, _, cls = owner.rpartition(".")
    file, _, lineno = source.partition(":")
    if not lineno:  # `Native Method`, `Unknown Source`: the class names its file
        file = cls.split("$")[0] + ".java"
    return Frame.model_construct(file="/".join([*package.split("."), file]) if package else file,
                                 lineno=int(lineno) if lineno else None, function=f"{cls}.{method}", syntax="java")


def _number(token: Token | None) -> int | None:
    return int(token) if token is not None else None


class CompilerShapes(Transformer):
    """grammars/compiler.lark: driver lines, and the lines of the ICE banner and of BIR verifier blocks."""

    def driver_line(self, parts: Parts) -> ProducerLine:
        timestamp, level, pid, _thread, _subgraph, component, message = parts
        return ProducerLine("compiler", _own_message(message), str(level), str(component), _number(pid), str(timestamp))

    def untimed_driver_line(self, parts: Parts) -> ProducerLine:
        level, pid, _thread, _subgraph, component, message = parts
        return ProducerLine("compiler", _own_message(message), str(level), str(component), int(pid), None)

    def legacy_line(self, parts: Parts) -> ProducerLine:
        timestamp, level, pid, component, message = parts
        return ProducerLine("compiler", _own_message(message), str(level), str(component), _number(pid),
                            str(timestamp))

    def timing_line(self, parts: Parts) -> ProducerLine:
        timestamp, message = parts
        return ProducerLine("compiler", _own_message(message), timestamp=str(timestamp))

    def ice_border(self, _parts: Parts) -> IceMark:
        return IceMark(title=False)

    def ice_title(self, _parts: Parts) -> IceMark:
        return IceMark(title=True)

    def ice_field(self, parts: Parts) -> IceField:
        key, value = parts
        return IceField(str(key), clean(value))

    def ice_version(self, parts: Parts) -> IceField:
        [item] = parts
        return IceField("Version information", str(item))

    def ice_logs(self, parts: Parts) -> IceField:
        [path] = parts
        return IceField("Diagnostic logs", clean(path))

    def bir_header(self, parts: Parts) -> BirHeader:
        _prefix, title = parts
        return BirHeader(str(title))

    def bir_field(self, parts: Parts) -> BirField:
        key, value = parts
        return BirField(str(key), clean(value))

    def bir_instruction(self, parts: Parts) -> BirInstruction:
        head, reason = parts
        _, opcode, instruction = head.rstrip(":").split(" ")  # `Instruction DMACopy inst.32:`
        return BirInstruction(opcode, instruction, clean(reason))

    def sg_error(self, parts: Parts) -> SgError:
        [message] = parts
        return SgError(clean(message))


def _own_message(message: Token | None) -> str:
    # The driver puts one space after `]:`; more is the message's own indentation (a banner's, a traceback's).
    text = str(message or "")
    return text[1:] if text.startswith(" ") else text


class RuntimeShapes(Transformer):
    """grammars/runtime.lark: NRT and CCOM record lines, the inf1 daemon's lines, the infodump's marks."""

    def nrt_line(self, parts: Parts) -> ProducerLine:
        timestamp, *record = parts
        return _nrt_record(record, timestamp)

    def syslog_line(self, parts: Parts) -> ProducerLine:
        return _nrt_record(parts, None)

    def bare_line(self, parts: Parts) -> ProducerLine:
        return _nrt_record(parts, None)

    def untimed_line(self, parts: Parts) -> ProducerLine:
        level, module, function, message = parts
        return ProducerLine("runtime", clean(message), str(level), f"{module}:{function}", None, None, str(function))

    def daemon_line(self, parts: Parts) -> ProducerLine:
        head, message = parts
        return ProducerLine("runtime", clean(message), component=str(head))

    def ccom_line(self, parts: Parts) -> ProducerLine:
        timestamp, pid, _tid, _rank, _source, level, message = parts
        return ProducerLine("runtime", clean(message), str(level), "CCOM", int(pid), optional(timestamp))

    def cut_here(self, _parts: Parts) -> CutMark:
        return CutMark(opens=True)

    def cut_to_here(self, _parts: Parts) -> CutMark:
        return CutMark(opens=False)


def _nrt_record(parts: Parts, timestamp: Token | None) -> ProducerLine:
    pid, _tid, level, module, function, message = parts  # `30294:32381 ERROR  TDRV:tdrv_init message`
    return ProducerLine("runtime", clean(message), str(level), f"{module}:{function}", int(pid), optional(timestamp),
                        str(function))


class FrameworkShapes(Transformer):
    """grammars/framework.lark: the torch-neuronx / libneuronxla wrapper, NxDI, glog and logrus lines."""

    def wrapper_line(self, parts: Parts) -> ProducerLine:
        timestamp, pid, level, wrapper, message = parts
        return _framework_line(message, str(level), wrapper.strip("|"), pid, timestamp)

    def nxdi_line(self, parts: Parts) -> ProducerLine:
        timestamp, pid, level, message = parts
        return _framework_line(message, str(level), None, pid, timestamp)

    def glog_line(self, parts: Parts) -> ProducerLine:
        timestamp, level, source, message = parts
        return _framework_line(message, str(level), str(source), None, timestamp)

    def glog_header_line(self, parts: Parts) -> ProducerLine:
        stamp, _thread, source, message = parts  # `F0501 10:00:00.123456  1234 file.cc:226]`: the level leads the stamp
        return _framework_line(message, stamp[0], str(source), None, None)

    def python_warning(self, parts: Parts) -> ProducerLine:
        _source, _line, category, message = parts  # the category (UserWarning) names it, at warning level
        return _framework_line(message, "WARNING", str(category), None, None)

    def logrus_line(self, parts: Parts) -> ProducerLine:
        level, message = parts
        return _framework_line(message, level[:4], None, None, None)  # `ERRO[0004]`: the level is the word


def _framework_line(message: Token | None, level: str, component: str | None, pid: Token | None,
                    timestamp: Token | None) -> ProducerLine:
    return ProducerLine("framework", clean(message), level, component, _number(pid), optional(timestamp))


class TracebackShapes(Transformer):
    """grammars/traceback.lark: traceback headers, Python and IPython frames, native, TorchScript and Go
    frames, and the final exception line."""

    def python_header(self, _parts: Parts) -> TracebackHeader:
        return TracebackHeader(None)

    def ipython_header(self, parts: Parts) -> TracebackHeader:
        [header] = parts  # `StopIteration       Traceback (most recent call last)`: IPython names it first
        return TracebackHeader(header.split()[0])

    def faulthandler_header(self, parts: Parts) -> TracebackHeader:
        [header] = parts
        return TracebackHeader(None, innermost_first=True, other_thread=str(header).startswith("Thread"))

    def frame(self, parts: Parts) -> Frame:
        path, lineno, function = parts
        return Frame.model_construct(file=path.strip('"'), lineno=int(lineno), function=optional(function),
                                     syntax="python", code=None)

    def pytest_frame(self, parts: Parts) -> Frame:
        path, lineno, function = parts
        return Frame.model_construct(file=str(path), lineno=int(lineno), function=optional(function), syntax="python",
                                     code=None)

    def ipython_frame(self, parts: Parts) -> Frame:
        path, lineno, function = parts
        return Frame.model_construct(file=path.strip('"'), lineno=int(lineno), function=optional(function),
                                     syntax="ipython", code=None)

    def rich_frame(self, parts: Parts) -> Frame:
        _bar, path, lineno, function, _end = parts
        return Frame.model_construct(file=str(path), lineno=_number(lineno), function=str(function) if function else None,
                                     syntax="rich", code=None)

    def ipython_cell(self, parts: Parts) -> Frame:
        cell, lineno = parts
        return Frame.model_construct(file=f"Cell In{cell}", lineno=_number(lineno), function=None, syntax="ipython",
                                     code=None)

    def ipython_legacy_frame(self, parts: Parts) -> Frame:
        path, call = parts  # `.../optimum/modeling_base.py in from_pretrained(cls, ...)`: no line number
        return Frame.model_construct(file=str(path), lineno=None, function=str(call), syntax="ipython", code=None)

    def native_frame(self, parts: Parts) -> Frame:
        _index, body = parts
        # `#3  0x00007f3a1c in neuronxcc::Foo::run() from /opt/x/libwalrus.so`: the last path is the library.
        paths = _NATIVE_PATH.findall(body)
        symbol = _NATIVE_SYMBOL.match(body)
        return Frame.model_construct(file=paths[-1] if paths else "", function=symbol.group(1) if symbol else None,
                                     syntax="native")

    def assert_frame(self, parts: Parts) -> Frame:
        site, failed = parts  # `prog: /path/tensor.c:185: ` and `tensor_set_slice: Assertion ...`
        path, _, lineno = site.rstrip(": ").rpartition(" ")[2].rpartition(":")
        function = failed.partition(": Assertion")[0].strip() or None
        return Frame.model_construct(file=path, lineno=int(lineno), function=function, syntax="native")

    def check_frame(self, parts: Parts) -> Frame:
        failed, site = parts  # `Assertion failure: bad_use.empty()` and `  [inst_visitor.cpp:632]`
        path, _, lineno = site.strip().strip("[]").rpartition(":")
        return Frame.model_construct(file=path, lineno=int(lineno), function=None, syntax="native")

    def torchscript_frame(self, parts: Parts) -> Frame:
        path, lineno, function = parts
        return Frame.model_construct(file=str(path), lineno=int(lineno), function=str(function), syntax="torchscript")

    def go_frame(self, parts: Parts) -> Frame:
        path, lineno, _offset = parts
        return Frame.model_construct(file=str(path), lineno=int(lineno), function=None, syntax="go")

    def java_frame(self, parts: Parts) -> Frame:
        call, source, _tail = parts
        return _java_frame(str(call), str(source))

    def live_thread(self, _parts: Parts) -> LiveThread:
        return LiveThread()

    def pyspy_frame(self, parts: Parts) -> Frame:
        function, path, lineno, _note = parts
        return Frame.model_construct(file=str(path), lineno=int(lineno), function=str(function), syntax="pyspy")

    def root_frame(self, parts: Parts) -> Frame:
        _head, path = parts
        return Frame.model_construct(file=str(path), lineno=None, function=None, syntax="root")

    def exception(self, parts: Parts) -> ExceptionLine:
        _cause, name, *message = parts  # `RuntimeError: message`, or the name alone (Java's `Caused by: ` first)
        return ExceptionLine(str(name), clean(message[0] if message else None))


class EnvironmentShapes(Transformer):
    """grammars/environment.lark: apt, pip and freeze listings, `neuronx-cc --version`, variable settings."""

    def apt_line(self, parts: Parts) -> PackageVersion:
        package, _suite, _state, version, _rest = parts
        return PackageVersion(str(package), str(version))

    def pip_line(self, parts: Parts) -> PackageVersion:
        package, version = parts
        return PackageVersion(str(package), str(version))

    def freeze_line(self, parts: Parts) -> PackageVersion:
        package, version = parts
        return PackageVersion(str(package), str(version))

    def cc_version(self, parts: Parts) -> PackageVersion:
        _title, version, _rest = parts
        return PackageVersion("neuronx-cc", str(version))

    def env_assign(self, parts: Parts) -> EnvSetting:
        name, value = parts
        return EnvSetting(str(name), clean(value).strip("\"'"))

    def setenv_call(self, parts: Parts) -> EnvSetting:
        _call, name, value, _rest = parts
        return EnvSetting(name[1:-1], value[1:-1])  # both quoted: os.environ["XLA_USE_BF16"] = "1"


_C10_LEVELS = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "FATAL"}  # PyTorch's C++ logger's level letters


class PrefixShapes(Transformer):
    """grammars/prefixes.lark: the producer's own line behind the wrappers ("" when nothing follows them) and
    the level a logger's prefix gave it."""

    def start(self, parts: Parts) -> Unwrapped:
        *wrappers, own_level, own_line = parts
        level = None
        for token in wrappers:
            if token.type in ("VLLM", "PYLOG_PADDED"):
                level = token.split(" ", 1)[0]
            elif token.type == "STAMPED_LOGGER":
                level = token.split("] ", 1)[1].split(" ", 1)[0]
            elif token.type == "PYLOG":
                level = token.rstrip(" \t:").rsplit(":", 1)[-1]
            elif token.type == "PYLOG_DASHED":
                level = token.rstrip(" -").rsplit(" - ", 1)[-1]
            elif token.type == "PYLOG_BARE":
                level = token.split(":", 1)[0]
            elif token.type == "C10_LOG":
                level = _C10_LEVELS[token[1]]
            elif token.type == "BRACKET_LEVEL":
                level = token.strip(" \t:[]")
        if own_level is not None:  # the producer's own (`WARN` reads as `WARNING` does), kept in its line too
            level = own_level.strip("[]:")
        own = (own_level or "") + str(own_line or "")
        # A wrapper puts one space between itself and the line; more is the line's own indentation (a
        # traceback's frames and source lines), which says what the line is.
        # (pytest's marker is of fixed width: what follows it is the line's own indentation already.)
        last = wrappers[-1]
        pad = len(last) - len(last.rstrip(" \t")) if own and last.type != "PYTEST" else 0
        return Unwrapped(" " * (pad - 1) + own if pad > 1 else own, level)
