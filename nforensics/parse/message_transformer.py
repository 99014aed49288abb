"""The transformer of grammars/messages.lark: the shapes found inside a message, one start rule each (a coded
diagnostic, an exit status, a runtime status, how a process ended, the NRT API trace, a setting, an instance
type, a package version). nforensics/parse/transformers.py says how a transformer is handed its parts."""

from __future__ import annotations

import re

from lark import Token, Transformer

from nforensics.linear_regex import compile_linear
from nforensics.parse.nrt_status import legacy_number_name, legacy_status, status_name, status_number
from nforensics.parse.shapes import (
    ApiTrace,
    CodedMessage,
    EnvSetting,
    ExitCode,
    InstanceType,
    PackageVersion,
    ProcessEnd,
    StatusMention,
)
from nforensics.parse.transformers import Parts, clean, optional
from nforensics.records import OutcomeKind

_PARENTHESISED_NUMBER = re.compile(r"^'?\s*\((\d{1,19})\)")  # `'NERR_RESOURCE' (4)`: the number after a name
_UNPREFIXED_SCHEME = re.compile(r"^[EIW][A-Z]{3,4}\d{3}$")
_SIGNAL = re.compile(r"(?<![\w])(?:SIG)?(KILL|SEGV|ABRT|9|11|6)\b")  # the first signal a line names
_EXIT_CODE_OF_SIGNAL = re.compile(r"(?i:code):? ?(137|139|134)(?!\d)")
_PROCESS_NAME = compile_linear(r"\(([^)\s]+)\)")  # RE2: linear on `x(x(x(...`
# How a process ended -> (outcome kind, the signal that ends it that way)
_ENDINGS: dict[str, tuple[OutcomeKind, int]] = {
    "shell killed": ("killed", 9), "oom killed": ("killed", 9),
    "signal kill": ("killed", 9), "interrupted": ("interrupted", 2), "terminated": ("interrupted", 15),
    "segfault": ("segfault", 11), "abort": ("abort", 6)}


