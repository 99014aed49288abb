"""One lark Transformer per grammar: each alternative's tree becomes its shape (forensics/parse/shapes.py).

They run inside the LALR parser (`Lark(transformer=...)`), so no tree is built: each method is handed the
parts of its alternative in grammar order, tokens for terminals and shapes for sub-rules. An optional part
written `[x]` in the grammar is handed as None when absent, so each alternative has a fixed list of parts;
names with a leading underscore (`_SP`, `_SKIP_TO_CODE`) are never handed over.
"""

from __future__ import annotations

import re

from lark import Token, Transformer, v_args

from forensics.linear_regex import compile_linear
from forensics.parse.nrt_status import status_name, status_number
from forensics.parse.shapes import (
    ApiTrace,
    BirField,
    BirHeader,
    BirInstruction,
    CodedMessage,
    CutMark,
    EnvSetting,
    ExceptionLine,
    ExitCode,
    IceField,
    IceMark,
    InstanceType,
    PackageVersion,
    ProcessEnd,
    ProducerLine,
    SgError,
    StatusMention,
    TracebackHeader,
)
from forensics.records import Frame, OutcomeKind

_NATIVE_PATH = compile_linear(r"(/[^\s()\[\]]+|[\w.-]+\.so(?:\.\d+)*)")
_NATIVE_SYMBOL = re.compile(r"(?:0x[0-9a-fA-F]+\s+in\s+)?([^\s(]+)")
_PARENTHESISED_NUMBER = re.compile(r"^'?\s*\((\d{1,19})\)")  # `'NERR_RESOURCE' (4)`: the number after a name
_PROCESS_NAME = compile_linear(r"\(([^)\s]+)\)")  # RE2: linear on `x(x(x(...`


def _clean(text: Token | None) -> str:
    """A free-text part without its padding ("" when the part is absent)."""
    return (text or "").strip()


def _optional(token: Token | None) -> str | None:
    return str(token) if token is not None else None


@v_args(inline=True)
class CompilerShapes(Transformer):
    """grammars/compiler.lark: driver lines, and the lines of the ICE banner and of BIR verifier blocks."""

    def driver_line(self, timestamp: Token, level: Token, pid: Token, _subgraph: Token | None, component: Token,
                    message: Token | None) -> ProducerLine:
        return ProducerLine("compiler", _own_message(message), str(level), str(component), int(pid), str(timestamp))

    def legacy_line(self, timestamp: Token, level: Token, pid: Token | None, component: Token,
                    message: Token | None) -> ProducerLine:
        return ProducerLine("compiler", _own_message(message), str(level), str(component),
                            int(pid) if pid is not None else None, str(timestamp))

    def timing_line(self, timestamp: Token, message: Token) -> ProducerLine:
        return ProducerLine("compiler", _own_message(message), timestamp=str(timestamp))

    def ice_border(self, _stars: Token) -> IceMark:
        return IceMark(title=False)

    def ice_title(self) -> IceMark:
        return IceMark(title=True)

    def ice_field(self, key: Token, value: Token | None) -> IceField:
        return IceField(str(key), _clean(value))

    def bir_header(self, _prefix: Token | None, title: Token) -> BirHeader:
        return BirHeader(str(title))

    def bir_field(self, key: Token, value: Token | None) -> BirField:
        return BirField(str(key), _clean(value))

    def bir_instruction(self, head: Token, reason: Token) -> BirInstruction:
        _, opcode, instruction = head.rstrip(":").split(" ")  # `Instruction DMACopy inst.32:`
        return BirInstruction(opcode, instruction, _clean(reason))

    def sg_error(self, message: Token) -> SgError:
        return SgError(_clean(message))


def _own_message(message: Token | None) -> str:
    # The driver puts one space after `]:`; more is the message's own indentation (a banner's, a traceback's).
    text = message or ""
    return text[1:] if text.startswith(" ") else str(text)


