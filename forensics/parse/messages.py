"""Reading one message: the coded diagnostics, NRT statuses, exit codes, process outcomes, API trace,
settings, package versions and compiler commands a line of text can carry, wherever it was printed."""

from __future__ import annotations

import ast
import re
import shlex

from forensics.linear_regex import compile_linear
from forensics.packages import package_key
from forensics.parse.grammars import flatten, parse
from forensics.parse.nrt_status import status_name, status_number
from forensics.parse.state import CONTINUATION_LINES, AssemblerState, clean
from forensics.records import ApiCall, CompilerInvocation, Diagnostic, ExitStatus, NrtStatus, ProcessOutcome
from forensics.vocabulary import reads_as_failure

_ARGV_LIST = re.compile(r"\[\s*'(?:neuronx-cc|neuron-cc)'[^\]]*\]")
_COMMAND_TEXT = re.compile(r"(?:^|\s)((?:\S*/)?neuronx?-cc\s+compile\s.+)$")
_COMPILER_ARGS = re.compile(r"compiler_args\s*=\s*(\[[^\]]*\]|\"[^\"]*\"|'[^']*')")
_TARGET_FLAG = re.compile(r"--target[= ](\w+)")
_VERSION_HINT = re.compile(r"neuronxcc-\d|neuronx?-cc|torch[-_]neuronx|libneuronxla|nki|NKI|Neuron SDK|aws-neuronx-")  # gate
_INSTANCE_TARGET = re.compile(r"^(trn\d|inf\d)")
# Where the compiler reads and writes, not how it compiles: not reported as compiler flags.
_IO_FLAGS = {"--output", "-o", "--logfile", "--logdir", "--workdir", "--log-file", "--pipeline"}
_KEEP_LEVELS = {"ERROR", "FATAL", "CRITICAL", "USER", "WARNING", "WARN", "E", "F", "W", "ERRO", "FATA"}
_LEGACY_NUMBER = re.compile(r"^'?\s*\((\d{1,19})\)")
_PROCESS_NAME = compile_linear(r"\(([^)\s]+)\)")  # RE2: linear on `x(x(x(...`
# A compile that starts and one that ends (either way): neuronx-cc, neuron-cc and the framework wrappers.
# (torch-neuron's tracer counts the operators "(pre-compilation)" just before it starts the compiler.)
_COMPILE_START = re.compile(r"(?i)\b(?:compiling\b|compilation (?:started|in progress)|neuronx?-cc\s+compile\b|"
                            r"start(?:ing)? compil)|\(pre-compilation\)")
COMPILE_END = re.compile(r"(?i)compiler status|compil\w* (?:successful|succeeded|finished|complete|done|failed)|"
                          r"successfully compiled|compile(?:d)? (?:time|in)\b|command returned|fail|error|\bPASS\b")


