"""Turn numbered lines into records: one streaming pass, bounded memory.

Each physical line is split where several runtime records run together, stripped of outer wrappers
(Ray, Python logging, CloudWatch, ...) and classified by the producer grammars. Multi-line constructs
(a coded message over several lines, the ICE banner, a BIR verifier block, a traceback, the NRT
"cut here" block) are assembled by small open-block states. Lines that cannot matter are only counted.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections import deque
from collections.abc import Iterable

from forensics.linear_regex import compile_linear
from forensics.packages import package_key
from forensics.parse.grammars import flatten, parse
from forensics.records import (
    ERROR_LEVELS,
    BirVerification,
    CompilerInvocation,
    Diagnostic,
    Environment,
    ExitStatus,
    ApiCall,
    Frame,
    IceReport,
    LogEvent,
    NrtStatus,
    ParsedLog,
    ProcessOutcome,
    PythonTraceback,
    SourceLine,
    StackTrace,
)
from forensics.parse.nrt_status import status_name, status_number
from forensics.vocabulary import reads_as_failure

MAX_RECORDS = 2000  # per record kind; a huge log of repeated errors keeps the first ones
MAX_RETAINED = 20000  # lines kept for evidence and pattern matching
MAX_SKELETONS = 50000  # bound on remembered uneventful line shapes
RECENT_CANDIDATES = 2000  # plain candidate lines kept from the end of the input (failures come last)
CONTEXT_LINES = 3  # plain lines kept after a line that carried a record, for wrapped runtime details
CONTINUATION_LINES = 16  # a coded message spans at most this many physical lines
# The word gate below only pays on big logs: the first lines of any input are all parsed, so a pasted log's
# failure line is never lost for lacking a gate word.
UNGATED_LINES = 20000
HANG_TAIL = 5  # an operation left open this close to the end of the log, with no error after it, is a hang

# Performance gate, not a shape: a line with none of these words cannot be part of a failure, an
# environment listing or a traceback, so it is counted and skipped without running any parser. Plain
# substring tests run at C speed; one alternation regex over every line costs ~40 us a line.
_CANDIDATE_WORDS = (
    "ERR", "FATAL", "CRITICAL", "WARN", "USER", "NCC_", "Traceback", "File ", "rror", "xception", "XCEPTION",
    "ail", "err:", "status", "euron", "torch", "transformers", "nki", "jax", "XLA_", "****", "===", "Reason:",
    "Instruction:", "Opcode:", "--", "Killed", "ssert", "what()", "loc(", "ersion", "cut here", "cut to here",
    "Signals", "exitcode", "nsupported", "not supported", "Could not", "imeout", "out-of-bound", "xlarge",
    "CCOM", "TDRV", "NRT", "Access Pattern", "Offset:", "Memory Location", "Argument AP", "index:", "abnormally",
    "terminated", "ot initialized", "DEVICE", "Cluster ID", "Instance ID", "Nodename", "Kernel:", "* ", "SG-",
    "LoadActFuncSet", "tensorcopy", "core barrier", "LocalSendRecv", "os.environ", "export ", "compiler_args",
    "bfloat16", "float32", "shape", "NEURON", "EFA", "FI_", "ENC:", "nd0", "nd1", "skipped",
)
_CANDIDATE_SHAPES = re.compile(r"\[[A-Z]{3}\d{3}\]|\[F1\d\d\]")


def _is_candidate(segment: str) -> bool:
    return any(word in segment for word in _CANDIDATE_WORDS) or _CANDIDATE_SHAPES.search(segment) is not None


# Several NRT records on one physical line (multi-process output): split before each timestamp, or before
# a `pid:tid LEVEL MODULE:` record head when the processes wrote no timestamp.
_NRT_RECORD_START = re.compile(
    r"(?<=\S)(?=\d{4}-[A-Z][a-z]{2}-\d\d \d\d:\d\d:\d\d\.\d{4,6}\s)"
    r"|(?<=[^\d\s.:])\s*(?=\d{2,7}:\d{2,7} +(?:ERROR|WARN(?:ING)?|INFO|DEBUG|TRACE|FATAL) +[A-Z][A-Z0-9_]*:)"
)
# The inf1 neuron-rtd daemon's `[NMGR:kmgr_create_eg] ...` / `[hal] ...` head (grammars/runtime.lark daemon_line).
_DAEMON_HEAD = re.compile(r"\[(?:[A-Z][A-Z0-9_]{2,}:[^\]\s]+|[a-z]{3,5})\] ")
# IPython's numbered source context under a frame; the arrow marks the line that failed.
_IPYTHON_CONTEXT = compile_linear(r"^\s*(-+>)?\s*\d+\s(.*)$")
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_JSON_MEMBER = re.compile(r'^"((?:[^"\\]|\\.)*)"\s*:\s*("(?:[^"\\]|\\.)*")\s*,?$')
_JSON_NOT_LOG = frozenset({"ename", "evalue", "output_type", "name"})
# A traceback folded onto one line: where each frame starts, where its function name ends and its source
# line begins, and where the final `SomeError: message` starts.
# (`(?<!\s)`: a run of spaces is tried from its start only, so a long run costs its length, not its square.)
_FOLDED_FRAME = re.compile(r"(?<!\s)\s+(?=File \")")
_FOLDED_FUNCTION = re.compile(r"^(File \"[^\"]+\", line \d+, in \S+)\s+(.+)$")
_FOLDED_EXCEPTION = re.compile(r"(?<!\s)\s+(?=(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): )")
# A line a GitHub paste set in bold (`**...**`): the markers are the reporter's, not the producer's.
_MARKDOWN_BOLD = re.compile(r"^\*\*(?=[^*\s])(.*[^*\s])\*\*\s*$")
# Progress characters a tool printed without a newline, glued in front of the next record.
_GLUED_PROGRESS = re.compile(r"^\.{2,}\s*(?=\S)")
_ARGV_LIST = re.compile(r"\[\s*'(?:neuronx-cc|neuron-cc)'[^\]]*\]")
_COMMAND_TEXT = re.compile(r"(?:^|\s)((?:\S*/)?neuronx?-cc\s+compile\s.+)$")
_COMPILER_ARGS = re.compile(r"compiler_args\s*=\s*(\[[^\]]*\]|\"[^\"]*\"|'[^']*')")
_TARGET_FLAG = re.compile(r"--target[= ](\w+)")
_VERSION_HINT = re.compile(r"neuronxcc-\d|neuronx?-cc|torch[-_]neuronx|libneuronxla|nki|NKI|Neuron SDK|aws-neuronx-")  # gate
_INSTANCE_TARGET = re.compile(r"^(trn\d|inf\d)")


def _clean(message: str | None) -> str:
    return (message or "").strip()


class _Assembler:
    def __init__(self, source: str) -> None:
        self.log = ParsedLog.model_construct(source=source, environment=Environment.model_construct())
        self.retained: list[SourceLine] = []  # lines that carried a record or read like a failure
        self.recent: deque[tuple[int, str]] = deque(maxlen=RECENT_CANDIDATES)  # the latest other candidates
        self.open_diagnostic: Diagnostic | None = None
        self.open_ice: IceReport | None = None
        self.ice_field: str | None = None
        self.open_bir: BirVerification | None = None
        self.open_traceback: PythonTraceback | None = None
        self.in_cut_here = False
        self.open_stack: StackTrace | None = None  # native or TorchScript frames being collected
        self.frame_awaiting_code: Frame | None = None  # a Python frame whose source line may come next
        self.named_by_header: PythonTraceback | None = None  # an IPython traceback its header named
        self.open_apis: dict[str, int] = {}  # NRT API trace: api -> line of its API:IN without API:OUT yet
        self.open_compile: int | None = None  # line of a compile start with no end seen yet
        self.last_error = 0  # line of the last record that reported an error
        self.last_text = 0  # line of the last non-blank line
        self.uneventful: set[str] = set()  # line shapes (digits removed) that yielded no record
        self.last_line = 0
        self.context_left = 0  # plain lines still kept after the last line that carried something

    # ------------------------------------------------------------------ bookkeeping

    def _add(self, kind: list, record: object) -> None:
        if len(kind) < MAX_RECORDS:
            kind.append(record)
        else:
            self.log.truncated = True

    def _retain(self, number: int, raw: str) -> None:
        if self.retained and self.retained[-1].line == number:
            return
        if len(self.retained) < MAX_RETAINED:
            self.retained.append(SourceLine.model_construct(line=number, text=raw))
        else:
            self.log.truncated = True

    def _close_blocks(self) -> None:
        self.open_diagnostic = None
        self.open_ice = None
        self.ice_field = None
        self.open_bir = None
        self.open_traceback = None

    # ------------------------------------------------------------------ per line

    def feed(self, number: int, raw: str) -> None:
        self.last_line = number
        pieces = _unescaped(raw)
        if len(pieces) == 1 and raw.count(' File "') > 1:
            pieces = _unfold_traceback(raw)
        # A line that decoded to one line of text is kept as that text; one that held several keeps its
        # physical text, so that every line number still names one line.
        shown = pieces[0] if len(pieces) == 1 else raw
        for piece in pieces:
            segments = _NRT_RECORD_START.split(piece) if piece.count(":") > 6 else [piece]
            for segment in segments:
                if segment.startswith(".."):
                    segment = _GLUED_PROGRESS.sub("", segment)
                self._feed_segment(number, shown, segment)

    def _feed_segment(self, number: int, raw: str, segment: str) -> None:
        if not segment.strip():
            self.open_diagnostic = None
            self.ice_field = None if self.ice_field != "Error message" else self.ice_field
            return
        self.last_text = number
        # A Go frame's function call sits on the line between two path lines.
        if self.open_stack is not None and number > self.open_stack.end_line + (2 if self.open_stack.syntax == "go" else 1):
            self.open_stack = None
        block_open = self.open_diagnostic or self.open_ice or self.open_bir or self.open_traceback or self.in_cut_here
        gated = number > UNGATED_LINES
        if not block_open and (_is_quiet(segment) or gated and not _is_candidate(segment)):
            if self.context_left:
                # Detail lines right under an error (`Exception PC: 0x...`) carry no failure word of their own.
                self.context_left -= 1
                self._remember_recent(number, raw)
            return
        skeleton = _DIGITS.sub("", segment) if not block_open else None
        if skeleton is not None and skeleton in self.uneventful:
            # The same shape as an earlier line that yielded no record (a flood of one warning): keep the
            # line for patterns, skip the parsers.
            self._remember_recent(number, raw)
            return
        before = self._record_count()
        body = _strip_prefixes(segment.lstrip() if segment[:1].isspace() and segment.lstrip()[:1].isdigit() else segment)
        if body.startswith("**") and (bold := _MARKDOWN_BOLD.match(body)):
            body = bold.group(1)
        if self.frame_awaiting_code is not None:
            self._frame_code(body)
        if self._classify(number, body):
            self._retain(number, raw)
            self.context_left = CONTEXT_LINES
        elif block_open and self._continue_block(number, body):
            self._retain(number, raw)
        else:
            self._remember_recent(number, raw)
        if skeleton is not None and self._record_count() == before and len(self.uneventful) < MAX_SKELETONS:
            self.uneventful.add(skeleton)

    def _remember_recent(self, number: int, raw: str) -> None:
        if not self.recent or self.recent[-1][0] != number:
            self.recent.append((number, raw))

    def _record_count(self) -> int:
        log = self.log
        return (len(log.diagnostics) + len(log.nrt_statuses) + len(log.exits) + len(log.invocations) + len(log.ice)
                + len(log.bir) + len(log.tracebacks) + len(log.environment.lines) + self.in_cut_here
                + len(log.stacks) + len(log.outcomes) + len(log.api_calls)
                + bool(self.open_diagnostic or self.open_ice or self.open_bir or self.open_traceback))

    def _classify(self, number: int, body: str) -> bool:
        """Recognise the line's producer; True when the line carried something worth keeping."""
        if body[:1].isdigit() or body.startswith("NRT:") or _DAEMON_HEAD.match(body):
            for grammar in _timestamped_grammars(body):
                tree = parse(grammar, body)
                if tree is not None:
                    return self._producer_line(number, grammar, *flatten(tree))
        tree = parse("traceback", body.strip()) if _maybe_traceback(body) else None
        if tree is not None:
            return self._traceback_line(number, *flatten(tree))
        start = body.lstrip()
        if start.startswith(_COMPILER_BLOCK_STARTS) and (tree := parse("compiler", body)) is not None:
            return self._producer_line(number, "compiler", *flatten(tree))
        if _maybe_untimed_framework(body) and (tree := parse("framework", body)) is not None:
            return self._producer_line(number, "framework", *flatten(tree))
        if start.startswith(_ENVIRONMENT_STARTS) and self._environment_line(number, body):
            return True
        return self._message(number, body, producer=None, level=None, component=None)

    def _producer_line(self, number: int, grammar: str, shape: str, parts: dict[str, str]) -> bool:
        message = parts.get("MESSAGE", "")
        if shape in ("driver_line", "legacy_line", "timing_line"):
            text = message[1:] if message.startswith(" ") else message
            # The driver prefixes every line of a banner, block or crash traceback: read the message as a
            # line of its own.
            if _maybe_traceback(text) and (frame := parse("traceback", text.strip())) is not None:
                return self._traceback_line(number, *flatten(frame))
            inner = flatten(tree) if text and (tree := parse("compiler", text)) is not None else None
            if inner is not None and inner[0] not in ("driver_line", "legacy_line", "timing_line"):
                self._compiler_block_line(number, *inner)
                return True
            if self.open_ice and shape != "timing_line":
                if self._continue_block(number, text):
                    return True
            level = parts.get("LEVEL")
            self._event(number, "compiler", level, parts.get("COMPONENT"), parts.get("PID"), text, parts)
            return self._message(number, text, producer="compiler", level=level, component=parts.get("COMPONENT"))
        if shape in ("ice_border", "ice_title", "ice_field", "bir_header", "bir_field", "bir_instruction", "sg_error"):
            self._compiler_block_line(number, shape, parts)
            return True
        if shape in ("nrt_line", "syslog_line", "bare_line", "daemon_line", "ccom_line"):
            component = (f"{parts['MODULE']}:{parts['FUNCTION']}" if "MODULE" in parts
                         else parts.get("DAEMON_HEAD", "CCOM"))
            self._event(number, "runtime", parts.get("LEVEL"), component, parts.get("PID"), _clean(message), parts)
            if self.in_cut_here:
                self._cut_here_field(number, _clean(message))
            if message.lstrip().startswith("API:") and "FUNCTION" in parts:  # the API trace names its API in the head
                return self._api_calls(number, f"{parts['FUNCTION']} {message.strip()}")
            return self._message(number, _clean(message), producer="runtime", level=parts.get("LEVEL"), component=component)
        if shape in ("cut_here", "cut_to_here"):
            self.in_cut_here = shape == "cut_here"
            return True
        if shape in ("wrapper_line", "nxdi_line", "glog_line", "logrus_line"):
            component = parts.get("WRAPPER", "").strip("|") or parts.get("GLOG_SOURCE") or ""
            level = parts.get("LEVEL") or parts.get("GLOG_LEVEL") or parts.get("LOGRUS_LEVEL", "")[:4] or None
            self._event(number, "framework", level, component or None, parts.get("PID"), _clean(message), parts)
            return self._message(number, _clean(message), producer="framework", level=level, component=component or None)
        return False

    def _event(self, number: int, producer: str, level: str | None, component: str | None, pid: str | None,
               message: str, parts: dict[str, str]) -> None:
        timestamp = parts.get("ISO_TS") or parts.get("US_TS") or parts.get("NRT_TS") or parts.get("TS")
        if (level or "").upper() in ERROR_LEVELS:
            self.last_error = number
        self._add(self.log.events, LogEvent.model_construct(
            producer=producer, line=number, level=level, component=component,
            pid=int(pid) if pid and pid.isdigit() else None, message=message, timestamp=timestamp))

    # ------------------------------------------------------------------ messages and shapes inside them

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
                message=_clean(parts.get("TEXT")), op=(parts.get("OP") or "").strip("()") or None,
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
        if _COMPILE_END.search(text):
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

    # ------------------------------------------------------------------ compiler blocks

    def _compiler_block_line(self, number: int, shape: str, parts: dict[str, str]) -> None:
        value = _clean(parts.get("MESSAGE"))
        if shape == "ice_border":
            if self.open_ice is None:
                self._open_ice(number)
            else:
                self.open_ice.end_line = number
        elif shape == "ice_title":
            if self.open_ice is None:
                self._open_ice(number)
        elif shape == "ice_field" and self.open_ice is not None:
            key = parts["ICE_KEY"]
            self.ice_field = key
            self.open_ice.end_line = number
            self._ice_value(key, value, number)
        elif shape == "bir_header":
            self._close_blocks()
            self.open_bir = BirVerification.model_construct(line=number, end_line=number)
            self._add(self.log.bir, self.open_bir)
        elif shape == "bir_field" and self.open_bir is not None:
            key = parts["BIR_KEY"]
            self.open_bir.end_line = number
            self.open_bir.fields[key] = value
            attribute = {"Reason": "reason", "Instruction": "instruction", "Opcode": "opcode"}.get(key)
            if attribute:
                setattr(self.open_bir, attribute, value)
        elif shape == "bir_instruction":
            _, opcode, instruction = parts["INSTRUCTION_HEAD"].rstrip(":").split(" ")
            self._close_blocks()
            self._add(self.log.bir, BirVerification.model_construct(
                line=number, end_line=number, reason=value, instruction=instruction, opcode=opcode,
                fields={"Instruction": instruction, "Opcode": opcode, "Reason": value}))
        elif shape == "sg_error":
            self._add(self.log.events, LogEvent.model_construct(producer="compiler", line=number, level="ERROR",
                                                component="SG-ERROR", message=value))

    def _open_ice(self, number: int) -> None:
        self._close_blocks()
        self.open_ice = IceReport.model_construct(line=number, end_line=number)
        self._add(self.log.ice, self.open_ice)

    def _ice_value(self, key: str, value: str, number: int) -> None:
        ice = self.open_ice
        assert ice is not None
        if key == "Error message":
            ice.error_message = value or ice.error_message
        elif key == "Error class":
            ice.error_class = value
        elif key == "Error location":
            ice.error_location = value
        elif key == "Command line":
            ice.command_line = value
            if value:
                self._commands(number, value if "compile" in value else f"neuronx-cc compile {value}")
        elif key == "Internal details" and value:
            ice.internal_details.append(value)
        elif key == "Version information" and value:
            ice.version_information.append(value)

    def _continue_block(self, number: int, body: str) -> bool:
        text = body.strip()
        if self.open_ice is not None and self.ice_field:
            if text.startswith("Artifacts stored in") or _STARS.match(text):
                self.open_ice.end_line = number
                self.ice_field = None
                return True
            if self.ice_field in ("Internal details", "Version information"):
                ice = self.open_ice
                target = ice.internal_details if self.ice_field == "Internal details" else ice.version_information
                target.append(text)
                if self.ice_field == "Version information":
                    self._environment_line(number, text)
            elif self.ice_field == "Error message" and text:
                self.open_ice.error_message = f"{self.open_ice.error_message or ''} {text}".strip()
            self.open_ice.end_line = number
            return True
        if self.open_bir is not None:
            self.open_bir = None
            return False
        if self.in_cut_here:
            self._cut_here_field(number, text)
            return True
        if self.open_traceback is not None:
            # The source line under a frame; anything else ends the traceback.
            return bool(self.open_traceback.frames) and not text.startswith(("During handling", "The above"))
        return False

    def _cut_here_field(self, number: int, text: str) -> None:
        # The block's `Failure: NRT_X in api()` line is read by _statuses like any other message.
        key, _, value = text.partition(":")
        package = _INFODUMP_PACKAGES.get(key.strip())
        if package and value.strip():
            self._package(number, package, value.split()[0])

    # ------------------------------------------------------------------ tracebacks

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
        message = _clean(parts.get("MESSAGE"))
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

    # ------------------------------------------------------------------ environment listings

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

    def _hangs(self) -> None:
        """A log that ends inside an operation it opened, with no error after it, hung there (or was cut)."""
        near_end = self.last_text - HANG_TAIL
        opened = [(line, _api_operation(api)) for api, line in self.open_apis.items()]
        if self.open_compile is not None:
            opened.append((self.open_compile, "compile"))
        for line, operation in sorted(opened, reverse=True)[:1]:
            if line >= near_end and line > self.last_error:
                self._add(self.log.outcomes, ProcessOutcome.model_construct(
                    line=line, kind="hang", text=f"the log ends inside {operation}", operation=operation))

    def finish(self) -> tuple[ParsedLog, list[SourceLine]]:
        self._hangs()
        self.log.total_lines = self.last_line
        kept = {number: SourceLine.model_construct(line=number, text=raw) for number, raw in self.recent}
        kept.update((line.line, line) for line in self.retained)
        return self.log, [kept[number] for number in sorted(kept)]


