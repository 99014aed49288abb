"""Hostile NEFFs (issue 12, "NEFF reading" and "Archive escape"): every class of blow-up or escape is refused
or capped, in bounded time, with one clear line or a report warning, and nothing is written outside the target.

The hostile files are fakes built for these tests by tests/fakes/neff_hostile.py; each carries the standard
members after its hostile part.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from conftest import NFORENSICS, REPO, assert_clean_error, cli
from fakes.neff import neff_bytes, standard_members, write_neff
from fakes.neff_hostile import gzip_bomb, plain_tar, symlink_members, with_extended_header
from nforensics.artifacts import neff, neff_extract
from nforensics.errors import InputError
from test_neff import neff_json

BOUND = 10.0  # seconds for a whole command: generous, the unbounded cases took minutes


def timed_cli(*args):
    start = time.monotonic()
    result = cli(*args)
    assert time.monotonic() - start < BOUND
    return result


def hostile_neff(folder: Path, payload: bytes) -> Path:
    path = folder / "hostile.neff"
    path.write_bytes(neff_bytes(payload))
    return path


def assert_refused_without_writing(tmp_path: Path, path: Path, message: str) -> None:
    before = sorted(tmp_path.rglob("*"))
    for extra in ([], ["--extract", tmp_path / "out"]):
        code, out, err = timed_cli("neff", path, *extra)
        assert out == "" and message in err
        assert_clean_error(code, err, message)
    assert sorted(tmp_path.rglob("*")) == before


# ---------------------------------------------------------------- 1. PAX headers


@pytest.mark.parametrize("content, message", [
    (b"1" * 16000, "overlong number"),  # CPython 3.11.7's hdrcharset search is quadratic on digit runs
    (b"1 " + b"a" * 8000, "malformed PAX"),
    (b"9 path=x\n" + b"7 a" * 1000, "malformed PAX"),
    (b"3" * 2_000_000, "PAX extended header of 2000000 bytes"),
])
def test_hostile_pax_headers_are_refused_before_cpython_parses_them(tmp_path, content, message):
    assert_refused_without_writing(tmp_path, hostile_neff(tmp_path, with_extended_header(tarfile.XHDTYPE, content)), message)


def test_well_formed_pax_headers_still_read(tmp_path):
    record = b"path=sg00/a-long-name.json\n"
    length = len(record) + 3
    payload = with_extended_header(tarfile.XHDTYPE, str(length).encode() + b" " + record)
    report = neff_json(hostile_neff(tmp_path, payload))
    assert report["subgraphs"] == ["sg00", "sg01"]


# ---------------------------------------------------------------- 2. GNU long names


def test_a_gnu_long_name_of_one_gib_is_refused_without_reading_it(tmp_path):
    payload = with_extended_header(tarfile.GNUTYPE_LONGNAME, b"a" * 4096, declared=2**30)
    assert_refused_without_writing(tmp_path, hostile_neff(tmp_path, payload), "GNU long name header of 1073741824 bytes")


# ---------------------------------------------------------------- 3. JSON kept in memory


def test_json_kept_in_total_is_capped_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(neff, "MAX_JSON_TOTAL", 4096)
    members = standard_members()
    members.update({f"extra{i}.json": b"[" + b"0," * 1000 + b"0]" for i in range(8)})
    report = neff_json(write_neff(tmp_path, members=members))
    assert any("JSON members not read" in w and "4096 bytes" in w for w in report["warnings"])


# ---------------------------------------------------------------- 4. gzip bomb


def test_a_one_mb_gzip_bomb_is_refused_in_bounded_time_and_writes_nothing(tmp_path):
    path = hostile_neff(tmp_path, gzip_bomb())
    assert path.stat().st_size < 2 * 2**20
    assert_refused_without_writing(tmp_path, path, "a gzip bomb?")


def test_a_payload_within_the_inflate_ratio_still_extracts(tmp_path):
    report = neff_json(write_neff(tmp_path, members={**standard_members(), "zeros.bin": bytes(2**20)}),
                       "--extract", tmp_path / "out")
    assert (Path(report["extracted_to"]) / "zeros.bin").stat().st_size == 2**20


# ---------------------------------------------------------------- 5. escape through in-folder symlinks


CHAINS = {
    "dot-dot link chain": [("d", "dir"), ("d/u", "-> .."), ("z", "-> d/u/.."), ("z/escaped", "dir"),
                           ("z/escaped/f", "file")],
    "links made after the one that uses them": [("a", "-> x/y/../.."), ("x", "-> ."), ("y", "-> .")],
    "a chain of 41 links": [(f"a{i}", f"-> a{i + 1}") for i in range(41)] + [("a41", "dir"), ("a0/f", "file")],
    "up through a link inside a deep folder": [("p/q/r", "dir"), ("p/q/r/s", "-> ../../.."),
                                               ("t", "-> p/q/r/s/.."), ("t/escaped", "dir")],
}


@pytest.mark.parametrize("case", sorted(CHAINS))
def test_extract_refuses_escapes_through_the_payloads_own_symlinks(tmp_path, case):
    work = tmp_path / "work"
    work.mkdir()
    path = hostile_neff(work, plain_tar(symlink_members(*CHAINS[case])))
    before = sorted(tmp_path.rglob("*"))
    code, out, err = timed_cli("neff", path, "--extract", work / "deep" / "out")
    assert out == ""
    assert_clean_error(code, err, "refusing to extract")
    assert sorted(tmp_path.rglob("*")) == before  # nothing in the target, nothing beside or above it


def test_no_folder_is_created_through_a_link_that_leads_out(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "z").symlink_to("..")
    with pytest.raises(InputError, match="resolves outside"):
        neff_extract._folder(root.resolve(), ["z", "escaped"], create=True)
    assert not (tmp_path / "escaped").exists()


# ---------------------------------------------------------------- 5. memory, class by class

# Bytes of peak RSS a hostile NEFF may cost over a plain one: the JSON kept (64 MiB of text at most) plus one
# big member parsed at a time (parsed JSON takes about ten times its text). Three 12 MiB subgraph
# definitions cost 418 MiB over a plain NEFF while every parsed member was held to the end.
MEMORY_OVER_PLAIN = 256 * 2**20


def peak_rss(path: Path) -> int:
    """Peak resident memory, in bytes, of `nforensics neff PATH` in a fresh interpreter."""
    probe = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True); "
             "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    result = subprocess.run([sys.executable, "-c", probe, *NFORENSICS, "neff", str(path)], capture_output=True,
                            text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120, check=True)
    returncode, kilobytes = map(int, result.stdout.split())
    assert returncode in (0, 2), f"{path.name}: exit {returncode}"  # read, or refused with one line: not a crash
    return kilobytes * 1024  # Linux reports kilobytes


def test_no_hostile_neff_costs_more_memory_than_a_bound_over_a_plain_one(tmp_path):
    plain = peak_rss(write_neff(tmp_path, "plain.neff"))
    big_json = {**standard_members(), "kelf-0.json": b'{"graphs": [' + b'{"name": "sg", "x": [0, 0, 0, 0]},' * 400_000
                + b'{"name": "sg00", "definition": "sg00/def.json"}], "target": "cayman"}'}  # about 14 MiB parsed
    subgraphs = ("sg00", "sg01", "sg02")
    big_definitions = {**standard_members(subgraphs=subgraphs), **{
        f"{name}/def.json": b'{"instructions": [' + b'{"op": "x", "a": [0, 0, 0, 0]},' * 430_000 + b'{"op": "y"}]}'
        for name in subgraphs}}  # about 12 MiB each
    for folder in ("long-name", "bomb"):
        (tmp_path / folder).mkdir()
    hostile = {
        "GNU long name of 1 GiB": hostile_neff(tmp_path / "long-name", with_extended_header(
            tarfile.GNUTYPE_LONGNAME, b"a" * 4096, declared=2**30)),
        "gzip bomb of 1 GiB": hostile_neff(tmp_path / "bomb", gzip_bomb()),
        "JSON members past the total kept": write_neff(tmp_path, "many.neff", members={
            **standard_members(), **{f"extra{i}.json": b"[" + b"0," * (15 * 2**19 - 1) + b"0]" for i in range(5)}}),
        "a 14 MiB kelf file parsed": write_neff(tmp_path, "kelf.neff", members=big_json),
        "three 12 MiB subgraph definitions parsed": write_neff(tmp_path, "definitions.neff", members=big_definitions),
    }
    over = {name: peak_rss(path) - plain for name, path in hostile.items()}
    print({n: f"{c / 2**20:.0f} MiB" for n, c in over.items()}, f"over a plain NEFF's {plain / 2**20:.0f} MiB")
    assert all(cost < MEMORY_OVER_PLAIN for cost in over.values()), {n: f"{c / 2**20:.0f} MiB" for n, c in over.items()}
