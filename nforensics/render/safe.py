"""Log text is data, never markup or terminal control: what every renderer does to text it did not write.

- `markdown_text`: log text placed in Markdown prose (a summary, a table cell, a title). A crafted line must
  not become a link, an image, raw HTML, an @-mention, an issue reference or a heading: Markdown punctuation
  is backslash-escaped, and what GitHub links after rendering even when escaped (URLs, `www.` names, emails,
  `@user`, `#123`, `owner/repo#123`) goes into a code span, where nothing is linked. Line breaks become
  spaces (a prose value cannot start a new block).
- `terminal_text`: log text printed to a terminal. Escape sequences (CSI such as screen clears and SGR 8
  hidden text, OSC such as OSC 52 clipboard writes and OSC 8 links, DCS/APC/PM/SOS strings), 8-bit C1
  controls, other C0 controls (BEL, backspace, carriage return) and bidirectional overrides (text that reads
  differently than it is) are removed; tabs and line breaks stay. The tool's own colours are added by rich
  after this, so they are kept.
- `terminal_safe`: the same for every string of analyses about to be rendered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nforensics.records import Analysis
from nforensics.walk import map_strings

# Every quantifier is bounded or unambiguous, so each pattern is linear in its input.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]{0,64}[ -/]{0,16}[@-~]?"  # CSI: ESC [ params intermediates final
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]{0,65536}(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC strings
    r"|\x9b[0-?]{0,64}[ -/]{0,16}[@-~]?"  # 8-bit CSI
    r"|[\x9d\x90\x98\x9e\x9f][^\x07\x1b\x9c]{0,65536}(?:\x07|\x1b\\|\x9c)?"  # 8-bit OSC, DCS, SOS, PM, APC
    r"|\x1b[ -/]{0,4}[0-~]?"  # other ESC sequences (charset, keypad, RIS `ESC c`)
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def terminal_text(text: str) -> str:
    if not text or not any(c in text for c in "\x1b\x07\x08\x0b\x0c\x0d\x7f") and text.isprintable():
        return text
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def terminal_safe(analyses: Sequence[Analysis]) -> list[Analysis]:
    """The analyses with every string passed through `terminal_text` (unchanged ones are not copied)."""
    safe = []
    for analysis in analyses:
        data = analysis.model_dump(mode="json")
        cleaned = map_strings(data, terminal_text)
        safe.append(analysis if cleaned == data else Analysis.model_validate(cleaned))
    return safe


# What GitHub turns into a link even when its punctuation is escaped: URLs, www names, emails, @-mentions,
# issue references. Bounded runs, no nested quantifiers: linear.
_LINKISH = re.compile(
    r"(?i)\b(?:[a-z][a-z0-9+.-]{0,20}://|www\.)[^\s<>`]{1,2048}"
    r"|[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}"
    r"|(?<![\w`])@[A-Za-z0-9][\w-]{0,38}(?:/[\w.-]{1,100})?"
    r"|(?:\b[\w.-]{1,100}/[\w.-]{1,100})?#\d{1,10}\b|\bGH-\d{1,10}\b"
)
# Inline Markdown punctuation (an underscore inside a word is never emphasis in GFM, so `a_b` stays as it is),
# `$` for GitHub's math, and a block marker at the start (`- `, `1. `, `# `, `> `, `=`).
_MARKDOWN_PUNCTUATION = re.compile(r"[\\`*\[\]<>|~&$]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_BLOCK_START = re.compile(r"^(\s{0,3})([-+*>#=]|\d{1,9}(?=[.)]))")


_PLACEHOLDER = re.compile(r"\[redacted:[a-z0-9-]{1,64}\](?![(\[:])")  # the redactor's: inert unless a link follows


def _escape(text: str) -> str:
    out, last = [], 0
    for match in _PLACEHOLDER.finditer(text) if "[redacted:" in text else ():
        out.append(_MARKDOWN_PUNCTUATION.sub(lambda m: "\\" + m.group(0), text[last : match.start()]))
        out.append(match.group(0))
        last = match.end()
    out.append(_MARKDOWN_PUNCTUATION.sub(lambda m: "\\" + m.group(0), text[last:]))
    return "".join(out)


def markdown_text(text: object, *, line_start: bool = False) -> str:
    """Log text as inert Markdown prose (see the module docstring); `line_start` when it begins a line,
    where `- x` or `1. x` would start a list."""
    from nforensics.render.markdown import code_span

    text = terminal_text(str(text)).replace("\r", " ").replace("\n", " ")
    out, last = [], 0
    for match in _LINKISH.finditer(text):
        out.append(_escape(text[last : match.start()]))
        out.append(code_span(match.group(0)))
        last = match.end()
    out.append(_escape(text[last:]))
    escaped = "".join(out)
    block = _BLOCK_START.match(escaped) if line_start else None
    if block:  # `1. x` -> `1\. x`, `- x` -> `\- x`
        marker_end = block.end()
        if block.group(2)[0].isdigit():
            return escaped[:marker_end] + "\\" + escaped[marker_end:]
        return escaped[: block.start(2)] + "\\" + escaped[block.start(2):]
    return escaped


_CODE_SPAN = re.compile(r"(`+)[^`]{0,4096}?\1")  # a catalogue text's own code spans: left as they are
_TAG_LIKE = re.compile(r"<(?=[A-Za-z/!?])")


def catalogue_prose(text: str) -> str:
    """The catalogue's own Markdown (meanings, hypotheses, checks): its code spans and emphasis are meant,
    but a placeholder such as `<uuid>` outside code would be swallowed as an HTML tag."""
    if "<" not in text:
        return text
    out, last = [], 0
    for match in _CODE_SPAN.finditer(text):
        out.append(_TAG_LIKE.sub(r"\\<", text[last : match.start()]))
        out.append(match.group(0))
        last = match.end()
    out.append(_TAG_LIKE.sub(r"\\<", text[last:]))
    return "".join(out)
