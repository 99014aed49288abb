"""Inputs that used to abort a run (issue 12): one bad file in a folder never loses the others' results."""

from __future__ import annotations

import gzip
import json

from conftest import SEED000, run_cli_text


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