# Where the compiler reads and writes, not how it compiles: not reported as compiler flags.
_IO_FLAGS = {"--output", "-o", "--logfile", "--logdir", "--workdir", "--log-file", "--pipeline"}
# The versions an NRT "cut here" block lists, and the packages they are versions of.
_INFODUMP_PACKAGES = {"NRT version": "aws-neuronx-runtime-lib", "Driver version": "aws-neuronx-dkms",
                      "Embedded FW version": "neuron-firmware", "CCOM version": "aws-neuronx-collectives"}
_KEEP_LEVELS = {"ERROR", "FATAL", "CRITICAL", "USER", "WARNING", "WARN", "E", "F", "W", "ERRO", "FATA"}
_STARS = re.compile(r"^\*{20,}$")
_LEGACY_NUMBER = re.compile(r"^'?\s*\((\d+)\)")
_PROCESS_NAME = compile_linear(r"\(([^)\s]+)\)")  # RE2: linear on `x(x(x(...`
_NATIVE_PATH = compile_linear(r"(/[^\s()\[\]]+|[\w.-]+\.so(?:\.\d+)*)")
_NATIVE_SYMBOL = re.compile(r"(?:0x[0-9a-fA-F]+\s+in\s+)?([^\s(]+)")
# A compile that starts and one that ends (either way): neuronx-cc, neuron-cc and the framework wrappers.
_COMPILE_START = re.compile(
    r"(?i)\b(?:compiling\b|compilation (?:started|in progress)|neuronx?-cc\s+compile\b|start(?:ing)? compil)")