class MessageReader(AssemblerState):
    """Records found inside a message, and the environment listings (packages, variables, flags)."""

    def _message(self, number: int, text: str, *, producer: str | None, level: str | None,
                 component: str | None) -> bool:
        """Search a message for coded diagnostics, statuses, settings and commands."""
        found = False
        tree = parse("messages", text, "diagnostic") if "[" in text else None
        rest, first = text, True
        while rest and (coded := tree if first else parse("messages", rest, "diagnostic") if "[" in rest else None):
            shape, parts = flatten(coded)
            diagnostic = Diagnostic.model_construct(
                code=parts["CODE"], severity=parts.get("SEVERITY_TAG", "").strip("[]") or None,
                message=clean(parts.get("TEXT")), op=(parts.get("OP") or "").strip("()") or None,
                location=parts.get("LOC"), line=number, end_line=number)
            if self._plausible_code(diagnostic, rest):
                self._add(self.log.diagnostics, diagnostic)
                if first:  # every code on the line is a record; the first one opens the wrapped message
                    self._close_blocks()
                    self.open_diagnostic = diagnostic
                self.last_error = number
                found = True
            rest, first = parts.get("TEXT", ""), False
        found |= self._statuses(number, text)
        found |= self._outcomes(number, text)
        found |= self._api_calls(number, text)
        self._compile_progress(number, text)
        found |= self._settings(number, text)
        found |= self._versions(number, text)
        found |= self._commands(number, text)
        if tree is None and self.open_diagnostic and producer is None and not found:
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
        if ("status" in text or "err:" in text or "Failure:" in text or "NERR_" in text) and (
                tree := parse("messages", text, "nrt_status")):
            _, parts = flatten(tree)
            value = int(parts["INT"]) if "INT" in parts else None
            name = parts.get("STATUS_NAME") or legacy_status(parts.get("LEGACY_STATUS"), text) or status_name(value)
            if value is None and name and (legacy := _LEGACY_NUMBER.search(parts.get("TEXT", ""))):
                value = int(legacy.group(1))
            self._add(self.log.nrt_statuses, NrtStatus.model_construct(
                line=number, number=value if value is not None else status_number(name), name=name, api=parts.get("API")))
            found = True
        if ("with" in text or "exit" in text or "died" in text) and (tree := parse("messages", text, "exit_status")):
            _, parts = flatten(tree)
            code = int(parts["INT"])
            if "SIGNAL" in parts:
                code = -code
            tool = parts.get("TOOL") or "neuronx-cc"
            self._add(self.log.exits, ExitStatus.model_construct(line=number, tool=tool, code=code))
            found = True
        return found

    def _outcomes(self, number: int, text: str) -> bool:
        if not ("illed" in text or "Segmentation" in text or "dumped)" in text) or not (
                tree := parse("messages", text, "outcome")):
            return False
        shape, parts = flatten(tree)
        rest = parts.get("TEXT", "")
        process = _PROCESS_NAME.search(rest)
        kind = "killed" if "KILLED_WORD" in parts or "OOM_KILLER" in parts else (
            "segfault" if "Segmentation" in parts.get("CRASH_SIGNAL", "") else "abort")
        if process:
            named = process.group(1)
        else:
            named = rest.split()[0].rsplit("/", 1)[-1] if rest.strip() and "KILLED_WORD" in parts else None
        self._add(self.log.outcomes, ProcessOutcome.model_construct(
            line=number, kind=kind, text=text.strip(), process=named, signal={"killed": 9, "segfault": 11}.get(kind, 6)))
        self.last_error = number
        return True

    def _api_calls(self, number: int, text: str) -> bool:
        if "API:" not in text or not (tree := parse("messages", text, "api_call")):
            return False
        _, parts = flatten(tree)
        api, phase = parts["API"], parts["API_PHASE"]
        self._add(self.log.api_calls, ApiCall.model_construct(line=number, api=api, phase=phase))
        if phase == "IN":
            self.open_apis[api] = number
        else:
            self.open_apis.pop(api, None)
        return True

    def _compile_progress(self, number: int, text: str) -> None:
        """Where a compile opens and closes, for telling a hang inside it from a log that stopped after it."""
        if COMPILE_END.search(text):
            self.open_compile = None
        elif _COMPILE_START.search(text):
            self.open_compile = number

    def _settings(self, number: int, text: str) -> bool:
        env = self.log.environment
        found = False
        rest = text
        while "=" in rest and (tree := parse("messages", rest, "env_setting")):
            _, parts = flatten(tree)
            self._set_env(number, parts["ENV_NAME"], parts["ENV_VALUE"].strip("\"'"))
            rest = parts.get("TEXT", "")
            found = True
        if "xlarge" in text and (tree := parse("messages", text, "instance_type")):
            instance = flatten(tree)[1]["INSTANCE"]
            env.instance_type = env.instance_type or instance
            env.lines.setdefault("instance_type", number)
            if env.target is None and (match := _INSTANCE_TARGET.match(instance)):
                env.target = match.group(1)
            found = True
        return found

    def _versions(self, number: int, text: str) -> bool:
        """Package versions named in prose or paths; a listing line seen earlier keeps precedence."""
        found = False
        rest = text if _VERSION_HINT.search(text) else ""
        while rest and (tree := parse("messages", rest, "package_version")):
            _, parts = flatten(tree)
            name = parts["PKG_NAME"].replace(" ", "-") if "PKG_NAME" in parts else "neuronx-cc"  # else a cache folder
            self._package(number, name, parts["VERSION"])
            rest = parts.get("TEXT", "")
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
        tree = parse("environment", body)
        if tree is None:
            return False
        shape, parts = flatten(tree)
        if shape in ("apt_line", "pip_line", "freeze_line"):
            self._package(number, parts["PACKAGE"], parts["VERSION"])
        elif shape == "cc_version":
            self._package(number, "neuronx-cc", parts["VERSION"])
        elif shape == "env_assign":
            self._set_env(number, parts["ENV_NAME"], parts.get("ENV_VALUE", "").strip().strip("\"'"))
        elif shape == "setenv_call":
            self._set_env(number, parts["SETENV_NAME"][1:-1], parts["SETENV_VALUE"][1:-1])
        return True

    def _package(self, number: int, name: str, version: str) -> None:
        env = self.log.environment
        key = package_key(name)
        env.packages.setdefault(key, version)
        env.lines.setdefault(f"pkg:{key}", number)

def legacy_status(name: str | None, text: str) -> str | None:
    """The NRT status a pre-2.x daemon name (`NERR_RESOURCE`) stands for: the same suffix, else its number."""
    if not name:
        return None
    modern = "NRT_" + name.removeprefix("NERR_")
    if status_number(modern) is not None:
        return modern
    number = _LEGACY_NUMBER.search(text[text.find(name) + len(name):])
    return status_name(int(number.group(1))) if number else name

def shlex_split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()
