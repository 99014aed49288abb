"""`nforensics cache`: entries of a compile cache built here, their state, flags, links, and failed logs explained."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from conftest import cli
from fakes.neff import neff_bytes, standard_members, tar_payload

from nforensics.artifacts.cache import DEFAULT_CACHE, cache_root

VERSION = "neuronxcc-2.23.6484.0+3b612583"
DONE = "MODULE_7c055c4ac6e2851a63bb+7d89256e"
FAILED = "MODULE_198775565831884870+d41d8cd9"
INCOMPLETE = "MODULE_0123456789abcdef0123+d41d8cd9"
TWO_DAYS = 2 * 86400

# What neuronx-cc printed for seed 000; a failed entry keeps it in model.log and replays it later.
FAILED_LOG = """\
2026-03-01 10:00:00.000123: INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: neuronx-cc compile --target=trn2
[INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers to have name
LocalSendRecv-0_476_sr_cb_begin, but core barrier 6 in subgraph 0
on core 1 has name LocalSendRecv-0_176_sr_cb_begin
"""


def make_cache(root: Path) -> Path:
    done = root / VERSION / DONE
    done.mkdir(parents=True)
    (done / "model.neff").write_bytes(neff_bytes(tar_payload(standard_members())))
    (done / "model.hlo_module.pb").write_bytes(b"\x08\x01hlo")
    (done / "compile_flags.json").write_text(json.dumps(["--target=trn2", "--lnc=2", "-O1"]))
    (done / "model.done").write_text("")
    failed = root / VERSION / FAILED
    failed.mkdir()
    (failed / "model.hlo.pb").write_bytes(b"\x08\x01hlo")
    (failed / "compile_flags.json").write_text(json.dumps("--target=trn2 --model-type transformer"))
    (failed / "model.log").write_text(FAILED_LOG)
    incomplete = root / "neuronxcc-2.24.5133.0" / INCOMPLETE
    incomplete.mkdir(parents=True)
    (incomplete / "model.hlo_module.pb").write_bytes(b"\x08\x01hlo")
    (root / "not-a-version").mkdir()
    (root / VERSION / "scratch").mkdir()
    old = time.time() - TWO_DAYS
    for path in root.rglob("*"):
        os.utime(path, (old, old))
    return root


def snapshot(root: Path) -> list[tuple[str, int, float]]:
    return sorted((str(p), p.stat().st_size, p.stat().st_mtime) for p in root.rglob("*"))


def cache_json(*args) -> dict:
    code, out, err = cli("cache", *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_entries_with_state_flags_links_and_age(tmp_path):
    root = make_cache(tmp_path / "cache")
    before = snapshot(root)
    report = cache_json(root)
    entries = {e["module"]: e for e in report["entries"]}
    assert report["counts"] == {"done": 1, "failed": 1, "incomplete": 1}
    done = entries[DONE]
    assert (done["compiler_version"], done["compiler_build"]) == ("2.23.6484.0", "3b612583")
    assert (done["graph_hash"], done["flags_hash"]) == ("7c055c4ac6e2851a63bb", "7d89256e")
    assert done["state"] == "done" and done["flags"] == ["--target=trn2", "--lnc=2", "-O1"]
    assert done["neff"].endswith(f"{DONE}/model.neff") and done["hlo"].endswith(f"{DONE}/model.hlo_module.pb")
    assert (done["neff_lnc_size"], done["neff_feature_bits"]) == (2, "0x209c00")
    assert abs(done["age_seconds"] - TWO_DAYS) < 600 and done["size_bytes"] == sum(done["files"].values())
    failed = entries[FAILED]
    assert failed["state"] == "failed" and failed["graph_hash"] == "198775565831884870"
    assert failed["flags"] == ["--target=trn2", "--model-type", "transformer"]
    assert failed["hlo"].endswith("model.hlo.pb") and failed["neff"] is None
    assert failed["error"] == "[INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers to have name"
    assert entries[INCOMPLETE]["state"] == "incomplete" and entries[INCOMPLETE]["compiler_build"] is None
    assert sorted(report["ignored"]) == [f"{VERSION}/scratch", "not-a-version"]
    assert snapshot(root) == before  # read-only


def test_text_table_lists_every_entry(tmp_path):
    code, out, _ = cli("cache", make_cache(tmp_path / "cache"))
    assert code == 0
    assert "1 done, 1 failed, 1 incomplete" in out
    for module in (DONE, FAILED, INCOMPLETE):
        assert module in out
    assert "2d" in out and "--target=trn2" in out


def test_failed_lists_only_failed_entries_with_the_explanation_of_their_log(tmp_path):
    root = make_cache(tmp_path / "cache")
    report = cache_json(root, "--failed")
    assert [e["module"] for e in report["entries"]] == [FAILED]
    findings = report["entries"][0]["diagnosis"]["findings"]
    assert findings and findings[0]["code"] == "NCC_IXLV002"
    code, out, _ = cli("cache", root, "--failed")
    assert code == 0 and FAILED in out and DONE not in out
    assert "NCC_IXLV002" in out and "core barrier" in out.lower()


def test_cache_location_flag_wins_over_url_then_default(tmp_path):
    flags_dir, url_dir = tmp_path / "from-flags", tmp_path / "from-url"
    env = {"NEURON_CC_FLAGS": f"-O1 --cache_dir={flags_dir} --retry_failed_compilation",
           "NEURON_COMPILE_CACHE_URL": str(url_dir)}
    assert cache_root(None, env) == (flags_dir, "NEURON_CC_FLAGS --cache_dir")
    assert cache_root(None, {"NEURON_CC_FLAGS": f"--cache_dir {flags_dir}"})[0] == flags_dir
    assert cache_root(None, {"NEURON_COMPILE_CACHE_URL": f"file://{url_dir}"}) == (url_dir, "NEURON_COMPILE_CACHE_URL")
    assert cache_root(None, {}) == (DEFAULT_CACHE, "default")
    assert cache_root(tmp_path, env) == (tmp_path, "argument")


def test_cache_from_the_environment_variable(tmp_path, monkeypatch):
    root = make_cache(tmp_path / "cache")
    monkeypatch.delenv("NEURON_CC_FLAGS", raising=False)
    monkeypatch.setenv("NEURON_COMPILE_CACHE_URL", str(root))
    report = cache_json()
    assert report["root"] == str(root) and report["root_from"] == "NEURON_COMPILE_CACHE_URL"
    assert len(report["entries"]) == 3


def test_remote_or_missing_cache_is_an_input_error(tmp_path, monkeypatch):
    monkeypatch.delenv("NEURON_CC_FLAGS", raising=False)
    monkeypatch.setenv("NEURON_COMPILE_CACHE_URL", "s3://bucket/neuron-cache")
    code, out, err = cli("cache")
    assert code == 2 and out == "" and "remote cache (s3://bucket/neuron-cache)" in err
    code, _, err = cli("cache", tmp_path / "nowhere")
    assert code == 2 and "no compile cache here" in err