@v_args(inline=True)
class RuntimeShapes(Transformer):
    """grammars/runtime.lark: NRT and CCOM record lines, the inf1 daemon's lines, the infodump's marks."""

    def nrt_line(self, timestamp: Token, pid: Token, _tid: Token, level: Token, module: Token, function: Token,
                 message: Token | None) -> ProducerLine:
        return _nrt_record(pid, level, module, function, message, timestamp)

    def syslog_line(self, pid: Token, _tid: Token, level: Token, module: Token, function: Token,
                    message: Token | None) -> ProducerLine:
        return _nrt_record(pid, level, module, function, message, None)

    def bare_line(self, pid: Token, _tid: Token, level: Token, module: Token, function: Token,
                  message: Token | None) -> ProducerLine:
        return _nrt_record(pid, level, module, function, message, None)

    def daemon_line(self, head: Token, message: Token | None) -> ProducerLine:
        return ProducerLine("runtime", _clean(message), component=str(head))

    def ccom_line(self, timestamp: Token, pid: Token, _tid: Token, _rank: Token, _source: Token, level: Token,
                  message: Token | None) -> ProducerLine:
        return ProducerLine("runtime", _clean(message), str(level), "CCOM", int(pid), str(timestamp))

    def cut_here(self, _line: Token) -> CutMark:
        return CutMark(opens=True)

    def cut_to_here(self, _line: Token) -> CutMark:
        return CutMark(opens=False)


def _nrt_record(pid: Token, level: Token, module: Token, function: Token, message: Token | None,
                timestamp: Token | None) -> ProducerLine:
    return ProducerLine("runtime", _clean(message), str(level), f"{module}:{function}", int(pid), _optional(timestamp),
                        str(function))


@v_args(inline=True)
class FrameworkShapes(Transformer):
    """grammars/framework.lark: the torch-neuronx / libneuronxla wrapper, NxDI, glog and logrus lines."""

    def wrapper_line(self, timestamp: Token, pid: Token | None, level: Token, wrapper: Token,
                     message: Token | None) -> ProducerLine:
        return _framework_line(message, str(level), wrapper.strip("|"), pid, timestamp)

    def nxdi_line(self, timestamp: Token, pid: Token | None, level: Token, message: Token | None) -> ProducerLine:
        return _framework_line(message, str(level), None, pid, timestamp)

    def glog_line(self, timestamp: Token | None, level: Token, source: Token, message: Token | None) -> ProducerLine:
        return _framework_line(message, str(level), str(source), None, timestamp)

    def logrus_line(self, level: Token, message: Token | None) -> ProducerLine:
        return _framework_line(message, level[:4], None, None, None)  # `ERRO[0004]`: the level is the word


def _framework_line(message: Token | None, level: str, component: str | None, pid: Token | None,
                    timestamp: Token | None) -> ProducerLine:
    return ProducerLine("framework", _clean(message), level, component, int(pid) if pid is not None else None,
                        _optional(timestamp))


@v_args(inline=True)
class TracebackShapes(Transformer):
    """grammars/traceback.lark: traceback headers, Python and IPython frames, native, TorchScript and Go
    frames, and the final exception line."""

    def python_header(self, _header: Token) -> TracebackHeader:
        return TracebackHeader(None)

    def ipython_header(self, header: Token) -> TracebackHeader:
        # `StopIteration       Traceback (most recent call last)`: IPython names the exception first.
        return TracebackHeader(header.split()[0])

    def frame(self, path: Token, lineno: Token, function: Token | None) -> Frame:
        return Frame.model_construct(file=path.strip('"'), lineno=int(lineno), function=_optional(function),
                                     syntax="python", code=None)

    def ipython_frame(self, path: Token, lineno: Token, function: Token | None) -> Frame:
        return Frame.model_construct(file=path.strip('"'), lineno=int(lineno), function=_optional(function),
                                     syntax="ipython", code=None)

    def ipython_cell(self, cell: Token, lineno: Token | None) -> Frame:
        return Frame.model_construct(file=f"Cell In{cell}", lineno=int(lineno) if lineno is not None else None,
                                     function=None, syntax="ipython", code=None)

    def native_frame(self, _index: Token, body: Token) -> Frame:
        # `#3  0x00007f3a1c in neuronxcc::Foo::run() from /opt/x/libwalrus.so`: the last path is the library.
        paths = _NATIVE_PATH.findall(body)
        symbol = _NATIVE_SYMBOL.match(body)
        return Frame.model_construct(file=paths[-1] if paths else "", function=symbol.group(1) if symbol else None,
                                     syntax="native")

    def torchscript_frame(self, path: Token, lineno: Token, function: Token) -> Frame:
        return Frame.model_construct(file=str(path), lineno=int(lineno), function=str(function), syntax="torchscript")

    def go_frame(self, path: Token, lineno: Token, _offset: Token | None) -> Frame:
        return Frame.model_construct(file=str(path), lineno=int(lineno), function=None, syntax="go")

    def exception(self, name: Token, message: Token | None = None) -> ExceptionLine:
        return ExceptionLine(str(name), _clean(message))


