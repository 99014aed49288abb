"""Reading one message: the coded diagnostics, NRT statuses, exit codes, process outcomes, API trace,
settings, package versions and compiler commands a line of text can carry, wherever it was printed."""

from __future__ import annotations

import ast
import re
import shlex
from typing import TypeVar

from nforensics.packages import package_key
from nforensics.parse.grammars import parse
from nforensics.parse.literals import may_parse
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
from nforensics.parse.state import CONTINUATION_LINES, AssemblerState
from nforensics.records import CompilerInvocation, Diagnostic
from nforensics.vocabulary import reads_as_failure

_ARGV_LIST = re.compile(r"\[\s*'(?:neuronx-cc|neuron-cc)'[^\]]*\]")
_COMMAND_TEXT = re.compile(r"(?:^|\s)((?:\S*/)?neuronx?-cc\s+compile\s.+)$")
_COMPILER_ARGS = re.compile(r"compiler_args\s*=\s*(\[[^\]]*\]|\"[^\"]*\"|'[^']*')")
_TARGET_FLAG = re.compile(r"--target[= ](\w+)")
_INSTANCE_TARGET = re.compile(r"^(trn\d|inf\d)")
# Where the compiler reads and writes, not how it compiles: not reported as compiler flags.
_IO_FLAGS = {"--output", "-o", "--logfile", "--logdir", "--workdir", "--log-file", "--pipeline"}
# A code or status name without the shape a tool prints it in is a printed fact only where the line says
# something failed, where it heads the line (`NCC_INLA001: activation tables must be <= 8`), or when it is all
# the line says; elsewhere it is a mention: prose ("fixed the NCC_IXLV002 issue"), a shell prompt
# (`user@host:~$ grep NCC_IXLV002`), a heading (`## NCC_EVRF029`), source code (`ret == NRT_RESOURCE`).
_ONLY_A_NAME = re.compile(r"^\s*[A-Z][A-Z0-9_]+(?:[\s.,;!]*$|:\s)")
_KEEP_LEVELS = {"ERROR", "FATAL", "CRITICAL", "USER", "WARNING", "WARN", "E", "F", "W", "ERRO", "FATA"}
# A compile that starts and one that ends (either way): neuronx-cc, neuron-cc and the framework wrappers.
# (torch-neuron's tracer counts the operators "(pre-compilation)" just before it starts the compiler.)
_COMPILE_START = re.compile(r"(?i)\b(?:compiling\b|compilation (?:started|in progress)|start(?:ing)? compil)"
                            r"|\(pre-compilation\)|(?P<command>\bneuronx?-cc\s+compile\b)")
COMPILE_END = re.compile(r"(?i)compiler status|compil\w* (?:successful|succeeded|finished|complete|done|failed)|"
                          r"successfully compiled|compile(?:d)? (?:time|in)\b|command returned|fail|error|(?-i:\bPASS\b)|"
                          r"returning a CPU trace")

Shape = TypeVar("Shape")


# pip fetching a wheel: `Downloading https://.../neuronx_cc-2.19.8089.0%2B8ab9f450-cp310-cp310-linux_x86_64.whl`
_PIP_FETCH = re.compile(r"^\s*(?:Downloading|Using cached) \S*?([A-Za-z0-9_.]+)-(\d[\w.%+!]*)-(?:cp|py)\w*-")
RESOLVER_VERSIONS = 3  # releases of one package fetched in one install: the resolver is backtracking
_RESOLVER_WORDS = ("Downloading", "Using cached", "pip is looking", "Successfully installed")  # what it reads
# What these readers look for in a line of any level (gates.py keeps levelled chatter that holds one).
LEVELLED_READS = (_COMPILE_START, COMPILE_END, _PIP_FETCH, _ARGV_LIST, _COMMAND_TEXT, _COMPILER_ARGS, _TARGET_FLAG,
                  *(re.compile(re.escape(word)) for word in _RESOLVER_WORDS))


def _find(start: str, shape: type[Shape], text: str) -> Shape | None:
    """The first `shape` in a message: grammars/messages.lark has one start rule per shape. A line without
    any of the words the rule needs skips its parser."""
    if not may_parse("messages", start, text):
        return None
    found = parse("messages", text, start)
    return found if isinstance(found, shape) else None


