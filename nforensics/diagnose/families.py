"""The family tier: failures recognised by structure (records) when no specific signature of theirs matched.

Each family file (knowledge/families/*.toml) lists detect rules over records: the component letters of a
printed code, NRT statuses, runtime record heads, stack frames placed by module path, the exception that
ended a traceback, how the process ended, multi-line shapes, and (last) co-occurring concept words.
FamilyFacts gathers what those selectors read, once per input; family_rules.py says when a rule holds.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from copy import copy
from functools import cache, cached_property

from nforensics.diagnose.family_words import neuron_context, present, rule_words, whole_words
from nforensics.diagnose.stages import aborted_stage, place_frame
from nforensics.knowledge import compiled, table
from nforensics.knowledge.family_schema import Detect
from nforensics.knowledge.vocabulary import named
from nforensics.linear_regex import Pattern, SearchSet, compile_linear
from nforensics.masking import mask, mask_ids
from nforensics.parse.gates import is_levelled_chatter
from nforensics.parse.grammars import terminal_regex
from nforensics.parse.kubectl import not_ready
from nforensics.parse.normalise import unwrap
from nforensics.records import ERROR_LEVELS, ExitStatus, Frame, ParsedLog, PythonTraceback, SourceLine
from nforensics.vocabulary import code_parts, reads_as_failure


INFORMATION_LEVELS = frozenset({"INFO", "DEBUG", "TRACE"})
DEEPEST_FRAMES = 3  # of a Python traceback, the frames that say where it failed
CONTINUED_MESSAGE_LINES = 4  # indented lines under an exception read as its message going on
_KILL_EXITS = {-9: "killed", 137: "killed", -11: "segfault", 139: "segfault", -6: "abort", 134: "abort"}
# The runtime's error names the graph operation it ran (torch-neuronx: "NRT Execution error occurred on Neuron
# for operation=nki_kernel_global"): the graph's name for it, no word of what failed.
_OPERATION = compile_linear(r"\boperation=\S+")
# A stage's exit status that says a signal of its own failing ended it, as a shell (128+N) or Python (-N) reports
# it. (A SIGKILL, 137 / -9, is a kill from outside: host memory.)
_SIGNAL_EXITS = frozenset(code for sig in (signal.SIGILL, signal.SIGTRAP, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE,
                                           signal.SIGSEGV) for code in (128 + sig, -sig))
# ... of a command that is one of the compiler's stages (`.../neuroncc/starfish/bin/list_sch`), not any command.
_COMPILER_STAGE = compile_linear(r"(?i)neuronx?cc/|starfish/bin/|walrus_driver|\bneuronx?-cc\b")
# A line that says the compiler itself ended: its name, or its driver's own words ("Subcommand returned with
# exitcode=2"). (Another command's status 2 -- make, grep, a script -- read as an exit status is not the compiler's.)
_COMPILER_EXIT = compile_linear(r"(?i)neuronx?-cc|subcommand returned with exitcode")
_DEVICE = compile_linear(r"\b[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]\b|\bnd\d+\b")  # a PCI address, `nd1`
_MISSING_MODULE = compile_linear(r"No module named '([\w.]+)'")
# Hugging Face's lazy modules re-raise an import failure as "Failed to import optimum.neuron.modeling because of
# the following error ...: No module named 'optimum.exporters.neuron'": the importer is named in the message.
_LAZY_IMPORTER = compile_linear(r"Failed to import ([\w.]+) because")
_ASSERTION = compile_linear(r"(?i)assert(?:ion)?\b.*\bfail|NeuronAssert|internal assertion|Assertion '.+' failed|"
                        r"an exception was thrown|Transformation error on operator")
# An assertion in a framework's own C++ source (PyTorch's `INTERNAL ASSERT FAILED at "../torch/csrc/jit/..."`)
# failed in the framework, before or beside the compiler.
_FRAMEWORK_ASSERTION = compile_linear(r"(?i)\bat \"?(?:\.\./)*(?:torch|c10|aten|caffe2|tensorflow|jaxlib)/|"
                                  r"report a bug to PyTorch")


class FamilyFacts:
    """What the detect selectors read, gathered from the records once per input (diagnose builds it once and
    asks it both whether the log is Neuron's at all and which families hold)."""

    def __init__(self, log: ParsedLog, retained: list[SourceLine]) -> None:
        self.log = log
        # Where a Python traceback ended is where it failed: its deepest frames, not the user's script that
        # called into a library. A native or TorchScript stack is all inside the process that crashed.
        # (Every frame of a traceback the compiler logged ran in the compiler, the libraries it calls included.)
        # Frames run outermost to innermost, as a Python traceback prints them: a native backtrace, a Go or Java
        # stack and a py-spy dump print the innermost first, so theirs are turned round.
        self.tracebacks = log.tracebacks
        self.frames: list[Frame] = (
            _deepest(log.tracebacks)
            + [f for s in log.stacks for f in (s.frames if s.syntax == "torchscript" else s.frames[::-1])])
        # A line reads as a failure by its words, or because its producer printed it at an error level
        # (glog `F ... Unknown flags in XLA_FLAGS` says nothing failed in so many words).
        error_level = log.error_lines()
        self.below_error = log.below_error_lines()
        # A traceback's source lines are code, not messages: `raise RuntimeError('Invalid device')` says
        # nothing about what this run printed.
        source = {f.line + 1 for t in log.tracebacks for f in t.frames if f.code and f.syntax == "python" and f.line}
        # Python's warnings (`x.py:102: UserWarning: Failed to import ...`) are a library coping and going on,
        # not what failed: a run that printed them and nothing else went on (a finished job pasted for its
        # warnings). (The source line a warning echoes under it is the warning's too.)
        advice = log.python_warning_lines()
        # The compiler's information lines are its progress, whatever their words: "INFO [job.HLOToTensorizer.0]:
        # Executing: hlo2penguin ... --verbose=error" names a verbosity, not an error. (torch-neuron's
        # `INFO:Neuron:PyTorch to TF conversion failed ...` is a failure: a framework's INFO may say one.)
        # (By the line's own head too: a notebook's stream holds every piece of output under one line number.)
        progress = log.with_repeats({e.line for e in log.events
                                     if e.producer == "compiler" and (e.level or "").upper() in INFORMATION_LEVELS})
        # Words are read in the producer's own text: a wrapper's prefix (vLLM's `ERROR 07-02 ... [core.py:586]`
        # on every line of a traceback it relays) is no word of the failure.
        # (UUIDs and hashes say no word: a work directory `.../b4d670f7-efa5-4206-...` is no EFA failure.)
        # (An exception's message is a failure's whatever its words, also where it went on below its class.)
        # (So is the failure test: a wrapper's level word is the line's level only where the producer gave none.)
        raised = {t.end_line for t in log.tracebacks if t.exception}
        own = [(line, unwrap(line.text.strip()).line) for line in retained]
        self.failure_lines = [(line.line, _OPERATION.sub("operation=<op>", mask_ids(body))) for line, body in own
                              if line.line not in source and line.line not in advice
                              and not (line.line in progress and is_levelled_chatter(line.text))
                              and (line.line in error_level or line.line in raised or reads_as_failure(body))]
        # A coded message that wrapped onto the lines below is one message, read whole (after its lines).
        self.wrapped_messages = [(d.line, d.end_line, mask_ids(f"[{d.code}] {d.message}"))
                                 for d in log.diagnostics if d.end_line > d.line]
        self.text_of = {line.line: line.text for line in retained}
        # So is an exception's message that Python printed on, indented, under its class ("... only supported
        # on CUDA, CPU or HPU devices.\n             Found input tensors on xla device.").
        self.wrapped_messages += [message for t in log.tracebacks if (message := self._continued(t)) is not None]
        # Lower-cased, for a substring test before any word's pattern is compiled (most groups are absent).
        self.failure_blob = "\n".join([text for _, text in self.failure_lines]
                                      + [text for _, _, text in self.wrapped_messages]).lower()
        # What the run involved, for context_words: every kept line, frame path and installed package.
        self.context = "\n".join([line.text for line in retained] + [f.file for f in self.frames]
                                 + list(log.environment.packages)).lower()
        # A compiler code it printed (NCC_ITEN404) says the run involved Neuron as plainly as its name.
        self.printed_neuron_code = any(d.code.startswith("NCC_") for d in log.diagnostics)
        self.outcomes: list[tuple[str, int, str | None, dict[str, object]]] = []
        # The signal a run was stopped with is a fact of its ending, also where the log ends inside an operation.
        stopped_by = next((o.signal for o in log.outcomes if o.kind == "interrupted" and o.signal), None)
        for outcome in log.outcomes:
            details: dict[str, object] = {"operation": outcome.operation} if outcome.operation else {}
            if outcome.process:
                details["killed_process"] = outcome.process
            if outcome.signal or stopped_by:
                details["signal"] = outcome.signal or stopped_by
            self.outcomes.append((outcome.kind, outcome.line, outcome.operation, details))
        for exit_status in log.exits:
            if exit_status.code in _KILL_EXITS:
                self.outcomes.append((_KILL_EXITS[exit_status.code], exit_status.line, None,
                                      {"killed_process": exit_status.tool, "exit_code": exit_status.code}))

    def _continued(self, traceback: PythonTraceback) -> tuple[int, int, str] | None:
        """The exception's message with the indented lines under it (not a frame), when it goes on."""
        if not (traceback.exception and traceback.message):
            return None
        following: list[str] = []
        number = traceback.end_line + 1
        while len(following) < CONTINUED_MESSAGE_LINES:
            body = unwrap(self.text_of.get(number, "")).line
            if not body[:1].isspace() or not body.strip() or body.lstrip().startswith("File "):
                break
            following.append(body.strip())
            number += 1
        if not following:
            return None
        return traceback.end_line, number - 1, mask_ids(" ".join([f"{traceback.exception}: {traceback.message}", *following]))

    # Each selector returns (lines, fields) when it holds, None when it does not.

    @property
    def ran_elsewhere(self) -> bool:
        """A run on another accelerator with nothing of Neuron in what was kept: no family or public Neuron
        report is named for it (a signature's printed code or status still is)."""
        return bool(_accelerator("other").matching(self.context)) and not _accelerator("neuron").matching(self.context)

    def code_components(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        wanted = {c.upper() for c in rule.code_components}
        for diagnostic in self.log.diagnostics:
            parts = code_parts(diagnostic.code)
            if parts and (parts[1] in wanted or "*" in wanted) and (not rule.code_classes or parts[0] in rule.code_classes):
                return [diagnostic.line], {"code": diagnostic.code, "code_component": parts[1]}
        return None

    def nrt_statuses(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        lines = [s.line for s in self.log.nrt_statuses if s.name in rule.nrt_statuses]
        return (lines, {}) if lines else None

    def runtime_heads(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        return self._heads("runtime", rule.runtime_heads)

    def compiler_heads(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        return self._heads("compiler", rule.compiler_heads)

    def _heads(self, producer: str, heads: list[str]) -> tuple[list[int], dict[str, object]] | None:
        """Error records of `producer` whose component (`NRT:nrt_load`, the compiler's `[Tensorizer]`) matches.
        The inf1 daemon printed no level: its line counts when its message reads as a failure."""
        patterns = [compiled(p) for p in heads]
        lines = [e.line for e in self.log.events
                 if e.producer == producer and e.component and any(p.search(e.component) for p in patterns)
                 and ((e.level or "").upper() in ERROR_LEVELS or e.level is None and reads_as_failure(e.message))]
        return (lines, {}) if lines else None

    def frame_paths(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        patterns = [compiled(p) for p in rule.frame_paths]
        hits = [f for f in self.frames if any(p.search(f.file) for p in patterns)]
        if not hits:
            return None
        deepest = hits[-1]
        placed = place_frame(deepest)
        fields: dict[str, object] = {"crash_component": deepest.package_path}
        if placed:
            fields["stage"] = placed.stage
        return [f.line for f in hits if f.line], fields

    def stages(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        in_compiler = [(frame, stage) for frame in self.frames
                       if (stage := place_frame(frame)) and stage.component in ("compiler", "nki")]
        if not in_compiler:
            return self._record_stage(rule)
        if in_compiler[-1][1].stage not in rule.stages:
            return None
        frame, stage = in_compiler[-1]
        return [frame.line] if frame.line else [], {"stage": stage.stage, "crash_component": frame.package_path}

    def _record_stage(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        """Without a compiler frame, the stage whose abort record the compiler printed (stages.aborted_stage),
        but not in a run something killed: a stage's record there reports the kill."""
        aborted = None if any(kind == "killed" for kind, *_ in self.outcomes) else aborted_stage(self.log)
        return ([aborted[0]], {"stage": aborted[1].stage}) if aborted and aborted[1].stage in rule.stages else None

    def frame_code(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        patterns = [compiled(p) for p in rule.frame_code]
        hits = [f for f in self.frames if f.code and any(p.search(f.code) for p in patterns)]
        return ([f.line for f in hits if f.line], {"failed_call": hits[-1].code}) if hits else None

    def exceptions(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        patterns = [compiled(p) for p in rule.exceptions]
        for traceback in reversed(self.tracebacks):
            if _ended_in(traceback, patterns):
                return [traceback.end_line], {"exception": traceback.exception}
        return None

    def raised_in(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        patterns = [compiled(p) for p in rule.raised_in]
        for traceback in reversed(self.tracebacks):
            innermost = traceback.frames[-1] if traceback.frames and traceback.exception else None
            if innermost is not None and any(p.search(innermost.file) for p in patterns):
                return [innermost.line or traceback.end_line], {"raised_in": innermost.package_path}
        return None

    def outcomes_(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        for kind, line, operation, details in self.outcomes:
            if (kind in rule.outcomes and (not rule.operations or operation in rule.operations)
                    and (not rule.signals or details.get("signal") in rule.signals)):
                return [line], dict(details)
        return None

    def structures(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        lines: list[int] = []
        fields: dict[str, object] = {}
        for structure in rule.structures:
            banners = [i for i in self.log.ice if i.error_message or i.error_class or i.error_location or i.internal_details
                       or i.version_information]
            if structure == "ice_banner" and banners:  # a row of stars alone is decoration, not a banner
                ice = banners[0]
                lines.append(ice.line)
                if ice.error_class:
                    fields["error_class"] = ice.error_class
            elif structure == "bir_block" and self.log.bir:
                lines.append(self.log.bir[0].line)
                fields.setdefault("stage", "verifier")
            elif structure == "compiler_assertion" and self._compiler_was_there():
                # Not a Python `assert` statement quoted under a traceback frame: that is source code.
                lines += [n for n, text in self.failure_lines if _ASSERTION.search(self.text_of[n])
                          and not _FRAMEWORK_ASSERTION.search(self.text_of[n]) and n not in self._placed_elsewhere
                          and not text.lstrip().startswith("assert ")][:3]
            elif structure == "compiler_pass_trace" and self._compiler_was_there() and (
                    chains := [s for s in self.log.stacks if s.syntax == "root"]):
                lines.append(chains[0].line)
            elif structure == "kubernetes_not_ready" and (line := not_ready(sorted(self.text_of.items()))) is not None:
                lines.append(line)
            elif structure == "own_module_missing" and (line := self._own_module_missing()) is not None:
                lines.append(line)
            elif structure in ("usage_exit", "stage_died") and (end := self._compiler_exit(structure)) is not None:
                lines.append(end.line)
                fields["exit_code"] = end.code
            elif structure == "cache_replay":
                # Said of the cache, not a path that runs through it (`.../neuron-compile-cache/MODULE_...`, or an
                # S3 key `bucket/llama-compile-cache/...` that masking leaves, having no leading slash).
                lines += [n for n, text in self.failure_lines if "cache" in (prose := _outside_paths(mask(text.lower())))
                          and "fail" in prose and ("neff" in prose or "compil" in prose)][:3]
        return (lines, fields) if lines else None

    def _compiler_exit(self, structure: str) -> ExitStatus | None:
        """The first exit the shape names: the compiler's with its parser's usage status (2), on a line naming the
        compiler; or a stage's a signal ended, on an error-level line naming the stage's command."""
        for end in self.log.exits:
            text = self.text_of.get(end.line, "")
            if structure == "usage_exit" and end.code == 2 and _COMPILER_EXIT.search(text):
                return end
            if (structure == "stage_died" and end.tool == "compiler stage" and end.code in _SIGNAL_EXITS
                    and end.line not in self.below_error and _COMPILER_STAGE.search(text)):
                return end
        return None

    def overcome(self, groups: list[list[str]], lines: list[int]) -> bool:
        """After the last of `lines`, the same process printed lines holding a member of every word group (a
        family's `overcome`), naming every device the failure named, and nothing failed after them: the log
        ends with the component up. (Another process or device coming up, or one that fails again, overcame
        nothing.)"""
        patterns = [rule_words(tuple(group)) for group in groups]
        last = max(lines)
        said = [n for n, text in sorted(self.text_of.items()) if n > last and all(p.search(text) for p in patterns)]
        if not said or any(n > said[-1] for n, _ in self.failure_lines):
            return False
        if None not in (process := (self._process(last), self._process(said[-1]))) and process[0] != process[1]:
            return False
        failed_on = {d for n in lines for d in _DEVICE.findall(self.text_of.get(n, ""))}
        came_up = {d for n in said for d in _DEVICE.findall(self.text_of[n])}
        return not failed_on - came_up

    def _process(self, line: int) -> int | None:
        """The process that printed a kept line: its record's pid, else its syslog tag's (`nrtd[32446]: `, as
        grammars/prefixes.lark spells the tag)."""
        pid = next((e.pid for e in self.log.events if e.line == line and e.pid is not None), None)
        tagged = _syslog_tag().search(self.text_of.get(line, "")) if pid is None else None
        return int(tagged.group().rsplit("[", 1)[1].split("]", 1)[0]) if tagged else pid

    def keeping(self, wanted: Callable[[int], bool]) -> FamilyFacts:
        """The same facts with only the failure lines (and wrapped coded messages, by their first line) `wanted`."""
        narrowed = copy(self)
        narrowed.failure_lines = [(n, text) for n, text in self.failure_lines if wanted(n)]
        narrowed.wrapped_messages = [m for m in self.wrapped_messages if wanted(m[0])]
        return narrowed

    def raising(self, rule: Detect) -> FamilyFacts:
        """The same facts with only the tracebacks that ended in one of the rule's exceptions, and their frames:
        a rule naming an exception and where it passed (`KeyError` through `vllm/`) means one traceback, not a
        KeyError in one place and a vLLM frame in another."""
        patterns = [compiled(p) for p in rule.exceptions]
        narrowed = copy(self)
        narrowed.tracebacks = [t for t in self.tracebacks if _ended_in(t, patterns)]
        # A JVM prints an exception's frames under it, innermost first: its stack record starts on the next line.
        ends = {t.end_line + 1 for t in narrowed.tracebacks if not t.frames}
        narrowed.frames = _deepest(narrowed.tracebacks) + [f for s in self.log.stacks if s.line in ends for f in s.frames[::-1]]
        return narrowed

    @cached_property
    def _placed_elsewhere(self) -> set[int]:
        """Lines of frames (C's assert() line is one) whose file knowledge/stages.toml places outside the
        compiler: an assertion there failed in the runtime or a library, wherever the compiler ran before."""
        return {f.line for f in self.frames if f.line and (stage := place_frame(f)) and stage.component != "compiler"}

    def _compiler_was_there(self) -> bool:
        """The log shows a Neuron compiler at work: its records, a code it prints, or its words (a serving
        engine's config validation saying "Assertion failed" is no compiler's)."""
        return (any(e.producer == "compiler" for e in self.log.events) or bool(self.log.ice or self.log.bir)
                or self.printed_neuron_code or whole_words(tuple(named("compiler_context"))).search(self.context) is not None)

    def _own_module_missing(self) -> int | None:
        """A package whose own code imports a module of its own name that is not there (`No module named
        'optimum.commands.env'` raised in optimum/commands/__init__.py): parts of two releases of it are
        installed, or a source checkout shadows the installed package."""
        for traceback in self.log.tracebacks:
            message = traceback.message or ""
            lazy = _LAZY_IMPORTER.search(message)
            missing = _MISSING_MODULE.search(message) if traceback.exception == "ModuleNotFoundError" or lazy else None
            importer = (lazy.group(1).replace(".", "/") if lazy else
                        traceback.frames[-1].package_path if traceback.frames else "")
            if missing and "." in missing.group(1) and importer.startswith(missing.group(1).split(".")[0] + "/"):
                return traceback.end_line
        return None

    def words(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        if not present(rule.words, self.failure_blob):
            return None
        groups = [rule_words(tuple(group)) for group in rule.words]
        for number, text in self.failure_lines:
            if all(group.search(text) for group in groups):
                return [number], {}
        for first, last, text in self.wrapped_messages:
            if all(group.search(text) for group in groups):
                return list(range(first, last + 1)), {}
        return None

    def context_words(self, rule: Detect) -> tuple[list[int], dict[str, object]] | None:
        held = present(rule.context_words, self.context) and all(
            whole_words(tuple(group)).search(self.context) for group in rule.context_words) or (
            self.printed_neuron_code and all(neuron_context() <= set(group) for group in rule.context_words))
        return ([], {}) if held else None


@cache
def _syslog_tag() -> Pattern:
    return compile_linear(terminal_regex("prefixes", "SYSLOG_TAG"))


@cache
def _accelerator(which: str) -> SearchSet:
    """knowledge/accelerators.toml's patterns for runs on another accelerator ("other") or on Neuron
    ("neuron"), searched in the lower-cased input."""
    return SearchSet(table("accelerators")[which]["patterns"])


def _ended_in(traceback: PythonTraceback, patterns: list[Pattern]) -> bool:
    """The traceback ended in an exception of one of these classes; a class printed with its module
    (`pydantic_core._pydantic_core.ValidationError`) is that class."""
    names = (traceback.exception, traceback.exception.rsplit(".", 1)[-1]) if traceback.exception else ()
    return any(p.search(name) for p in patterns for name in names)


def _deepest(tracebacks: list[PythonTraceback]) -> list[Frame]:
    """Where each traceback ended is where it failed: its deepest frames (all of one the compiler logged)."""
    return [f for t in tracebacks for f in t.frames[-DEEPEST_FRAMES if t.printed_by is None else 0:]]


def _outside_paths(text: str) -> str:
    """The words of a line without its path-like tokens (any with a slash)."""
    return " ".join(token for token in text.split() if "/" not in token)