@v_args(inline=True)
class EnvironmentShapes(Transformer):
    """grammars/environment.lark: apt, pip and freeze listings, `neuronx-cc --version`, variable settings."""

    def apt_line(self, package: Token, _suite: Token, _state: Token, version: Token, _rest: Token | None) -> PackageVersion:
        return PackageVersion(str(package), str(version))

    def pip_line(self, package: Token, version: Token) -> PackageVersion:
        return PackageVersion(str(package), str(version))

    def freeze_line(self, package: Token, version: Token) -> PackageVersion:
        return PackageVersion(str(package), str(version))

    def cc_version(self, _title: Token, version: Token, _rest: Token | None) -> PackageVersion:
        return PackageVersion("neuronx-cc", str(version))

    def env_assign(self, name: Token, value: Token | None) -> EnvSetting:
        return EnvSetting(str(name), _clean(value).strip("\"'"))

    def setenv_call(self, _call: Token, name: Token, value: Token, _rest: Token | None) -> EnvSetting:
        return EnvSetting(name[1:-1], value[1:-1])  # both quoted: os.environ["XLA_USE_BF16"] = "1"


@v_args(inline=True)
class PrefixShapes(Transformer):
    """grammars/prefixes.lark: the producer's own line behind the wrappers ("" when nothing follows them)."""

    def start(self, *parts: Token | None) -> str:
        return str(parts[-1] or "")


