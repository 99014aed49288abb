"""The real CLI in a pseudo-terminal 80 and 200 columns wide (issue 15): the output follows the terminal's
width, no line is wider than it, and no URL is split across lines. The only lines allowed to be wider are
the ones printed whole on purpose, so that a copy keeps them one line: a URL on its own and a line of code
to run (the terminal folds them, without a newline inside)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import termios

import pytest

from conftest import ENV, NFORENSICS, REPO, SAMPLE_LOGS, run_cli

LOGS = [SAMPLE_LOGS / "seed003_ncc_inla001_xla_use_bf16.log", SAMPLE_LOGS / "ccom_bootstrap_no_interface.log",
        SAMPLE_LOGS / "ncc_cfg015_flash_attention_bwd_many_blocks.log"]
SGR = re.compile(r"\x1b\[[0-9;]*m")
OSC8 = re.compile(r"\x1b\]8;[^\x1b\x07]*;([^\x1b\x07]*)(?:\x1b\\|\x07)")
URL_LINE = re.compile(r"^\s*(?:see:\s+)?https?://\S+$")
URL = re.compile(r"https?://[^\s\])'\"]+")


def in_terminal(columns: int, *args: str) -> str:
    """What `nforensics ARGS` writes to a terminal `columns` wide (stdout a pseudo-terminal)."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in ENV.items() if k not in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "COLUMNS")}
    child = subprocess.Popen([*NFORENSICS, *args], stdin=subprocess.DEVNULL, stdout=terminal,
                             stderr=subprocess.PIPE, cwd=REPO, env={**env, "TERM": "xterm-256color"})
    os.close(terminal)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([controller], [], [], 120)
            if not ready:
                raise TimeoutError("no output for 120 s")
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(controller)
        child.wait(timeout=120)
    assert child.returncode == 1, child.stderr.read() if child.stderr else ""
    return b"".join(chunks).decode().replace("\r\n", "\n")


def catalogue_texts(log) -> tuple[set[str], set[str], set[str], list[str]]:
    """From the JSON contract: the reference and similar-report URLs, every URL any of its texts holds, the
    code lines of the workarounds, and the findings' titles."""
    document = json.loads(run_cli("explain", log, "--format", "json").stdout)
    links, urls, code = set(), set(), set()
    for finding in document["findings"]:
        links |= {r["url"] for r in finding["references"]} | {s["url"] for s in finding["similar_reports"]}
        code |= {line.strip() for w in finding["workarounds"] for line in (w["code"] or "").splitlines()}
    urls = {url.rstrip(".,:;") for url in URL.findall(json.dumps(document).replace("\\n", " "))}
    return links, urls, code, [finding["title"] for finding in document["findings"]]


@pytest.mark.parametrize("columns", [80, 200])
@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem[:20])
def test_lines_fit_the_terminal_and_urls_stay_whole(log, columns):
    links, urls, code, titles = catalogue_texts(log)
    for detail in ((), ("--verbose",)):
        raw = in_terminal(columns, "explain", *detail, str(log))
        assert "\x1b[" in raw  # a terminal gets colour on auto
        text = SGR.sub("", OSC8.sub("", raw))
        lines = text.splitlines()
        for line in lines:
            if len(line.rstrip()) > columns:
                assert URL_LINE.match(line) or line.strip() in code, (columns, detail, line)
        for title in titles:  # the terminal's width is used: a title that fits is on one line
            assert (len(title) + 20 > columns) or any(title in line for line in lines), (columns, title)
        for found in URL.findall(text):  # a URL cut at the end of a line would print a prefix of itself
            assert found.rstrip(".,:;") in urls, (columns, detail, found)
        if detail:
            for url in links:  # verbose prints every reference and similar report, whole on its line,
                assert any(url in line for line in lines), (columns, url)
            assert set(OSC8.findall(raw)) >= links  # and as a terminal hyperlink
