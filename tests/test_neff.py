"""`nforensics neff`: header, hash, facts, device check, diff, and safe extraction of hostile payloads.

Synthetic NEFFs are built by tests/fakes/neff.py (1024-byte header + tar payload) so every test runs without ../shared;
the real compiler's NEFFs in ../shared/fixtures/neff are read in place when present, never copied.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from conftest import SHARED, assert_clean_error, cli
from fakes.neff import neff_bytes, standard_members, tar_payload, write_neff
from nforensics.artifacts import facts_for, neff_payload

REAL_SMALL = SHARED / "fixtures" / "neff" / "matmul_small.neff"
REAL_LARGE = SHARED / "fixtures" / "neff" / "matmul_large.neff"
needs_real_neffs = pytest.mark.skipif(not REAL_SMALL.exists(), reason="../shared/fixtures/neff is absent")


def neff_json(*args) -> dict:
    code, out, err = cli("neff", *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


# ---------------------------------------------------------------- facts


def test_synthetic_neff_facts_in_json(tmp_path):
    report = neff_json(write_neff(tmp_path))
    assert report["compiler_version"] == "2.99.1.0+abcdef12"
    assert (report["codename"], report["target"], report["neuron_core"]) == ("cayman", "trn2", "NeuronCore-v3")
    assert report["lnc_size"] == 2 and report["subgraphs"] == ["sg00", "sg01"]
    assert report["hash_ok"] is True and report["hash_order"] == "word-swapped" and report["hash_algorithm"] == "md5"
    assert report["payload"] == "gzip-tar"
    assert [b["name"] for b in report["feature_bits"]["decoded"]] == [
        "neff_feature_vnc", "DVE_perf_mode", "DGE", "DGE_cast", "hardware_DGE"]
    assert report["feature_bits"]["best_effort"] is True
    assert report["activation_sets"] == {"sg00": ["exp_and_others", "gelu_and_others"],
                                         "sg01": ["exp_and_others", "gelu_and_others"]}
    assert {(t["direction"], t["name"], t["dtype"], t["bytes"]) for t in report["io"]} == {
        ("input", "x", "float16", 65536), ("output", "out", None, 32768)}
    sg = report["per_subgraph"]["sg00"]
    assert sg["dma_queues"]["qPoolDynamic"] == {"type": "dynamic", "owner": "pool", "num_queues": 16,
                                                "semaphores": 16, "dge": True}
    assert sg["dma_queues"]["qIn"]["dge"] is False
    assert (sg["runtime_semaphores"], sg["runtime_events"], sg["activation_semaphore"]) == (3, 12, 12)
    assert sg["variables"]["virtual"] == {"count": 2, "total_bytes": 1024} and sg["spill_variables"] == 2
    assert sg["engines"]["PE"] == {"instr_file": "PE.bin", "bytes": 768, "records_64b": 12, "dma_descriptors": 0}
    assert sg["engines"]["Activation"]["dma_descriptors"] == 1
    assert report["header"]["name"] == "file.neff" and report["header"]["neff_version"] == "2.0"
    assert report["hlo_stats"]["HloMacCount"] == 4194304


def test_text_output_shows_target_hash_and_tables(tmp_path):
    code, out, _ = cli("neff", write_neff(tmp_path))
    assert code == 0
    assert "cayman = trn2" in out and "NeuronCore-v3" in out
    assert "verified (md5, word-swapped byte order)" in out
    assert "best effort" in out
    for table in ("Subgraphs", "Variables by type", "Instruction streams", "I/O tensors"):
        assert table in out


def test_plain_tar_payload_with_plain_digest_and_trn1_codename(tmp_path):
    path = write_neff(tmp_path, members=standard_members(codename="sunda", subgraphs=("sg00",)), gzip=False,
                      hash_order="digest", lnc_size=1, feature_bits=0x1000)
    report = neff_json(path)
    assert report["payload"] == "tar" and report["hash_ok"] is True and report["hash_order"] == "digest"
    assert report["target"] == "trn1" and report["platforms"] == ["trn1", "trn1n", "inf2"]
    assert report["neuron_core"] == "NeuronCore-v2" and report["subgraphs"] == ["sg00"]


def test_pkg_version_1_uses_sha256(tmp_path):
    report = neff_json(write_neff(tmp_path, pkg_version=1))
    assert report["hash_algorithm"] == "sha256" and report["hash_ok"] is True


def test_hash_mismatch_is_reported_not_called_corrupt(tmp_path):
    path = write_neff(tmp_path, hash_order="wrong")
    report = neff_json(path)
    assert report["hash_ok"] is False and report["compiler_version"] == "2.99.1.0+abcdef12"
    code, out, _ = cli("neff", path)
    assert code == 0 and "hash mismatch" in out and "corrupt" not in out.lower()


def test_unknown_and_newer_compiler_feature_bits_are_labelled(tmp_path):
    report = neff_json(write_neff(tmp_path, feature_bits=0x400 | 0x40000 | (1 << 40)))
    bits = report["feature_bits"]
    assert [b["name"] for b in bits["decoded"]] == ["neff_feature_vnc"]
    assert bits["unknown_bits"] == ["0x40000", hex(1 << 40)] and bits["newer_compiler_bits"] is True


def test_broken_json_member_is_a_warning_not_a_crash(tmp_path):
    members = standard_members()
    members["info.json"] = b"{not json"
    members["hlo_stats.json"] = b"[" * 100_000  # nesting deep enough to exhaust the parser's recursion
    members["sg00/def.json"] = b'["a list, not an object"]'
    report = neff_json(write_neff(tmp_path, members=members))
    assert report["compiler_version"] is None and report["codename"] == "cayman"
    assert any("info.json" in w and "not valid JSON" in w for w in report["warnings"])
    assert any("hlo_stats.json" in w for w in report["warnings"]) and report["hlo_stats"] == {}
    assert report["per_subgraph"]["sg00"]["dma_queues"] == {} and report["per_subgraph"]["sg01"]["dma_queues"]


def test_trailing_bytes_after_payload_are_ignored_with_a_warning(tmp_path):
    report = neff_json(write_neff(tmp_path, trailing=b"\0" * 100))
    assert report["hash_ok"] is True and report["subgraphs"] == ["sg00", "sg01"]
    assert any("100 bytes after the declared payload" in w for w in report["warnings"])


# ---------------------------------------------------------------- not a NEFF: one line, exit 2


def broken_inputs(folder: Path) -> dict[str, tuple[Path, str]]:
    good = neff_bytes(tar_payload(standard_members()))
    cases = {
        "text file": (b"hello\n" * 400, "not a NEFF"),
        "truncated header": (good[:500], "shorter than the 1024-byte header"),
        "payload cut short": (good[:-300], "truncated NEFF"),
        "neither gzip nor tar": (good[:1024] + b"\0" * (len(good) - 1024), "neither gzip nor tar"),
        "broken gzip": (good[:1040] + b"\xff" * (len(good) - 1040), "not a readable tar archive"),
    }
    paths = {}
    for name, (data, message) in cases.items():
        path = folder / (name.replace(" ", "_") + ".neff")
        path.write_bytes(data)
        paths[name] = (path, message)
    return paths


@pytest.mark.parametrize("case", ["text file", "truncated header", "payload cut short", "neither gzip nor tar", "broken gzip"])
def test_files_that_are_not_readable_neffs_exit_2_with_one_line(tmp_path, case):
    path, message = broken_inputs(tmp_path)[case]
    code, out, err = cli("neff", path)
    assert out == ""
    assert_clean_error(code, err, message)


def test_missing_file_and_unknown_format_exit_2(tmp_path):
    assert cli("neff", tmp_path / "absent.neff")[0] == 2
    code, _, err = cli("neff", write_neff(tmp_path), "--format", "yaml")
    assert code == 2 and "unknown format" in err


# ---------------------------------------------------------------- device check (seed 002)


def test_device_trn1_flags_a_neff_built_for_a_newer_neuroncore(tmp_path):
    path = write_neff(tmp_path)
    report = neff_json(path, "--device", "trn1")
    assert report["device_check"]["newer_than_device"] is True
    assert report["device_check"]["neff_core"] == "NeuronCore-v3" and report["device_check"]["device_core"] == "NeuronCore-v2"
    code, out, _ = cli("neff", path, "--device", "trn1.2xlarge")
    assert code == 0 and "built for NeuronCore-v3" in out and "trn1.2xlarge has NeuronCore-v2" in out


def test_device_of_the_same_generation_is_not_flagged_and_unknown_device_is_an_input_error(tmp_path):
    path = write_neff(tmp_path)
    assert neff_json(path, "--device", "trn2")["device_check"]["newer_than_device"] is False
    code, _, err = cli("neff", path, "--device", "tpu-v4")
    assert code == 2 and "unknown device 'tpu-v4'" in err


def test_without_kelf_subgraphs_come_from_def_json_and_lnc_2_still_means_neuroncore_v3(tmp_path):
    members = standard_members()
    del members["kelf-0.json"]
    report = neff_json(write_neff(tmp_path, members=members), "--device", "trn1")
    assert report["subgraphs"] == ["sg00", "sg01"] and report["codename"] is None and report["target"] is None
    assert report["device_check"]["newer_than_device"] is True and "lnc_size 2" in report["device_check"]["note"]
    one_core = write_neff(tmp_path, "lnc1.neff", members=members, lnc_size=1)
    assert neff_json(one_core, "--device", "trn1")["device_check"]["newer_than_device"] is None


def test_facts_for_gives_flat_neff_facts(tmp_path):
    facts = facts_for(write_neff(tmp_path), None, "inf2")
    assert facts["neff.target"] == "trn2" and facts["neff.codename"] == "cayman"
    assert facts["neff.newer_than_device"] is True and facts["neff.lnc_size"] == 2
    assert facts["neff.hash_ok"] is True and facts["neff.activation_sets_max"] == 2 and facts["neff.spill_variables"] == 4
    assert "neff.newer_than_device" not in facts_for(write_neff(tmp_path, "b.neff"), None, None)


# ---------------------------------------------------------------- diff


def test_diff_names_compiler_target_feature_and_subgraph_changes(tmp_path):
    a = write_neff(tmp_path, "a.neff")
    b = write_neff(tmp_path, "b.neff", members=standard_members(codename="sunda", version="2.98.0.0", subgraphs=("sg00",),
                                                                 activation_sets=("exp_and_others",)),
                   feature_bits=0x1000, lnc_size=1)
    code, out, _ = cli("neff", "diff", a, b, "--format", "json")
    changes = {c["key"]: (c["a"], c["b"]) for c in json.loads(out)["changes"]}
    assert code == 0
    assert changes["compiler_version"] == ("2.99.1.0+abcdef12", "2.98.0.0")
    assert changes["target"] == ("trn2", "trn1") and changes["codename"] == ("cayman", "sunda")
    assert changes["lnc_size"] == (2, 1) and changes["feature_bits"] == ("0x209c00", "0x1000")
    assert changes["subgraphs"] == (["sg00", "sg01"], ["sg00"])
    assert changes["per_subgraph.sg01"][1] is None  # a whole subgraph is one change, not one per field
    assert changes["activation_sets.sg00"] == (["exp_and_others", "gelu_and_others"], ["exp_and_others"])
    assert "per_subgraph.sg00.activation_sets" not in changes  # reported once, under activation_sets
    assert "header.uuid" not in changes and "path" not in changes
    code, out, _ = cli("neff", "diff", a, a)
    assert code == 0 and "no differences" in out


# ---------------------------------------------------------------- extraction


def test_nothing_is_written_without_extract(tmp_path):
    path = write_neff(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    cli("neff", path)
    assert sorted(tmp_path.rglob("*")) == before


def test_extract_writes_the_members_into_the_target(tmp_path):
    members = standard_members()
    link = tarfile.TarInfo("sg00/alias.json")  # a link that stays inside is fine
    link.type, link.linkname = tarfile.SYMTYPE, "def.json"
    report = neff_json(write_neff(tmp_path, members=members, extra=[link]), "--extract", tmp_path / "out")
    out = tmp_path / "out"
    assert report["extracted_to"] == str(out.resolve())
    assert json.loads((out / "info.json").read_text())["tool_version"] == "2.99.1.0+abcdef12"
    assert (out / "sg01" / "PE.bin").stat().st_size == 768
    assert (out / "sg00" / "alias.json").is_symlink() and json.loads((out / "sg00" / "alias.json").read_text())["pe"] == "PE.json"


def test_extract_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    code, _, err = cli("neff", write_neff(tmp_path), "--extract", tmp_path / "out")
    assert code == 2 and "not empty" in err and sorted(p.name for p in (tmp_path / "out").iterdir()) == ["keep.txt"]


def hostile_member(kind: str) -> tarfile.TarInfo:
    specs = {
        "absolute path": ("/tmp/nforensics-evil.txt", tarfile.REGTYPE, ""),
        "dot-dot path": ("../evil.txt", tarfile.REGTYPE, ""),
        "dot-dot inside a folder": ("sg00/../../evil.txt", tarfile.REGTYPE, ""),
        "symlink to an absolute path": ("sg00/passwd", tarfile.SYMTYPE, "/etc/passwd"),
        "symlink climbing out": ("sg00/up", tarfile.SYMTYPE, "../../outside"),
        "hard link outside": ("sg00/hard", tarfile.LNKTYPE, "../outside.txt"),
        "character device": ("sg00/tty", tarfile.CHRTYPE, ""),
        "fifo": ("sg00/pipe", tarfile.FIFOTYPE, ""),
    }
    name, kind_type, link = specs[kind]
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind_type, link
    info.size = 12 if kind_type == tarfile.REGTYPE else 0
    return info


HOSTILE = ["absolute path", "dot-dot path", "dot-dot inside a folder", "symlink to an absolute path",
           "symlink climbing out", "hard link outside", "character device", "fifo"]
EXPECTED_REASON = {"absolute path": "absolute path", "dot-dot path": "'..'", "dot-dot inside a folder": "'..'",
                   "symlink to an absolute path": "link pointing outside", "symlink climbing out": "link pointing outside",
                   "hard link outside": "link pointing outside", "character device": "device file",
                   "fifo": "device file or FIFO"}


@pytest.mark.parametrize("kind", HOSTILE)
def test_extract_refuses_hostile_members_and_writes_nothing(tmp_path, kind):
    work = tmp_path / "work"
    work.mkdir()
    member = hostile_member(kind)
    # The hostile member comes last: refusing must happen before anything else is written.
    path = write_neff(work, extra=[member])
    target = work / "deep" / "out"
    before = sorted(tmp_path.rglob("*"))
    code, out, err = cli("neff", path, "--extract", target)
    assert out == "" and EXPECTED_REASON[kind] in err
    assert_clean_error(code, err, member.name)
    assert sorted(tmp_path.rglob("*")) == before  # nothing in the target, nothing beside it
    assert not Path("/tmp/nforensics-evil.txt").exists()


@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_members_are_warnings_when_only_reading(tmp_path, kind):
    report = neff_json(write_neff(tmp_path, extra=[hostile_member(kind)]))
    assert report["subgraphs"] == ["sg00", "sg01"]
    assert any(EXPECTED_REASON[kind] in w for w in report["warnings"])


def test_member_count_bomb_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(neff_payload, "MAX_MEMBERS", 10)
    path = write_neff(tmp_path, members={f"f{i}.bin": b"x" for i in range(11)})
    for extra_args in ([], ["--extract", tmp_path / "out"]):
        code, _, err = cli("neff", path, *extra_args)
        assert code == 2 and "more than 10 tar members" in err
    assert not (tmp_path / "out").exists()


def test_total_size_bomb_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(neff_payload, "MAX_UNPACKED_BYTES", 4096)
    path = write_neff(tmp_path, members={"a.bin": bytes(3000), "b.bin": bytes(3000)})
    code, _, err = cli("neff", path, "--extract", tmp_path / "out")
    assert code == 2 and "more than 4096 bytes" in err
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- the real compiler's NEFFs (read in place)


@needs_real_neffs
@pytest.mark.parametrize("path", [REAL_SMALL, REAL_LARGE], ids=["small", "large"])
def test_real_neff_acceptance_facts(path):
    report = neff_json(path)
    assert report["compiler_version"] == "2.23.6484.0+3b612583"
    assert (report["codename"], report["target"], report["lnc_size"]) == ("cayman", "trn2", 2)
    assert report["subgraphs"] == ["sg00", "sg01"]
    assert report["hash_ok"] is True and report["hash_order"] == "word-swapped"
    assert report["members"] == 72 and report["activation_sets"]["sg00"] == ["exp_and_others"]
    assert {t["name"] for t in report["io"]} == {"x", "y", "output0"}


@needs_real_neffs
def test_real_neffs_diff_and_device_check(tmp_path):
    code, out, _ = cli("neff", "diff", REAL_SMALL, REAL_LARGE, "--format", "json")
    changes = {c["key"]: (c["a"], c["b"]) for c in json.loads(out)["changes"]}
    assert changes["per_subgraph.sg00.spill_variables"] == (0, 16)
    assert changes["feature_bits"] == ("0x209c00", "0x201c00")
    assert "compiler_version" not in changes
    assert facts_for(REAL_SMALL, None, "trn1")["neff.newer_than_device"] is True
    report = neff_json(REAL_SMALL, "--extract", tmp_path / "x")
    assert len([p for p in (tmp_path / "x").rglob("*") if p.is_file()]) == 72
    assert report["extracted_to"] == str((tmp_path / "x").resolve())
