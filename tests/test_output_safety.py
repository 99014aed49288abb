"""Log text is data: a crafted log line cannot become a link, an image, HTML or an @-mention in any Markdown
nforensics writes (explain's Markdown, GitHub's job summary, the bug report), and the log's own escape
sequences (OSC 52 clipboard writes, screen clears, hidden text) never reach a terminal, while nforensics'
own colours do."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from conftest import cli
from nforensics.pipeline import analyze_text
from nforensics.render.safe import markdown_text, terminal_text
from nforensics.render.terminal import render_text

CRAFTED = (
    "2026-03-12 10:00:00 [ERROR] [NCC_EXYZ123] Failed: see [click](https://evil.example/x)"
    " ![p](https://evil.example/p.png) cc @octocat <img src=x onerror=alert(1)> closes aws-neuron/aws-neuron-sdk#1"
    " [ref]: https://evil.example/ref www.evil.example $\\\\sqrt{x}$ <https://evil.example/auto>\n"
    "\x1b]52;c;ZXZpbA==\x07ERROR: oops \x1b[2J\x1b[8mhidden payload\x1b[0m \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\"
    " compile failed \u202egnp.exe\n"
)


def _inline_tokens(markdown: str):
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        yield token
        yield from token.children or ()


def assert_inert(markdown: str, where: str) -> None:
    for token in _inline_tokens(markdown):
        if token.type == "html_block" and token.content.startswith("<!-- form field id: "):
            continue  # the report's own markers of the issue form's fields
        assert token.type not in ("image", "html_inline", "html_block"), f"{where}: {token.type} {token.content!r}"
        if token.type == "link_open":
            assert "evil.example" not in (token.attrGet("href") or ""), f"{where}: a link to {token.attrGet('href')}"
        if token.type == "text":  # what GitHub would still link or mention after rendering
            for risky in ("@octocat", "://", "www.evil", "sdk#1"):
                assert risky not in token.content, f"{where}: {risky!r} outside code in {token.content!r}"
    assert "\x1b" not in markdown and "\u202e" not in markdown, where


@pytest.fixture
def crafted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "crafted.log").write_text(CRAFTED)
    return tmp_path


def test_explain_markdown_and_the_job_summary_are_inert(crafted, monkeypatch):
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(crafted / "summary.md"))
    result = cli("explain", "crafted.log", "--format", "markdown=out.md", "--format", "github=gh.txt")
    assert result.returncode == 1, result.stderr
    out = (crafted / "out.md").read_text()
    assert_inert(out, "explain --format markdown")
    assert_inert((crafted / "summary.md").read_text(), "job summary")
    assert "`https://evil.example/x)`" in out and "`@octocat`" in out  # still there to read, as code


def test_the_bug_report_is_inert(crafted):
    result = cli("report", "crafted.log", "--no-redact")
    assert result.returncode == 0, result.stderr
    assert_inert(result.stdout, "report")


def test_markdown_text_keeps_ordinary_text_readable():
    assert markdown_text("Expected core barriers LocalSendRecv-0_476_sr_cb_begin (32).") == \
        "Expected core barriers LocalSendRecv-0_476_sr_cb_begin (32)."
    assert markdown_text("host [redacted:hostname-1] failed") == "host [redacted:hostname-1] failed"
    assert markdown_text("[redacted:user-1](https://evil.example)").startswith("\\[redacted:user-1\\]")
    assert markdown_text("1. not a list", line_start=True) == "1\\. not a list"
    assert markdown_text("- not an item", line_start=True) == "\\- not an item"
    assert markdown_text("line one\n# not a heading") == "line one # not a heading"


def test_terminal_output_drops_the_logs_escape_sequences_and_keeps_its_own_colours():
    analysis = analyze_text(CRAFTED, source="crafted.log")
    assert any("\x1b]52" in e.text for f in analysis.findings for e in f.evidence)  # it reached the analysis
    out = render_text([analysis], color=True)
    sequences = set(re.findall(r"\x1b(.)", out))
    assert sequences == {"["}, sequences  # no OSC, DCS or other ESC strings
    csi = re.findall(r"\x1b\[([0-?]*)([ -/]*[@-~])", out)
    assert csi and all(final == "m" for _, final in csi), "only colour (SGR), no screen clears or cursor moves"
    assert not any("8" in params.split(";") for params, _ in csi if params), "no hidden (conceal) text"
    assert "\u202e" not in out and "ZXZpbA==" not in out and "hidden payload" in out


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("a\x1b]52;c;ZXZpbA==\x07b", "ab"),
        ("a\x1b]52;c;ZXZpbA==\x1b\\b", "ab"),
        ("a\x1b[2J\x1b[Hb", "ab"),
        ("a\x1b[8mhidden\x1b[0m", "ahidden"),
        ("a\x9b2Jb\x9d0;title\x07c", "abc"),
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
        ("bell\x07 backspace\x08 cr\r", "bell backspace cr"),
        ("a\x1bPq#0;2;0;0;0\x1b\\b", "ab"),  # sixel / DCS
        ("plain text", "plain text"),
    ],
)
def test_terminal_text(raw, clean):
    assert terminal_text(raw) == clean


def test_terminal_text_is_linear_on_hostile_runs():
    import time

    for unit in ("\x1b]", "\x1b[", "\x1b", "\x9d", "\x1bP"):
        text = unit * 200_000
        started = time.perf_counter()
        terminal_text(text)
        markdown_text(text[:50_000])
        assert time.perf_counter() - started < 2, repr(unit)
