"""`nforensics triage` (issue 18): failure groups across a dated folder tree, checked against a hand-made table.

The tree is built from four logs, each in a role (A..D below), copied into dated folders with a version line
on top (the SDK release follows from it) and the file times set to those dates. One variant takes the logs
from sample_logs (always runs), the other from the real dev corpora in ../shared (skipped without them).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from nforensics.errors import InputError
from nforensics.pipeline import analyze_path
from nforensics.triage import scan as scan_module
from nforensics.triage.command import triage

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs"
CORPUS = ROOT.parent / "shared" / "corpus"

# neuronx-cc versions and the SDK release that ships each (knowledge/releases.toml).
ON_2_20, ON_2_22, ON_2_24, ON_2_32 = "neuronx-cc==2.15.128.0", "neuronx-cc==2.17.194.0", "neuronx-cc==2.19.8089.0", "neuronx-cc==2.27.5334.0"

# (day, role, version line, how it is stored). Role A is seen on 2.22 and 2.24, B on 2.22 only, C on 2.20
# (as explain's JSON), not on 2.22, again on 2.24; D once on 2.24 after the cut-off date.
TREE = [
    ("2024-01-10", "A", ON_2_22, "log"),
    ("2024-01-15", "C", ON_2_20, "json"),
    ("2024-01-20", "B", ON_2_22, "gz"),
    ("2024-02-05", "A", ON_2_24, "log"),
    ("2024-02-06", "C", ON_2_24, "log"),
    ("2024-02-10", "D", ON_2_24, "log"),
]
RUNS = len(TREE) + 1  # and one clean log
# The hand-made table: role -> count, first seen, last seen, SDKs, status --since 2024-02-01, --compare-release 2.22:2.24
EXPECTED = {
    "A": (2, "2024-01-10", "2024-02-05", ["2.22.0", "2.24.0"], "ongoing", "ongoing"),
    "B": (1, "2024-01-20", "2024-01-20", ["2.22.0"], "gone", "gone"),
    "C": (2, "2024-01-15", "2024-02-06", ["2.20.0", "2.24.0"], "ongoing", "regressed"),
    "D": (1, "2024-02-10", "2024-02-10", ["2.24.0"], "new", "new"),
}
SAMPLE_ROLES = {
    "A": SAMPLES / "nrt_exec_bad_input.log", "B": SAMPLES / "nrt_status_queue_full.log",
    "C": SAMPLES / "bir_verification_ap_datatype_int64_compare.log", "D": SAMPLES / "nrt_status_queue_empty.log",
}
CORPUS_ROLES = {
    "A": CORPUS / "dev" / "093_ncc_eoom001_peak_hbm_32gb_exceeds_24gb_trn2.log",
    "B": CORPUS / "dev" / "101_ncc_espp004_f64_dtype_not_supported.log",
    "C": CORPUS / "dev2" / "013_vllm_nxdi_llama32_3b_ten404_too_many_strides.log",
    "D": CORPUS / "dev2" / "007_npc_sd_training_neuronxcc_exit70.log",
}


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command()(triage)
    app.command("unused")(lambda: None)  # two commands, so `triage` is named on the command line as in nforensics
    return app


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(_app(), ["triage", *args])
    if isinstance(result.exception, InputError):
        return 2, str(result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout


def _at(path: Path, day: str) -> None:
    moment = datetime.fromisoformat(day).replace(hour=12, tzinfo=timezone.utc).timestamp()
    os.utime(path, (moment, moment))


def build_tree(root: Path, roles: dict[str, Path]) -> dict[str, str]:
    """The dated tree; returns role -> fingerprint (each role's log has one finding, and they differ)."""
    fingerprints = {}
    for role, log in roles.items():
        findings = analyze_path(str(log)).findings
        assert findings, log
        fingerprints[role] = findings[0].fingerprint
    assert len(set(fingerprints.values())) == len(roles)
    for number, (day, role, version, kind) in enumerate(TREE):
        folder = root / day
        folder.mkdir(parents=True, exist_ok=True)
        text = f"{version}\n" + roles[role].read_text(encoding="utf-8")
        if kind == "json":
            source = folder / f"job{number}.log"
            source.write_text(text, encoding="utf-8")
            path = folder / f"job{number}.json"
            path.write_text(analyze_path(str(source)).model_dump_json(), encoding="utf-8")
            source.unlink()
        elif kind == "gz":
            path = folder / f"job{number}.log.gz"
            path.write_bytes(gzip.compress(text.encode()))
        else:
            path = folder / f"job{number}.log"
            path.write_text(text, encoding="utf-8")
        _at(path, day)
    (root / "2024-02-12").mkdir()
    clean = root / "2024-02-12" / "clean.log"
    clean.write_text("step 1 done\nall good\n", encoding="utf-8")
    _at(clean, "2024-02-12")
    (root / "2024-02-12" / "model.neff").write_bytes(b"NEFF\x00\x01binary")  # skipped, with one line
    return fingerprints


def check_table(groups: list[dict], fingerprints: dict[str, str], comparison: int | None) -> None:
    by_fingerprint = {g["fingerprint"]: g for g in groups}
    for role, (count, first, last, sdks, since_status, release_status) in EXPECTED.items():
        group = by_fingerprint[fingerprints[role]]
        assert (group["count"], group["first_seen"][:10], group["last_seen"][:10], group["sdk_versions"]) == (
            count, first, last, sdks), role
        assert group["share"] == pytest.approx(count / RUNS)
        expected_status = None if comparison is None else (since_status, release_status)[comparison]
        assert group["status"] == expected_status, role


@pytest.fixture(params=["samples", "corpus"])
def tree(request, tmp_path):
    roles = SAMPLE_ROLES if request.param == "samples" else CORPUS_ROLES
    if request.param == "corpus" and not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not here")
    return tmp_path / "logs", build_tree(tmp_path / "logs", roles), tmp_path / "store"


@pytest.mark.parametrize("comparison", [None, 0, 1])
def test_groups_counts_dates_and_labels_match_the_hand_made_table(tree, comparison):
    folder, fingerprints, store = tree
    options = {None: [], 0: ["--since", "2024-02-01"], 1: ["--compare-release", "2.22:2.24"]}[comparison]
    code, out = invoke(str(folder), "--format", "json", "--store", str(store), "--jobs", "1", *options)
    assert code == 0, out
    report = json.loads(out)
    assert (report["runs"], report["files"]) == (RUNS, RUNS + 1)
    assert len(report["skipped"]) == 1 and "model.neff" in report["skipped"][0]
    check_table(report["groups"], fingerprints, comparison)


def test_a_log_timestamp_wins_over_the_file_time(tmp_path):
    log = tmp_path / "compile.log"
    shutil.copy(SAMPLES / "ncc_evrf004_complex_rope.log", log)  # its error line: 2026-08-28T16:58:21Z
    _at(log, "2024-01-01")
    code, out = invoke(str(log), "--format", "json", "--no-store")
    group = json.loads(out)["groups"][0]
    assert group["first_seen"].startswith("2026-08-28T16:58:21")
    assert group["fixed_in"] == "neuronx-cc 2.27.5334.0 (SDK 2.32.0)"


def test_a_second_run_analyses_only_new_files(tmp_path, monkeypatch):
    folder, store = tmp_path / "logs", tmp_path / "store"
    build_tree(folder, SAMPLE_ROLES)
    invoke(str(folder), "--store", str(store), "--jobs", "1")
    analysed = []
    real = scan_module.analyse_file
    monkeypatch.setattr(scan_module, "analyse_file", lambda path, redact=True: analysed.append(path) or real(path, redact))
    for name in ("new1.log", "new2.log"):
        shutil.copy(SAMPLE_ROLES["A"], folder / "2024-02-12" / name)
    code, out = invoke(str(folder), "--store", str(store), "--jobs", "1", "--format", "json")
    assert sorted(Path(p).name for p in analysed) == ["new1.log", "new2.log"]
    report = json.loads(out)
    assert (report["files"], report["analysed"], report["runs"]) == (RUNS + 3, 2, RUNS + 2)


def test_the_process_pool_gives_the_same_table(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    for number in range(40):
        shutil.copy(list(SAMPLE_ROLES.values())[number % 4], folder / f"run{number}.log")
    one = json.loads(invoke(str(folder), "--no-store", "--jobs", "1", "--format", "json")[1])
    two = json.loads(invoke(str(folder), "--no-store", "--jobs", "2", "--format", "json")[1])
    assert one["groups"] == two["groups"] and len(one["groups"]) >= 4


def test_each_format(tmp_path):
    folder = tmp_path / "logs"
    fingerprints = build_tree(folder, SAMPLE_ROLES)
    base = [str(folder), "--no-store", "--jobs", "1"]
    rows = list(csv.DictReader(io.StringIO(invoke(*base, "--format", "csv")[1])))
    assert {fingerprints[r] for r in "ABCD"} <= {row["fingerprint"] for row in rows}
    assert rows[0]["count"].isdigit() and "first_seen" in rows[0]
    markdown = invoke(*base, "--format", "markdown")[1].splitlines()
    assert markdown[0].startswith("| group | count | share |") and markdown[1].startswith("|---|")
    assert sum(line.startswith("| ") for line in markdown) == len(rows) + 1
    table = invoke(*base)[1]
    assert "first seen" in table and f"{RUNS} runs" in table
    parquet = tmp_path / "groups.parquet"
    assert invoke(*base, "--format", "parquet", "--output", str(parquet))[0] == 0
    pandas = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = pandas.read_parquet(parquet)
    assert len(frame) == len(rows) and list(frame.loc[frame.fingerprint == fingerprints["A"], "count"]) == [2]


@pytest.mark.parametrize("args, message", [
    (["/no/such/folder"], "no such file or folder"),
    (["{tree}", "--format", "xml"], "unknown format"),
    (["{tree}", "--format", "parquet"], "--output"),
    (["{tree}", "--since", "someday"], "not a date"),
    (["{tree}", "--compare-release", "2.22"], "OLD:NEW"),
    (["{tree}/2024-02-12/model.neff"], "binary"),
    (["{tree}", "--backend", "slurm"], "unknown --backend 'slurm': use local or ray"),
    (["{tree}", "--address", "auto"], "--address is for --backend ray"),
    (["{tree}", "--plot", "{tree}/trend.gif"], "give a file ending in .png or .svg"),
    (["{tree}", "--plot", "/no/such/folder/trend.png"], "no such folder"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    build_tree(tmp_path / "logs", SAMPLE_ROLES)
    code, out = invoke(*[a.format(tree=tmp_path / "logs") for a in args], "--no-store", "--jobs", "1")
    assert code == 2 and message in out and "\n" not in out


def test_parquet_without_pyarrow_fails_before_any_work(tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a))
    monkeypatch.setattr(scan_module, "scan", lambda *a, **k: pytest.fail("analysed before refusing"))
    code, out = invoke(str(SAMPLES), "--format", "parquet", "-o", str(tmp_path / "x.parquet"))
    assert code == 2 and "pyarrow" in out


def test_triage_without_pandas_says_which_extra_to_install(tmp_path, monkeypatch):
    """pandas is the triage extra, not part of the base install: a base install's triage says so, once."""
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` fails and find_spec finds nothing
    monkeypatch.delitem(sys.modules, "nforensics.triage.frame", raising=False)  # as in a fresh process: not imported yet
    monkeypatch.setattr(scan_module, "scan", lambda *a, **k: pytest.fail("analysed before refusing"))
    code, out = invoke(str(SAMPLES), "--no-store")
    assert code == 2 and "install the triage extra" in out and "\n" not in out


def test_the_ray_backend_without_ray_says_which_extra_to_install_before_any_work(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails and find_spec finds nothing, as on a plain install
    monkeypatch.setattr(scan_module, "scan", lambda *a, **k: pytest.fail("analysed before refusing"))
    code, out = invoke(str(SAMPLES), "--no-store", "--backend", "ray")
    assert (code, out) == (2, "--backend ray needs Ray, which is not installed: install the ray extra (in a checkout of nforensics: pip install '.[ray]')")


def test_explain_does_not_import_pandas():
    script = ("import sys; sys.modules['pandas'] = None\n"  # any import of pandas would fail
              "from nforensics.cli import main\n"
              f"sys.argv = ['nforensics', 'explain', {str(SAMPLES / 'seed000_ncc_ixlv002_sendrecv_twice.log')!r}, '--format', 'json']\n"
              "main()")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and '"findings"' in done.stdout, done.stderr[-500:]
