"""Reading an input as numbered lines (nforensics/ingest.py): line ends, decoding, over-long lines and the
bulk skip a big log goes through, each against what Python's own text reader makes of the same bytes."""

from __future__ import annotations

import gzip
import importlib
import json
import io
from pathlib import Path

import pytest
from conftest import REPO, counting_reader

from nforensics import ingest
from nforensics.ingest import MAX_LINE_CHARS, read_lines, shortened
from nforensics.linear_regex.lines import LineFinder
from nforensics.line_numbers import physical_lines
from nforensics.parse import assemble

assembler = importlib.import_module("nforensics.parse.assemble")
rewrap = importlib.import_module("nforensics.parse.rewrap")
SAMPLES = sorted((REPO / "sample_logs").glob("*.log"))


def _python_reads(data: bytes) -> list[tuple[int, str]]:
    """What io.TextIOWrapper (universal newlines, invalid UTF-8 replaced) reads, numbered."""
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace", newline=None)
    return [(number, shortened(line.rstrip("\n"))) for number, line in enumerate(text, start=1)]


def _reads(data: bytes, tmp_path: Path) -> list[tuple[int, str]]:
    path = tmp_path / "in.log"
    path.write_bytes(data)
    return list(read_lines(str(path))[1])


@pytest.mark.parametrize("data", [
    b"a\nb\n", b"a\nb", b"a\r\nb\r\n", b"a\rb\rc", b"a\r\r\nb", b"\n\n\n", b"", b"x\r", b"x\r\r",
    b"caf\xc3\xa9 \xff\xfe broken \xe2\x82\n", b"tab\tand\x0bvertical\x0cfeed\n", "no\u2028break\n".encode(),
])
def test_lines_are_what_python_reads(data, tmp_path, monkeypatch):
    assert _reads(data, tmp_path) == _python_reads(data)
    monkeypatch.setattr(ingest, "READ_BYTES", 1)  # every line end cut between two reads, `\r\n` too
    assert _reads(data, tmp_path) == _python_reads(data)


def test_gzip_reads_the_same(tmp_path):
    data = b"2024-01-01 ERROR one\r\ntwo\n"
    path = tmp_path / "in.log.gz"
    path.write_bytes(gzip.compress(data))
    assert list(read_lines(str(path))[1]) == _python_reads(data)


@pytest.mark.parametrize("middle", ["x" * 500_000, "é" * 300_000])
def test_an_over_long_line_keeps_both_ends_in_bounded_memory(middle, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest, "READ_BYTES", 4096)
    line = "head " + middle + " RuntimeError: neuronx-cc failed with -9"
    lines = _reads(f"before\n{line}\nafter\n".encode(), tmp_path)
    assert lines == [(1, "before"), (2, shortened(line)), (3, "after")]
    assert len(lines[1][1]) < MAX_LINE_CHARS + 100


def test_skipping_counts_the_lines_it_passes_and_keeps_the_last_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(ingest, "READ_BYTES", 64)  # the skip crosses many reads
    body = [f"chatter {n}" for n in range(1, 200)] + ["ERROR here", "more chatter", "", "last words", "", ""]
    path = tmp_path / "in.log"
    path.write_text("\n".join(body) + "\n")
    lines = read_lines(str(path))[1]
    assert next(lines) == (1, "chatter 1")
    lines.skip_to(LineFinder(["ERROR"]))
    assert next(lines) == (200, "ERROR here")
    lines.skip_to(LineFinder(["ERROR"]))  # nothing more to find: the last two non-blank lines stay readable
    assert list(lines) == [(201, "more chatter"), (202, ""), (203, "last words"), (204, ""), (205, "")]


def _records(lines) -> tuple[dict, list]:
    """The records, and the retained lines at the physical lines they came from."""
    log, retained = assemble("in.log", lines)
    physical = physical_lines(log)
    return log.model_dump(), [(physical(line.line), line.text, line.body) for line in retained]


@pytest.fixture
def gate_from_the_start(monkeypatch):
    """The gate, and so the bulk skip, on from the first lines: no ungated head, and only a few lines read
    ahead to decide a terminal width (the skip waits while lines are read ahead)."""
    monkeypatch.setattr(assembler, "UNGATED_LINES", 0)
    monkeypatch.setattr(rewrap, "SAMPLE_LINES", 3)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_skipping_chatter_in_bulk_gives_the_same_records(path, gate_from_the_start):
    """With the gate on from the first line, the bulk skip (RE2 over raw bytes) must leave exactly the records
    and retained lines of reading every line. The sample logs hold every shape the assembler reads."""
    every_line = list(read_lines(str(path))[1])  # a list: no skipping
    assert _records(read_lines(str(path))[1]) == _records(every_line)


