"""Inputs that used to abort a run (issue 12): one bad file in a folder never loses the others' results."""

from __future__ import annotations

import gzip
import json

from conftest import SEED000, run_cli_text
from nforensics.pipeline import analyze_path, analyze_text


def test_corrupt_gzip_in_a_folder_is_one_line_and_the_other_files_still_count(tmp_path):
    (tmp_path / "a.log").write_bytes(SEED000.read_bytes())
    (tmp_path / "b.log.gz").write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage")  # bad deflate block
    stream = bytearray(gzip.compress(SEED000.read_bytes() * 200))
    stream[len(stream) // 2:len(stream) // 2 + 40] = b"\xff" * 40  # corrupt in the middle, after some lines
    (tmp_path / "c.log.gz").write_bytes(bytes(stream))
    result = run_cli_text("explain", tmp_path, "--format", "json")
    assert result.returncode == 1  # failures diagnosed in the readable file
    findings = json.loads(result.stdout)["findings"]
    assert [f["code"] for f in findings] == ["NCC_IXLV002"]
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and "b.log.gz" in lines[0] and "c.log.gz" in lines[1], result.stderr
    assert "internal error" not in result.stderr


def test_a_corrupt_gzip_alone_is_an_input_error(tmp_path):
    bad = tmp_path / "b.log.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage")
    result = run_cli_text("explain", bad)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "internal error" not in result.stderr
    assert "b.log.gz" in result.stderr


def test_an_enormous_line_keeps_its_tail_and_says_what_was_cut(tmp_path):
    """A failure printed at the end of a 200,000-character line (a JSON record, a progress line without
    newlines) is still seen, and the kept text says how much of the middle was cut."""
    log = tmp_path / "long.log"
    log.write_text("start\n" + "[progress] " + "." * 200_000 + " RuntimeError: neuronx-cc failed with -9\nend\n")
    analysis = analyze_path(str(log))
    finding = analysis.findings[0]
    assert finding.signature == "neuronx-cc-killed-host-oom"
    text = next(e.text for e in finding.evidence if e.line == 2)
    assert "characters cut by nforensics" in text and text.endswith("failed with -9")
    assert len(text) < 70_000


def test_text_in_memory_is_shortened_the_same_way():
    text = "x " * 60_000 + "Killed"  # one 120,006-character line
    finding = analyze_text(text + "\n").findings[0]
    assert "characters cut by nforensics" in finding.evidence[0].text and finding.evidence[0].text.endswith("Killed")


def test_numbers_too_long_to_be_statuses_or_line_numbers_do_not_abort(tmp_path):
    """Python refuses to convert integers of more than 4,300 digits; a log line carrying one where a status,
    an exit code, a pid or a line number stands is an ordinary line, never an internal error."""
    digits = "7" * 5000
    log = tmp_path / "numbers.log"
    log.write_text(f"Inference completed with err: {digits}\nneuronx-cc failed with {digits}\n"
                   f"status={digits} message=Invalid\nTraceback (most recent call last):\n"
                   f'  File "x.py", line {digits}, in f\n'
                   f"2024-Jan-18 01:49:40.972604 {digits}:1 ERROR  NRT:nrt_init  Failed\nRuntimeError: boom\n")
    for format in ("text", "json", "sarif"):
        result = run_cli_text("explain", str(log), "--format", format)
        assert result.returncode == 1 and "internal error" not in result.stderr, result.stderr[-300:]