_COMPILE_END = re.compile(r"(?i)compiler status|compil\w* (?:successful|succeeded|finished|complete|done|failed)|"
                          r"successfully compiled|compile(?:d)? (?:time|in)\b|fail|error|\bPASS\b")
_API_OPERATIONS = (("coll", "collectives"), ("load", "load"), ("init", "load"), ("exec", "execute"))
_DIGITS = re.compile(r"\d+")
_PREFIX_START = re.compile(r"^(?:\(|\[(?:rank|default)\d|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d{3}(?:\+|::)|"
                           r"[A-Z]+ \d\d-\d\d |[A-Z][a-z]{2} [ \d]\d |kernel: |-{20})")


# Levelled chatter (INFO/DEBUG/TRACE) is most of a big log; only these words make such a line matter.
_QUIET_LEVELS = (" INFO ", " DEBUG ", " TRACE ", "[INFO]", "[DEBUG]", " INFO\t")
_QUIET_BUT_KEEP = (
    "exitcode", "cmd:", "ompiler version", "ail", "rror", "status", "cut here", "cut to here", "infodump",
    "Total ", "uccessful", "Artifacts stored", "Diagnostic logs", "NEURON_", "XLA_", "--target", "ersion",
    "Instance ID", "Nodename", "lags", "ompil", "retr", "illed", "imeout", "exit", "API:",
)


