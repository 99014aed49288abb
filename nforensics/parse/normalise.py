"""Undo what happened to a log on its way to us, before any grammar reads it.

A notebook or a JSON log collector escapes lines into JSON strings, a colour terminal adds ANSI escapes, a
web page escapes HTML characters, renders indentation with no-break spaces or folds a traceback onto one line,
a reply quotes a paste with `> `, several processes write records onto one physical line, wrappers (Ray,
Python logging, CloudWatch, ...) add prefixes, and a GitHub paste sets lines in bold.
"""

from __future__ import annotations

import html
import json
import re
from functools import cache

from nforensics.parse.grammars import parse, parser, terminal_regex
from nforensics.parse.shapes import Unwrapped

# Several NRT records on one physical line (multi-process output): split before each timestamp, or before
# a `pid:tid LEVEL MODULE:` record head when the processes wrote no timestamp.
NRT_RECORD_START = re.compile(
    r"(?<=\S)(?=\d{4}-[A-Z][a-z]{2}-\d\d \d\d:\d\d:\d\d\.\d{4,6}\s)"
    r"|(?<=[^\d\s.:])\s*(?=\d{2,7}:\d{2,7} +(?:ERROR|WARN(?:ING)?|INFO|DEBUG|TRACE|FATAL) +[A-Z][A-Z0-9_]*:)"
)
SPLIT_COLONS = 6  # a line with more colons than this may hold several runtime records (one has fewer)
# A colour escape, also as a collector wrote the ESC character out (rsyslog's `#033`, `\033`, caret `^[`).
_ANSI_ESCAPE = re.compile(r"(?:\x1b|#033|\\033|\\x1b|\^\[)\[[0-9;?]*[ -/]*[@-~]")
_ESCAPE_STARTS = ("\x1b", "#033[", "\\033[", "\\x1b[", "^[[")
# What in a raw line can put a word into the text unescaping makes of it: escapes (ANSI, JSON's `\\u0045`),
# a no-break space. (HTML_ENTITY too.)
WORD_MAKERS = (*_ESCAPE_STARTS, "\\u", "\xa0")
_JSON_MEMBER = re.compile(r'^"((?:[^"\\]|\\.)*)"\s*:\s*("(?:[^"\\]|\\.)*")\s*,?$')
_JSON_NOT_LOG = frozenset({"ename", "evalue", "output_type", "name"})
_JSON_LOG_KEYS = ("traceback", "text", "log", "message", "msg", "MESSAGE")  # the first a record has holds its line
# ... and what a JSON logger puts beside it: the exception's traceback, an error, a stack.
_JSON_ERROR_KEYS = ("exc_info", "exception", "error", "err", "stack_trace", "stacktrace", "stack")
# A Markdown or e-mail quote (`> `, `> > `); not Python's `>>>` prompt.
_QUOTE_MARKS = re.compile(r"^(?:>(?: |$))+")
HTML_ENTITY = re.compile(r"&(?:quot|gt|lt|amp|apos|nbsp|#39|#x27|#34|#62|#60);")
# A traceback folded onto one line: where each frame starts, where its function name ends and its source
# line begins, and where the final `SomeError: message` starts.
# (`(?<!\s)`: a run of spaces is tried from its start only, so a long run costs its length, not its square.)
_FOLDED_FRAME = re.compile(r"(?<!\s)\s+(?=File \")")
_FOLDED_FUNCTION = re.compile(r"^(File \"[^\"]+\", line \d+, in \S+)\s+(.+)$")
_FOLDED_EXCEPTION = re.compile(r"(?<!\s)\s+(?=(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): )")
# A line a GitHub paste set in bold (`**...**`): the markers are the reporter's, not the producer's.
MARKDOWN_BOLD = re.compile(r"^\*\*(?=[^*\s])(.*[^*\s])\*\*\s*$")
# Progress characters a tool printed without a newline, glued in front of the next record: a run of dots, or
# even one dot when a record's date follows it (neuron-cc's `.02/22/2022 12:27:28 PM ERROR ...`).
GLUED_PROGRESS = re.compile(r"^(?:\.{2,}\s*(?=\S)|\.(?=\d\d/\d\d/\d{4} |\d{4}-\d\d-\d\d[T ]))")

def unescaped(raw: str) -> list[str]:
    """The log lines a physical line holds. A saved notebook or a log shipped as JSON holds them as JSON
    strings (one per line of a traceback list, or one string with `\\n` escapes); a colour terminal adds ANSI
    escapes. Anything that does not decode is kept as it was."""
    if raw[:1] == ">":
        raw = _QUOTE_MARKS.sub("", raw)
    if "&" in raw and HTML_ENTITY.search(raw):
        raw = html.unescape(raw)
    if "\xa0" in raw:
        raw = raw.replace("\xa0", " ")
    text = raw
    stripped = raw.strip()
    if stripped[:1] == '"' or stripped[:1] == "{" and stripped[-1:] == "}":
        decoded = _json_strings(stripped)
        if decoded is not None:
            # (A shipped line keeps its own newline: the end of the line, not an empty one after it.)
            text = decoded[:-1] if decoded.endswith("\n") else decoded
    pieces = text.split("\\n") if "\\n" in text else text.split("\n")
    return [_ANSI_ESCAPE.sub("", piece) for piece in pieces] if any(e in text for e in _ESCAPE_STARTS) else pieces


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
        # A log shipper's record keeps the line under one key beside its metadata (Docker's json-file and
        # Kubernetes' `{"log": ..., "stream": "stderr", "time": ...}`, a JSON logger's `message`): the line and
        # any traceback or error beside it, not the stream, time and level. (A record with none: every value.)
        line = [value[k] for k in _JSON_LOG_KEYS if isinstance(value.get(k), (str, list))][:1]
        log = [*line, *(value[k] for k in _JSON_ERROR_KEYS if isinstance(value.get(k), str))] if line else list(value.values())
        strings = [v for v in log if isinstance(v, str)]
        strings += [item for v in log if isinstance(v, list) for item in v if isinstance(item, str)]
        return "\n".join(strings) if strings else None
    return None


def unfold_traceback(line: str) -> list[str]:
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


@cache
def _prefix_start() -> re.Pattern[str]:
    """Whether a wrapper starts a line, from grammars/prefixes.lark's own `_prefix` terminals: the quick test
    that spares most lines the parser cannot drift from the grammar."""
    grammar = parser("prefixes")
    names = [symbol.name for rule in grammar.rules if rule.origin.name == "_prefix" for symbol in rule.expansion]
    return re.compile("|".join(f"(?:{terminal_regex('prefixes', name)})" for name in names))


def unwrap(segment: str) -> Unwrapped:
    """The producer's own line behind the wrappers (Ray, torchrun, vLLM, Python logging, a relay...), with the
    level a logger's prefix gave it; the segment itself when no wrapper starts it."""
    if not _prefix_start().match(segment):
        return Unwrapped(segment)
    unwrapped = parse("prefixes", segment)
    return unwrapped if isinstance(unwrapped, Unwrapped) else Unwrapped(segment)