class MessageShapes(Transformer):
    """grammars/messages.lark."""

    def coded(self, parts: Parts) -> CodedMessage:
        severity, code, op, text = parts
        scheme = _scheme_code(str(code))
        return CodedMessage(scheme, clean(text), severity.strip("[]") if severity else None,
                            op.strip("()") if op else None, rest=str(text or ""), unprefixed=scheme != str(code))

    def bare_diagnostic(self, parts: Parts) -> CodedMessage:
        code, text = parts
        message = str(text or "")
        return CodedMessage(str(code), message.lstrip(" :-").strip(), rest=message)

    def mlir_coded(self, parts: Parts) -> CodedMessage:
        location, code, text = parts
        return CodedMessage(str(code), clean(text), location=str(location), rest=str(text or ""))

    def exit_status(self, parts: Parts) -> ExitCode:
        found, _rest = parts
        return found

    def failed_with(self, parts: Parts) -> ExitCode:
        tool, code = parts
        return ExitCode(str(tool), int(code))

    def exitcode(self, parts: Parts) -> ExitCode:
        [code] = parts
        return ExitCode("neuronx-cc", int(code))

    def died_with(self, parts: Parts) -> ExitCode:
        _signal, number = parts
        return ExitCode("neuronx-cc", -int(number))  # killed by signal N: the shell's exit code is -N

    def nonzero(self, parts: Parts) -> ExitCode:
        [code] = parts
        return ExitCode("neuronx-cc", int(code))

    def stage_nonzero(self, parts: Parts) -> ExitCode:
        [code] = parts
        return ExitCode("compiler stage", int(code))

    def command_returned(self, parts: Parts) -> ExitCode:
        [code] = parts
        return ExitCode("neuron-cc", int(code))

    def nrt_status(self, parts: Parts) -> StatusMention:
        found, text = parts
        # A status printed by name may have its number in parentheses after it (`'NERR_RESOURCE' (4)`), which
        # usually lexes as the text after the name.
        trailing = _parenthesised_number(text)
        name = found.name
        number = found.number if found.number is not None else trailing if name else None
        if name and name.startswith("NERR_"):  # LEGACY_STATUS: a pre-2.x daemon's name; its number is the daemon's
            name = legacy_status(name, number)
            number = status_number(name)
        return StatusMention(number if number is not None else status_number(name), name, found.api)

    def named_status(self, parts: Parts) -> StatusMention | None:
        name, _text = parts
        # Only the runtime's own enum: NRT_ also starts names that are not statuses (NRT_SUCCESS is not a failure).
        number = status_number(str(name))
        return StatusMention(number, str(name)) if number else None

    def err_number(self, parts: Parts) -> StatusMention:
        [number] = parts
        return _numbered(number)

    def api_status(self, parts: Parts) -> StatusMention:
        api, number = parts
        return _numbered(number, api)

    def with_status(self, parts: Parts) -> StatusMention:
        [number] = parts
        return _numbered(number)

    def daemon_number(self, parts: Parts) -> StatusMention:
        """tensorflow-neuron's `nrt status code N` (inf1, the runtime daemon's): its numbers name NRT's
        statuses only where the two agree (legacy_status)."""
        [number] = parts
        return StatusMention(int(number), legacy_number_name(int(number)))

    def status_message(self, parts: Parts) -> StatusMention:
        [number] = parts
        return _numbered(number)

    def failure_name(self, parts: Parts) -> StatusMention:
        name, api = parts
        return StatusMention(None, str(name), str(api))

    def legacy_name(self, parts: Parts) -> StatusMention:
        name, number = parts
        return StatusMention(int(number) if number is not None else None, str(name))

    def outcome(self, parts: Parts) -> ProcessEnd:
        how, text = parts
        kind, signal = _ENDINGS[how]
        rest = text or ""
        process = _PROCESS_NAME.search(rest)  # `... (neuronx-cc)`
        if process:
            return ProcessEnd(kind, signal, process.group(1))
        if how == "shell killed" and rest.strip():  # the shell's job line names the command after `Killed`
            return ProcessEnd(kind, signal, rest.split()[0].rsplit("/", 1)[-1])
        return ProcessEnd(kind, signal)

    def killed(self, _parts: Parts) -> str:
        return "shell killed"

    def oom_killed(self, _parts: Parts) -> str:
        # What follows `Killed process` lexes as the outcome's TEXT: the process is named there.
        return "oom killed"

    def crash_signal(self, parts: Parts) -> str:
        [signal] = parts
        return "segfault" if "Segmentation" in signal else "abort"

    def interrupted(self, parts: Parts) -> str:
        [said] = parts
        return "terminated" if "15" in said else "interrupted"

    def signalled(self, parts: Parts) -> str:
        [said] = parts  # `killed by signal 9`, `terminated by signal SIGKILL`, torchrun's and vLLM's `-9`
        if code := _EXIT_CODE_OF_SIGNAL.search(said):  # `exit code 137`: 128 + the signal
            signal = str(int(code.group(1)) - 128)
        else:
            signal = number.group(1) if (number := _SIGNAL.search(said)) else ""
        return {"9": "signal kill", "KILL": "signal kill", "11": "segfault", "SEGV": "segfault"}.get(signal, "abort")

    def api_call(self, parts: Parts) -> ApiTrace:
        api, phase, _rest = parts
        return ApiTrace(str(api), "IN" if phase == "IN" else "OUT")

    def env_setting(self, parts: Parts) -> EnvSetting:
        name, value, text = parts
        return EnvSetting(str(name), value.strip("\"'"), str(text or ""))

    def instance_type(self, parts: Parts) -> InstanceType:
        instance, _rest = parts
        return InstanceType(str(instance))

    def package_version(self, parts: Parts) -> PackageVersion:
        found, text = parts
        return PackageVersion(found.name, found.version, str(text or ""))

    def cache_dir(self, parts: Parts) -> PackageVersion:
        [version] = parts  # a compile-cache folder: neuronxcc-2.23.6484.0+3b612583
        return PackageVersion("neuronx-cc", str(version))

    def named_version(self, parts: Parts) -> PackageVersion:
        name, version = parts
        return PackageVersion(name.replace(" ", "-"), str(version))  # `Neuron SDK 2.29`: Neuron-SDK


def _scheme_code(code: str) -> str:
    """`IXLV002` printed without its prefix is NCC_IXLV002 (class letter and component of the documented
    scheme); three letters are the legacy scheme (TEN404) and stay as printed."""
    return "NCC_" + code if _UNPREFIXED_SCHEME.match(code) else code


def _numbered(number: Token, api: Token | None = None) -> StatusMention:
    return StatusMention(int(number), status_name(int(number)), optional(api))


def _parenthesised_number(text: Token | None) -> int | None:
    number = _PARENTHESISED_NUMBER.search(text or "")
    return int(number.group(1)) if number else None