def _is_quiet(segment: str) -> bool:
    head = segment[:72]
    return any(level in head for level in _QUIET_LEVELS) and not any(word in segment for word in _QUIET_BUT_KEEP)


# Dispatch, not shapes: the first words a line must start with for each grammar's untimestamped
# alternatives to apply (keep in step with grammars/*.lark), so plain lines skip every lark parser.
_COMPILER_BLOCK_STARTS = (
    "*", "An Internal Compiler Error", "Error message", "Error class", "Error location", "Command line",
    "Internal details", "Version information", "what()", "===", "Reason", "Instruction", "Opcode", "Input index",
    "Output index", "Argument AP", "Access Pattern", "Offset", "Memory Location", "SG-ERROR",
)
_ENVIRONMENT_STARTS = (
    "aws-neuron", "neuron", "libneuronxla", "torch", "jax", "transformers", "nki", "optimum", "vllm", "tensorflow",
    "NeuronX Compiler", "Neuron Compiler", "NEURON", "XLA_", "TORCH_NEURONX", "FI_", "PJRT", "export ", "ENV ",
    "os.environ[",
)


def _maybe_untimed_framework(body: str) -> bool:
    """glog `F hilo/x.cc:160] ...` or logrus `ERRO[0000] ...`."""
    return (body[1:2] == " " and body[:1] in "IWEF") or body[4:5] == "["


