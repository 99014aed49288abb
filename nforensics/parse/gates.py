"""The cheap tests that decide which parsers a line reaches: performance gates and dispatch, not shapes.

A big log is mostly chatter. Past its ungated head, a line that holds no candidate word cannot start anything
the parsers keep, so it is only counted; levelled chatter (INFO, DEBUG) is passed over from the first line
unless it holds what a reader takes from such a line; the first characters of a line pick the grammars that
can own it. All three are read off the parsers, not kept by hand: the necessary words (nforensics/parse/
literals.py) of every rule that makes a record of a line or opens a block, and of the readers' own patterns
(messages.LEVELLED_READS, kubectl's rows); the words the knowledge base's patterns need (its anchors, handed
in by the pipeline); and, where a rule's necessary words are ordinary words ("Iteration", "time", "found")
or a mark (a native frame's `#`), the pattern itself (_shapes). A rule that needs only a mark and has no
such pattern (the coded diagnostic's `[`) is a line shape, gated by what its line says (its code's shape).
One RE2 scan a line tests them all.

Checked on all 578 logs the project has (samples, corpora, held-out sets) with the gate on from the first line,
the findings are those of reading every line, and on the 206 sample logs also their evidence lines and ranked
hypotheses (tests/test_bulk_warnings.py). The 90 words kept by hand before lost five of the 578.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import NamedTuple

from nforensics.linear_regex import compile_linear
from nforensics.linear_regex.lines import LineFinder
from nforensics.linear_regex.necessary import Words, regex_words, union
from nforensics.parse.grammars import parser, terminal_regex
from nforensics.parse.kubectl import KUBECTL_PATTERNS
from nforensics.parse.normalise import HTML_ENTITY, SPLIT_COLONS, WORD_MAKERS
from nforensics.parse.literals import first_words, start_words
from nforensics.parse.messages import LEVELLED_READS
from nforensics.vocabulary import FAILURE_WORDS, PRINTED_CODE


class CatalogueAnchors(NamedTuple):
    """What the knowledge base's patterns need, as RE2 patterns (knowledge KnowledgeBase.anchors): a line must
    hold one of `lines` for a signature to read it, a warning one of `warnings` for one that claims warnings.
    None where some pattern needs no word: then no line (no warning) can be passed over for want of one."""

    lines: frozenset[str] | None
    warnings: frozenset[str] | None


# The rules that make a record of a line or open a block, by grammar (None: every start rule). The other
# start alternatives are a record's following lines (frames under a traceback's header, an ICE's fields),
# read while their block is open whatever their words; a native frame, which opens a stack, goes by its
# pattern (_shapes).
_RECORD_RULES: dict[str, tuple[str, ...] | None] = {
    "messages": None,  # codes, statuses, exits, outcomes, versions, settings, instance types, API calls
    # (An exception line goes by its name's own terminal, below: the rule's words, "Iteration", "Exit" and
    # "Warning", are ordinary words; `StopIteration` is not.)
    "traceback": ("header", "root_frame", "live_thread", "assert_frame", "ipython_legacy_frame", "pytest_frame"),
    "runtime": ("cut_here", "cut_to_here", "ccom_line", "syslog_line"),
}
_MARK = re.compile(r"[^A-Za-z0-9]*")  # no letter or digit: a mark, not a word


def _record_words(grammar: str, rules: tuple[str, ...] | None) -> list[Words]:
    """The necessary words of each of these rules (None: every start rule), but of none that needs only a mark."""
    found = []
    for rule in rules or parser(grammar).options.start:
        words = start_words(grammar, rule)
        if words is not None and not any(_MARK.fullmatch(word) for word in words.exact | words.folded):
            found.append(words)
    return found


@cache
def candidate_words() -> Words:
    """The words one of which a line needs to reach a parser past the ungated head (see the module's doc)."""
    found = [_kept_chatter_words(), *(regex_words(p.pattern) for p in KUBECTL_PATTERNS),
             *(words for grammar, rules in _RECORD_RULES.items() for words in _record_words(grammar, rules))]
    return union([words for words in found if words is not None])


def _patterns(words: Words) -> tuple[str, ...]:
    """Words as RE2 alternatives (the folded ones case-insensitive), with the patterns the words of some
    readers would be too loose for (_shapes)."""
    return (*words.patterns(), *_shapes())


@cache
def _shapes() -> tuple[str, ...]:
    """What some readers need, as their own patterns, where their necessary words would let ordinary chatter
    by: the vocabulary's failure words (its necessary words include "time", "found" and "support"), a
    printed code, an exception's name (traceback.lark's EXC_NAME: `StopIteration`, not "Iteration"), a
    native frame and the ICE border (their only words are marks: `#3 0x7f...`, `*****`), a JVM frame (its one
    word, "at", is everywhere; a Java stack follows its exception line, which closes every block), and the
    words compiler blocks and environment listings start with, where a word starts ("FI_" settings, not "FINISHED"). Where
    some block could start anywhere (first_words found no word), every line is let through."""
    starts = frozenset(compiler_block_starts() + environment_starts())
    anywhere = (r"[^\n]",) if "" in starts else ()
    return (*anywhere, FAILURE_WORDS.pattern, PRINTED_CODE.pattern, terminal_regex("traceback", "EXC_NAME"),
            rf"(?:{terminal_regex('traceback', 'NATIVE_INDEX')})[ \t]+\S",
            rf"\((?:{terminal_regex('traceback', 'JAVA_SOURCE')})\)",  # a JVM frame's place: `(PyProcess.java:195)`
            terminal_regex("compiler", "STARS").replace(r"\s*", ""),  # (a scan of many lines: no newline matched)
            *(rf"(?m:^|[^\w\n]){re.escape(word)}" for word in sorted(starts) if not _MARK.fullmatch(word)))


def _candidate_patterns() -> tuple[str, ...]:
    """The candidate words, a printed code, and a shell's prompt: the command that started a run says how it
    was run (its flags are what hypotheses look for)."""
    return (*_patterns(candidate_words()), re.escape(SHELL_PROMPT_MARK))


def _alternation(patterns: list[str] | tuple[str, ...]) -> str:
    """One RE2 alternation; each pattern in a group of its own, so that a flag it sets (`(?i)`) stays in it."""
    return "|".join(f"(?:{pattern})" for pattern in patterns)


@cache
def candidate_test(anchors: CatalogueAnchors | None = None) -> Callable[[str], bool]:
    """Whether a line may reach a parser or a signature's pattern past the ungated head: one RE2 scan of it
    for a candidate word, a printed code or one of the catalogue's anchors (about a microsecond a line)."""
    if anchors is not None and anchors.lines is None:
        return lambda segment: True
    caught = sorted(anchors.lines) if anchors is not None and anchors.lines is not None else []
    search = compile_linear(_alternation([*_candidate_patterns(), *caught])).search
    return lambda segment: search(segment) is not None


# Words that change what the assembler knows even on a line no gate lets through (nforensics/parse/assemble.py
# _progress): a shell prompt (a command started) and a polling loop's "waiting".
SHELL_PROMPT_MARK = "$ "
WAITING_WORD = "aiting"


@cache
def daemon_head() -> re.Pattern[str]:
    """The inf1 neuron-rtd daemon's `[NMGR:kmgr_create_eg] ...` / `[hal] ...` head, built from
    grammars/runtime.lark's own DAEMON_HEAD terminal so the dispatch cannot drift from the grammar."""
    return re.compile(rf"\[(?:{terminal_regex('runtime', 'DAEMON_HEAD')})\] ")

# Levelled chatter (INFO/DEBUG/TRACE) is most of a big log, and passed over from the first line on, unless it
# holds something a reader takes from a line of any level: a failure word or printed code, a record the
# messages grammar makes (an exit status, an NRT status, a version, a setting, an API call), a block's first
# words (an ICE, a cut-here dump, an environment listing), or what the compile and pip trackers and the
# compile-command reader look for (nforensics/parse/messages.py LEVELLED_READS). A runtime or compiler record
# line at INFO is chatter: its grammar's words alone keep nothing.
QUIET_HEAD = 72  # the characters of a line a level word must sit in for the line to be levelled chatter
_QUIET_LEVELS = (" INFO ", " DEBUG ", " TRACE ", "[INFO]", "[DEBUG]", " INFO\t")


@cache
def _kept_chatter_words() -> Words:
    found = [*(regex_words(p.pattern) for p in LEVELLED_READS),
             *_record_words("messages", None), *_record_words("runtime", ("cut_here", "cut_to_here"))]
    return union([words for words in found if words is not None])


@cache
def _kept_chatter() -> Callable[[str], object]:
    return compile_linear(_alternation(_patterns(_kept_chatter_words()))).search


def is_levelled_chatter(segment: str) -> bool:
    """The line's head holds an INFO, DEBUG or TRACE level: chatter by its level, whatever it says."""
    head = segment[:QUIET_HEAD]
    return any(level in head for level in _QUIET_LEVELS)


def is_quiet(segment: str) -> bool:
    return is_levelled_chatter(segment) and _kept_chatter()(segment) is None


# In bulk, past the ungated head of a big log, a warning is chatter too unless it holds something a finding
# can be made of: a failure word, a printed code or status, a word the quiet lines keep, or one of the
# knowledge base's anchors (the words a signature's pattern needs, knowledge KnowledgeBase.warning_anchors).
_WARNING_LEVELS = (" WARNING ", " WARN ", "[WARNING]", "[WARN]", " WARNING\t", " WARN\t")


# A Python warning's category at the start of a line (`UserWarning: ...`, `FutureWarning: ...`), its
# `file.py:N:` head gone.
_WARNING_CATEGORY = compile_linear(r"^\s*[A-Z]\w*Warning:")


def is_below_error_head(segment: str) -> bool:
    """The line's head holds a level below error (a warning, or INFO/DEBUG/TRACE chatter): read where no record
    of it says its level (a warning past a big log's head that only its anchor let through)."""
    return (is_levelled_chatter(segment) or any(level in segment[:QUIET_HEAD] for level in _WARNING_LEVELS)
            or bool(_WARNING_CATEGORY.search(segment[:QUIET_HEAD])))


@cache
def skip_finder(anchors: CatalogueAnchors | None = None) -> LineFinder:
    """The gate in bulk, for big inputs: where the next line starts that the assembler, at rest, would let
    through or learn from. Such a line holds a candidate word or shape, a progress word, or something that
    undoing a wrapper could turn into one (escapes, entities, no-break spaces) in its raw bytes: RE2 finds
    those in one scan. A line found so that is plainly quiet chatter (`is_quiet`, on a line the assembler
    reads as it is: no folded traceback, no several runtime records, nothing to undo) is passed over too.
    It is built from the gate's own words: a superset of the per-line gate, never a second list of it.
    Given the catalogue's warning anchors, a warning that holds none of them, and no failure word, code or
    word a quiet line keeps, is passed over as well; without them, every warning is found."""
    # Read as several lines by the assembler (unescaped, unfold_traceback, NRT_RECORD_START): an escaped
    # newline, a JSON string or object, a quote, glued progress dots, two frames, many colons. A line that
    # decodes to several is always found: its lines are numbered apart (assemble.py), in bulk as line by line.
    several = ("\\n", ' File "')
    makers = (SHELL_PROMPT_MARK, WAITING_WORD, *WORD_MAKERS, *several)
    quiet: tuple[str, ...] = _QUIET_LEVELS
    keep_patterns: tuple[str, ...] = (HTML_ENTITY.pattern, f"(?:[^:\\n]*:){{{SPLIT_COLONS + 1}}}", '(?m)^(?:[.>]|\\s*["{])')
    found = (*_candidate_patterns(), HTML_ENTITY.pattern)
    if anchors is not None:
        found = (*found, *(sorted(anchors.lines) if anchors.lines is not None else ["."]))
    if anchors is not None and anchors.warnings is not None:
        quiet = (*quiet, *_WARNING_LEVELS)
        keep_patterns = (*keep_patterns, *sorted(anchors.warnings), FAILURE_WORDS.pattern, PRINTED_CODE.pattern)
    else:
        found = (*found, *map(re.escape, _WARNING_LEVELS))
    return LineFinder(makers, found,
                      quiet=quiet, head=QUIET_HEAD, unless=makers,
                      unless_patterns=(*_patterns(_kept_chatter_words()), *keep_patterns))


# Dispatch, not shapes: plain lines (no timestamp) reach these grammars' alternatives only when they start
# with one of the words those alternatives start with, read off the grammars (nforensics/parse/literals.py).
_COMPILER_BLOCKS = ("ice_border", "ice_title", "ice_field", "ice_version", "ice_logs", "bir_header", "bir_field",
                    "bir_instruction", "sg_error")
_ENVIRONMENT_LINES = ("apt_line", "pip_line", "freeze_line", "cc_version", "env_assign", "setenv_call")


@cache
def compiler_block_starts() -> tuple[str, ...]:
    """`Error class:`, `what(): === BIR verification failed ===`, `SG-ERROR:` ...: compiler.lark's block lines."""
    return first_words("compiler", _COMPILER_BLOCKS) or ("",)  # ("",): an alternative could start anywhere


@cache
def environment_starts() -> tuple[str, ...]:
    """`neuronx-cc 2.24...`, `export NEURON_CC_FLAGS=...`, `os.environ[...]`: environment.lark's listings."""
    return first_words("environment", _ENVIRONMENT_LINES) or ("",)


@cache
def _untimed_runtime_head() -> re.Pattern[str]:
    """`ERROR  TDRV:` from runtime.lark's own LEVEL and RUNTIME_MODULE terminals (like daemon_head)."""
    return re.compile(rf"(?:{terminal_regex('runtime', 'LEVEL')})[ \t]+(?:{terminal_regex('runtime', 'RUNTIME_MODULE')}):")


def maybe_untimed_runtime(body: str) -> bool:
    """An NRT record copied without its timestamp and pid:tid: `ERROR  TDRV:tdrv_init ...`."""
    return body[:1].isupper() and _untimed_runtime_head().match(body) is not None


@cache
def _untimed_compiler_head() -> re.Pattern[str]:
    """`ERROR 40712 [neuronx-cc]:` from compiler.lark's own LEVEL terminal: a level, a pid, a component."""
    return re.compile(rf"(?:{terminal_regex('compiler', 'LEVEL')}) \d+ (?:\d+ )?(?:\(sg\d+\) )?\[")


def maybe_untimed_compiler(body: str) -> bool:
    """A neuronx-cc driver line copied without its timestamp: `ERROR 40712 [sg0000/Tensorizer/...]: ...`."""
    return body[:1].isupper() and _untimed_compiler_head().match(body) is not None


def maybe_untimed_framework(body: str) -> bool:
    """glog `F hilo/x.cc:160] ...`, glog's own header `F0501 10:00:00.123456 1234 x.cc:226] ...`, logrus
    `ERRO[0000] ...`, or Python's warnings module `/x/y.py:102: UserWarning: ...`."""
    return (body[:1] in "IWEF" and (body[1:2] == " " or body[1:5].isdigit() and body[5:6] == " ") or body[4:5] == "["
            or ".py:" in body and "Warning: " in body)


def timestamped_grammars(body: str) -> tuple[str, ...]:
    """Which producers can own a line that starts with a digit, by where its timestamp puts its marks:
    NRT `2024-Jun-26 ...`, compiler `2024-08-15T14:51:41Z` / `06/16/2021 ...`, wrapper `2024-04-12 07:...`."""
    if body.startswith(("NRT:", "[")) or body[5:6].isalpha():
        return ("runtime",)
    if body[10:11] == "T" or body[2:3] == "/":
        return ("compiler",)
    if body[10:11] == " ":
        return ("framework",)
    return ("runtime", "compiler", "framework")


@cache
def _traceback_words() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
    """What a line grammars/traceback.lark parses starts with or contains, read off the grammar
    (nforensics/parse/literals.py): for each alternative of its start rule, the words its lines start with
    (after spaces), else the words they must contain. (starts, contains, contains lower-cased); None when
    an alternative needs no word at all."""
    starts: set[str] = set()
    exact: set[str] = set()
    folded: set[str] = set()
    for rule in parser("traceback").rules:
        if rule.origin.name != "start":
            continue
        for symbol in rule.expansion:
            first, words = first_words("traceback", (symbol.name,)), start_words("traceback", symbol.name)
            if first:
                starts.update(first)
            elif words is None:
                return None
            else:
                exact.update(words.exact)
                folded.update(words.folded)
    return tuple(sorted(starts)), tuple(sorted(exact)), tuple(sorted(folded))


def maybe_traceback(body: str) -> bool:
    """Whether the traceback grammar could parse the line: a quick test derived from it, run before it."""
    words = _traceback_words()
    if words is None:
        return True
    starts, exact, folded = words
    text = body.lstrip()
    return (text.startswith(starts) or any(word in text for word in exact)
            or bool(folded) and any(word in text.lower() for word in folded))