@v_args(inline=True)
class MessageShapes(Transformer):
    """grammars/messages.lark: the shapes found inside a message, one start rule each."""

    def coded(self, severity: Token | None, code: Token, op: Token | None, text: Token | None) -> CodedMessage:
        return CodedMessage(str(code), _clean(text), severity.strip("[]") if severity else None,
                            op.strip("()") if op else None, rest=str(text or ""))

    def mlir_coded(self, location: Token, code: Token, text: Token | None) -> CodedMessage:
        return CodedMessage(str(code), _clean(text), location=str(location), rest=str(text or ""))

    def exit_status(self, found: ExitCode, _rest: Token | None) -> ExitCode:
        return found

    def failed_with(self, tool: Token, code: Token) -> ExitCode:
        return ExitCode(str(tool), int(code))

    def exitcode(self, code: Token) -> ExitCode:
        return ExitCode("neuronx-cc", int(code))

    def died_with(self, _signal: Token, number: Token) -> ExitCode:
        return ExitCode("neuronx-cc", -int(number))  # killed by signal N: the shell's exit code is -N

    def nonzero(self, code: Token) -> ExitCode:
        return ExitCode("neuronx-cc", int(code))

    def nrt_status(self, found: StatusMention, text: Token | None) -> StatusMention:
        # A status printed by name may have its number in parentheses after it (`'NERR_RESOURCE' (4)`), which
        # usually lexes as the text after the name.
        trailing = _parenthesised_number(text)
        name = found.name
        if name and name.startswith("NERR_"):  # LEGACY_STATUS: a pre-2.x daemon's name (NRT's are NRT_*)
            name = _legacy_status(name, found.number if found.number is not None else trailing)
        number = found.number if found.number is not None else trailing if name else None
        return StatusMention(number if number is not None else status_number(name), name, found.api)

    def err_number(self, number: Token) -> StatusMention:
        return _numbered(number)

    def api_status(self, api: Token, number: Token) -> StatusMention:
        return _numbered(number, api)

    def with_status(self, number: Token) -> StatusMention:
        return _numbered(number)

    def status_message(self, number: Token) -> StatusMention:
        return _numbered(number)

    def failure_name(self, name: Token, api: Token) -> StatusMention:
        return StatusMention(None, str(name), str(api))

    def legacy_name(self, name: Token, number: Token | None) -> StatusMention:
        return StatusMention(int(number) if number is not None else None, str(name))

    def outcome(self, how: str, text: Token | None) -> ProcessEnd:
        kind, signal = _ENDINGS[how]
        rest = text or ""
        process = _PROCESS_NAME.search(rest)  # `... (neuronx-cc)`
        if process:
            return ProcessEnd(kind, signal, process.group(1))
        if how == "shell killed" and rest.strip():  # the shell's job line names the command after `Killed`
            return ProcessEnd(kind, signal, rest.split()[0].rsplit("/", 1)[-1])
        return ProcessEnd(kind, signal)

    def killed(self, _word: Token) -> str:
        return "shell killed"

    def oom_killed(self, *_parts: Token) -> str:
        # What follows `Killed process` lexes as the outcome's TEXT: the process is named there.
        return "oom killed"

    def crash_signal(self, signal: Token) -> str:
        return "segfault" if "Segmentation" in signal else "abort"

    def api_call(self, api: Token, phase: Token, _rest: Token | None) -> ApiTrace:
        return ApiTrace(str(api), "IN" if phase == "IN" else "OUT")

    def env_setting(self, name: Token, value: Token, text: Token | None) -> EnvSetting:
        return EnvSetting(str(name), value.strip("\"'"), str(text or ""))

    def instance_type(self, instance: Token, _rest: Token | None) -> InstanceType:
        return InstanceType(str(instance))

    def package_version(self, found: PackageVersion, text: Token | None) -> PackageVersion:
        return PackageVersion(found.name, found.version, str(text or ""))

    def cache_dir(self, version: Token) -> PackageVersion:
        return PackageVersion("neuronx-cc", str(version))  # a compile-cache folder: neuronxcc-2.23.6484.0+3b612583

    def named_version(self, name: Token, version: Token) -> PackageVersion:
        return PackageVersion(name.replace(" ", "-"), str(version))  # `Neuron SDK 2.29`: Neuron-SDK


def _numbered(number: Token, api: Token | None = None) -> StatusMention:
    return StatusMention(int(number), status_name(int(number)), _optional(api))


def _parenthesised_number(text: Token | None) -> int | None:
    number = _PARENTHESISED_NUMBER.search(text or "")
    return int(number.group(1)) if number else None


# How a process ended -> (outcome kind, the signal that ends it that way)
_ENDINGS: dict[str, tuple[OutcomeKind, int]] = {
    "shell killed": ("killed", 9), "oom killed": ("killed", 9), "segfault": ("segfault", 11), "abort": ("abort", 6)}


def _legacy_status(name: str, number: int | None) -> str | None:
    """The NRT status a pre-2.x daemon name (`NERR_RESOURCE`) stands for: the same suffix, else the status
    its number names (none, when no status has that number), else the name as printed."""
    modern = "NRT_" + name.removeprefix("NERR_")
    if status_number(modern) is not None:
        return modern
    return status_name(number) if number is not None and number >= 0 else name


TRANSFORMERS: dict[str, type[Transformer]] = {
    "compiler": CompilerShapes, "runtime": RuntimeShapes, "framework": FrameworkShapes, "traceback": TracebackShapes,
    "environment": EnvironmentShapes, "prefixes": PrefixShapes, "messages": MessageShapes,
}