def _timestamped_grammars(body: str) -> tuple[str, ...]:
    """Which producers can own a line that starts with a digit, by where its timestamp puts its marks:
    NRT `2024-Jun-26 ...`, compiler `2024-08-15T14:51:41Z` / `06/16/2021 ...`, wrapper `2024-04-12 07:...`."""
    if body.startswith(("NRT:", "[")) or body[5:6].isalpha():
        return ("runtime",)
    if body[10:11] == "T" or body[2:3] == "/":
        return ("compiler",)
    if body[10:11] == " ":
        return ("framework",)
    return ("runtime", "compiler", "framework")


def _api_operation(api: str) -> str:
    return next((operation for word, operation in _API_OPERATIONS if word in api), "execute")


def legacy_status(name: str | None, text: str) -> str | None:
    """The NRT status a pre-2.x daemon name (`NERR_RESOURCE`) stands for: the same suffix, else its number."""
    if not name:
        return None
    modern = "NRT_" + name.removeprefix("NERR_")
    if status_number(modern) is not None:
        return modern
    number = _LEGACY_NUMBER.search(text[text.find(name) + len(name):])
    return status_name(int(number.group(1))) if number else name


def _maybe_traceback(body: str) -> bool:
    text = body.lstrip()
    return (text.startswith(("Traceback", "File ", "Cell In", "#")) or "Error" in text[:80] or "Exception" in text[:80]
            or "Traceback" in text or text[:1].isdigit() and "# " in text[:6] or ".py(" in text or ".go:" in text)