class MessageReader(AssemblerState):
    """Records found inside a message, and the environment listings (packages, variables, flags)."""

    def _message(self, number: int, text: str, *, producer: str | None, level: str | None,
                 component: str | None) -> bool:
        """Search a message for coded diagnostics, statuses, settings and commands."""
        found = False
        opening = _find("diagnostic", CodedMessage, text)
        if opening is None and (bare := _find("bare_diagnostic", CodedMessage, text)) and _printed_as_fact(text):
            self.unbracketed_codes.add(number)
            opening = bare._replace(rest="")
        rest, first = text, True
        while rest and (coded := opening if first else _find("diagnostic", CodedMessage, rest)):
            diagnostic = coded.at(number)
            # [IDLE300] in another tool's line is no compiler code: without NCC_, the compiler must be speaking.
            if (not coded.unprefixed or producer == "compiler" or coded.severity) and self._plausible_code(diagnostic, rest):
                self._add(self.log.diagnostics, diagnostic)
                if first:  # every code on the line is a record; the first one opens the wrapped message
                    self._close_blocks()
                    self.open_diagnostic = diagnostic
                self.last_error = number
                found = True
            rest, first = coded.rest, False
        found |= self._statuses(number, text)
        found |= self._outcomes(number, text)
        found |= self._api_calls(number, text)
        self.track_operations(number, text)
        found |= self._settings(number, text)
        found |= self._versions(number, text)
        found |= self._commands(number, text)
        if opening is None and self.open_diagnostic and producer is None and not found:
            # Coded messages wrap onto unprefixed lines; a line that is a record of its own (an exit
            # status, a command, a producer line) starts something new.
            found = self._continue_diagnostic(number, text)
        if producer is None and not found:
            # A plain line: keep it when it reads like a failure, for signature patterns and evidence.
            return reads_as_failure(text)
        return found or producer is not None and (level or "").upper() in _KEEP_LEVELS

    def _plausible_code(self, diagnostic: Diagnostic, text: str) -> bool:
        # Three capitals and three digits are common in other text; accept the legacy bracket form only
        # with a compiler context (reference/log-formats.md §3).
        if diagnostic.code.startswith("NCC_") or diagnostic.code[0] == "F" and diagnostic.code[1:].isdigit():
            return True
        return bool(diagnostic.message) and (diagnostic.op is not None or len(diagnostic.message) > 8)

    def _continue_diagnostic(self, number: int, text: str) -> bool:
        diagnostic = self.open_diagnostic
        assert diagnostic is not None
        if number - diagnostic.line >= CONTINUATION_LINES or not text.strip():
            self.open_diagnostic = None
            return False
        diagnostic.message = f"{diagnostic.message} {text.strip()}".strip()
        diagnostic.end_line = number
        return True

    def _statuses(self, number: int, text: str) -> bool:
        found = False
        if status := _find("nrt_status", StatusMention, text):
            self._add(self.log.nrt_statuses, status.at(number))
            found = True
        elif (status := _find("named_status", StatusMention, text)) and _printed_as_fact(text):
            self._add(self.log.nrt_statuses, status.at(number))
            found = True
        if (exit_code := _find("exit_status", ExitCode, text)) and exit_code.code != 0:  # 0: it succeeded
            self._add(self.log.exits, exit_code.at(number))
            found = True
        return found

    def _outcomes(self, number: int, text: str) -> bool:
        if not (ended := _find("outcome", ProcessEnd, text)):
            return False
        self._add(self.log.outcomes, ended.at(number, text.strip()))
        if ended.kind != "interrupted":  # someone stopping a run reports no error of the run's
            self.last_error = number
        return True

    def _api_calls(self, number: int, text: str) -> bool:
        if not (trace := _find("api_call", ApiTrace, text)):
            return False
        self._add(self.log.api_calls, trace.at(number))
        if trace.phase == "IN":
            self.open_apis[trace.api] = number
        else:
            self.open_apis.pop(trace.api, None)
        return True

    def track_operations(self, number: int, text: str) -> None:
        """Where a compile or pip's backtracking opens and closes. Also run on a line the flood shortcut does not
        parse again: the same words close a compile the second time that closed nothing the first."""
        self._compile_progress(number, text)
        if any(word in text for word in _RESOLVER_WORDS):
            self._resolver_progress(number, text)

    def _compile_progress(self, number: int, text: str) -> None:
        """Where a compile opens and closes, for telling a hang inside it from a log that stopped after it."""
        if COMPILE_END.search(text):
            self.compile_ended = self.compile_ended or self.open_compile is not None
            self.open_compile = None
        elif (start := _COMPILE_START.search(text)) is not None and self.open_compile is None:
            self.open_compile = number  # (a wrapper's command line after "Compiling model ..." is the same compile)
            self.compile_command = start["command"] is not None

    def _resolver_progress(self, number: int, text: str) -> None:
        """pip fetching release after release of one package is its resolver backtracking: a log that ends
        there is still resolving (the Neuron wheels are hundreds of MB each, so it can take hours)."""
        if "Successfully installed" in text:
            self.resolving = None
        elif "pip is looking" in text:  # pip says so itself
            self.resolving = number
        elif fetched := _PIP_FETCH.match(text):
            versions = self.fetched_versions.setdefault(fetched.group(1).lower().replace("-", "_"), set())
            versions.add(fetched.group(2))
            self.resolver_steps += 1  # (a record of sorts: the next wheel of the same shape must be read too)
            if len(versions) >= RESOLVER_VERSIONS:
                self.resolving = number

    def _settings(self, number: int, text: str) -> bool:
        env = self.log.environment
        found = False
        rest = text
        while setting := _find("env_setting", EnvSetting, rest):
            self._set_env(number, setting.name, setting.value)
            rest = setting.rest
            found = True
        if instance_type := _find("instance_type", InstanceType, text):
            instance = instance_type.name
            env.instance_type = env.instance_type or instance
            env.lines.setdefault("instance_type", number)
            if env.target is None and (match := _INSTANCE_TARGET.match(instance)):
                env.target = match.group(1)
            found = True
        return found

    def _versions(self, number: int, text: str) -> bool:
        """Package versions named in prose or paths; a listing line seen earlier keeps precedence."""
        found = False
        rest = text
        while rest and (version := _find("package_version", PackageVersion, rest)):
            self._package(number, version.name, version.version)
            rest = version.rest
            found = True
        return found

    def _set_env(self, number: int, name: str, value: str) -> None:
        env = self.log.environment
        env.env_vars[name] = value
        env.lines[f"env:{name}"] = number
        if name == "NEURON_CC_FLAGS":
            self._flags(number, shlex_split(value))

    def _flags(self, number: int, argv: list[str]) -> None:
        env = self.log.environment
        for index, arg in enumerate(argv):
            if not arg.startswith("-") or arg.split("=", 1)[0] in _IO_FLAGS or arg in env.compiler_flags:
                continue
            # `--model-type transformer` is one flag: keep the value with it.
            if "=" not in arg and index + 1 < len(argv) and not argv[index + 1].startswith("-") and arg.startswith("--"):
                arg = f"{arg}={argv[index + 1]}"
            env.compiler_flags.append(arg)
            env.lines.setdefault(f"flag:{arg}", number)
            if arg.startswith("--target="):
                env.target = arg.split("=", 1)[1]
                env.lines.setdefault("target", number)

    def _commands(self, number: int, text: str) -> bool:
        argv: list[str] | None = None
        if "-cc'" in text and (match := _ARGV_LIST.search(text)):
            try:
                argv = [str(a) for a in ast.literal_eval(match.group(0))]
            except (ValueError, SyntaxError):
                argv = None
        elif "compile" in text and (match := _COMMAND_TEXT.search(text)):
            argv = shlex_split(match.group(1))
        elif "compiler_args" in text and (match := _COMPILER_ARGS.search(text)):
            try:
                value = ast.literal_eval(match.group(1))
            except (ValueError, SyntaxError):
                value = []
            self._flags(number, shlex_split(value) if isinstance(value, str) else [str(v) for v in value])
            return True
        elif "--target" in text and (match := _TARGET_FLAG.search(text)):
            self._flags(number, [f"--target={match.group(1)}"])
            return True
        if not argv:
            return False
        self._flags(number, argv)
        target = next((a.split("=", 1)[1] for a in argv if a.startswith("--target=")), None)
        self._add(self.log.invocations, CompilerInvocation.model_construct(
            line=number, argv=argv, target=target, flags=[a for a in argv if a.startswith("-")]))
        return True

    def _environment_line(self, number: int, body: str) -> bool:
        match parse("environment", body):
            case PackageVersion(name=name, version=version):
                self._package(number, name, version)
            case EnvSetting(name=name, value=value):
                self._set_env(number, name, value)
            case _:
                return False
        return True

    def _package(self, number: int, name: str, version: str) -> None:
        env = self.log.environment
        key = package_key(name)
        env.packages.setdefault(key, version)
        env.lines.setdefault(f"pkg:{key}", number)

def _printed_as_fact(text: str) -> bool:
    return reads_as_failure(text) or _ONLY_A_NAME.match(text) is not None


def shlex_split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()