def test_lines_decoded_into_several_are_numbered_alike_in_bulk_and_line_by_line(tmp_path, gate_from_the_start):
    """A JSON line holding several escaped lines is numbered into several lines (assemble.py); the bulk skip
    finds it whatever its words, so the distances between records (how close an interrupt is to the error
    after it) are the same however the input is read."""
    stream = json.dumps({"name": "stdout", "output_type": "stream", "text": "".join(f"batch {k}\n" for k in range(6))})
    text = ("step 1 loss 2.0\n" * 300 + "^C\nKeyboardInterrupt\n" + (stream + "\n") * 12
            + "2024-Jun-26 07:48:56.000001 11:22 ERROR  NRT:nrt_execute  failed: NRT_EXEC_OOB\n")
    path = tmp_path / "in.log"
    path.write_text(text)
    assert _records(read_lines(str(path))[1]) == _records(list(read_lines(str(path))[1]))


def test_past_the_cap_the_lines_of_one_physical_line_keep_their_order(monkeypatch):
    monkeypatch.setattr(assembler, "MAX_DECODED_LINES", 0)
    line = json.dumps("Compiling the graph\nERROR: nrt_load status=4 (NRT_RESOURCE)\nloading weights")
    log, retained = assemble("in.log", [(1, line)])
    assert [r.text for r in retained] == ["Compiling the graph", "ERROR: nrt_load status=4 (NRT_RESOURCE)", "loading weights"]
    assert log.decoded_lines == []


def test_a_big_log_of_chatter_is_skipped_unread_and_its_failure_found(tmp_path):
    chatter = "".join(
        f"2026-03-02T18:20:{n % 60:02d}Z INFO 48240 [sg0000/Tensorizer/Simplifier]: finished after 0.{n} s\n"
        f"2026-Mar-02 18:20:40.{n:06d} 48240:48241 INFO  NRT:nrt_load    Loaded model in {n} ms\n"
        f"step {n} loss 2.{n} lr 0.0003\n" for n in range(20_000))
    seed = (REPO / "sample_logs" / "seed000_ncc_ixlv002_sendrecv_twice.log").read_text()
    path = tmp_path / "big.log"
    path.write_text(chatter + seed)
    reader, decoded = counting_reader(path)
    log, _ = assemble("big.log", reader)
    assert log.total_lines == 60_000 + seed.count("\n")
    assert any(d.code == "NCC_IXLV002" for d in log.diagnostics)
    assert len(decoded) < 25_000  # the ungated head and the failure; not the 40,000 chatter lines after it


@pytest.mark.parametrize("line", [  # (no word that keeps a quiet line anyway: no "rror", "ail", "illed" ...)
    '  "2024-01-01 10:00:00 INFO  NRT:nrt_load loaded\\n[NCC_EVRF009] too big",',  # notebook JSON, indented
    "2024-01-01 10:00:00 INFO  NRT:nrt_load loaded\\nTraceback (most recent call last):",  # an escaped newline
    '{"log": "2024-01-01 10:00:00 INFO NRT up\\nWARNING NRT_TIMEOUT on load\\n", "stream": "stderr"}',  # shipped
    '2024 INFO NRT  File "a.py", line 1, in f  File "b.py", line 2, in g  WARNING: NRT_TIMEOUT',
    "2024-Jun-26 07:48:56.000001 11:22 INFO  NRT:a ok2024-Jun-26 07:48:56.000002 11:22 WARN  TDRV:b [NCC_EVRF009] x",
])
def test_a_line_that_looks_quiet_but_is_read_as_several_is_not_skipped(line, tmp_path, gate_from_the_start):
    """Levelled chatter is passed over in bulk only where the assembler reads the raw line as it is: a line
    it splits or unescapes may hold an error behind the quiet head."""
    path = tmp_path / "in.log"
    path.write_text("2024-01-01 10:00:00 INFO  NRT:nrt_init started\n" * 5 + line + "\n" + "step 1 loss 2.0\n" * 3)
    skipped = _records(read_lines(str(path))[1])
    assert skipped == _records(list(read_lines(str(path))[1]))
    assert any(number == 6 for number, _text, _body in skipped[1])  # the line did reach the parsers