def _unescaped(raw: str) -> list[str]:
    """The log lines a physical line holds. A saved notebook or a log shipped as JSON holds them as JSON
    strings (one per line of a traceback list, or one string with `\\n` escapes); a colour terminal adds ANSI
    escapes. Anything that does not decode is kept as it was."""
    text = raw
    stripped = raw.strip()
    if stripped[:1] == '"' or stripped[:1] == "{" and stripped[-1:] == "}":
        decoded = _json_strings(stripped)
        if decoded is not None:
            text = decoded
    pieces = text.split("\\n") if "\\n" in text else text.split("\n")
    return [_ANSI_ESCAPE.sub("", piece) for piece in pieces] if "\x1b" in text else pieces


def _json_strings(text: str) -> str | None:
    """The log text inside a JSON line: a string literal (`"...",`), a `"key": "value"` member, or an object
    (a notebook output's `traceback` lines or stream `text`). A notebook's `ename` / `evalue` repeat the
    traceback's last line ahead of the log, so they read as blank. None when the line is not JSON."""
    member = _JSON_MEMBER.match(text)
    if member and member.group(1) in _JSON_NOT_LOG:
        return ""
    literal = member.group(2) if member else text.rstrip(",")
    try:
        value = json.loads(literal)
    except ValueError:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        log = [value[k] for k in ("traceback", "text") if k in value] or list(value.values())
        strings = [v for v in log if isinstance(v, str)]
        strings += [item for v in log if isinstance(v, list) for item in v if isinstance(item, str)]
        return "\n".join(strings) if strings else None
    return None


def _unfold_traceback(line: str) -> list[str]:
    """A traceback whose line breaks were lost on the way (a pasted web page, a log collector that joins a
    record's lines): one frame, its source line and the final exception per line again."""
    pieces = []
    for part in _FOLDED_FRAME.split(line):
        frame = _FOLDED_FUNCTION.match(part)
        if frame is None:
            pieces.append(part)
            continue
        code, *exception = _FOLDED_EXCEPTION.split(frame.group(2), maxsplit=1)
        pieces += [frame.group(1), "    " + code, *exception]
    return [p for p in pieces if p.strip()]


def _strip_prefixes(segment: str) -> str:
    if not _PREFIX_START.match(segment):
        return segment
    tree = parse("prefixes", segment)
    if tree is None:
        return segment
    rest = [t for t in tree.children if not hasattr(t, "data")]
    return str(rest[-1]) if rest else ""


def shlex_split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def assemble(source: str, lines: Iterable[tuple[int, str]]) -> tuple[ParsedLog, list[SourceLine]]:
    """Parse numbered lines into a ParsedLog plus the retained lines (for patterns and evidence)."""
    assembler = _Assembler(source)
    for number, raw in lines:
        assembler.feed(number, raw)
    return assembler.finish()
