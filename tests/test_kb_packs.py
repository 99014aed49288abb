"""Teams' own signature packs: `--kb DIR` and installed packs (entry point group nforensics.signatures).

The packs are synthetic, written by each test: a good one must be listed, printed and diagnosed; a bad one
must stop the CLI with one line naming the file and the field, never a traceback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import REPO, assert_clean_error, run_cli, run_cli_text


PACK_SIGNATURE = """
id = "team-widget-overflow"
code = "TEAM_EWID001"
title = "Widget buffer overflow in the team's custom op"
component = "framework"
sample_log = "team_widget_overflow.log"
summary = "The custom widget op ran past its buffer."
meaning = "Our widget op sizes its buffer from the first batch only."

[match]
codes = ["TEAM_EWID001"]
patterns = ['widget buffer overflow at slot \\d+']

[[extract]]
pattern = 'overflow at slot (?P<slot>\\d+)'

[fields]
slot = "int"

[[hypotheses]]
id = "batch-grew"
title = "A later batch is larger than the first"
prior = 0.6

[[workarounds]]
title = "Pad every batch to the largest size"
code = "pad_to(max_batch)"
language = "python"

[[references]]
title = "Team runbook"
url = "https://example.invalid/runbook"
"""
LOG = "2024-05-01 10:00:00 ERROR [widget] widget buffer overflow at slot 17\n"


def write_pack(folder: Path, text: str = PACK_SIGNATURE, name: str = "team-widget-overflow.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_kb_pack_is_listed_printed_and_diagnosed(tmp_path):
    pack = write_pack(tmp_path / "pack")
    listed = run_cli_text("codes", "--kb", str(pack), "--prefix", "TEAM_", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    assert [r["id"] for r in json.loads(listed.stdout)] == ["team-widget-overflow"]
    entry = run_cli_text("codes", "--kb", str(pack), "team_ewid001")
    assert entry.returncode == 0 and "# TEAM_EWID001: Widget buffer overflow" in entry.stdout
    assert "pad_to(max_batch)" in entry.stdout
    log = tmp_path / "job.log"
    log.write_text(LOG)
    explained = run_cli_text("explain", "--kb", str(pack), str(log), "--format", "json")
    assert explained.returncode == 1, explained.stderr
    finding = json.loads(explained.stdout)["findings"][0]
    assert (finding["signature"], finding["fields"], finding["generic"]) == ("team-widget-overflow", {"slot": 17}, False)


def test_a_pack_template_edited_between_runs_is_matched_as_edited(tmp_path):
    # Which templates a line's words may reach is kept in the disk cache; an edited template must not be
    # matched through the index of the one it replaced (the same cache folder, the same pack file).
    def pack_with(template: str) -> Path:
        text = PACK_SIGNATURE.replace('patterns = [', f'templates = ["{template}"]\npatterns = [', 1)
        return write_pack(tmp_path / "pack", text)

    # Whole sentences: a last line cut short would be compared with every template, held or not.
    old = "gizmo ledger rejected the quarterly manifest from upstream relay."
    new = "sprocket registry dropped the nightly snapshot during warehouse sync."
    env = {"NFORENSICS_CACHE_DIR": str(tmp_path / "cache")}

    def recognised(pack: Path, message: str) -> bool:
        log = tmp_path / "job.log"
        log.write_text(f"2024-05-01 10:00:00 ERROR [widget] {message}\n")
        result = run_cli_text("explain", "--kb", str(pack), str(log), "--format", "json", env=env)
        return any(f["signature"] == "team-widget-overflow" for f in json.loads(result.stdout)["findings"])

    assert recognised(pack_with(old), old)
    assert recognised(pack_with(new), new) and not recognised(pack_with(new), old)


@pytest.mark.parametrize("before", ["", json.dumps({"name": "stdout", "output_type": "stream", "text": "step 1\nstep 2\n"}) + "\n"])
def test_a_last_line_cut_short_is_matched_by_its_templates_head(tmp_path, before):
    """A paste that stops mid-line is compared with each template's head, also where a line before it
    decoded into several (their numbers differ from the physical count the log was read in)."""
    template = "sprocket registry dropped the nightly snapshot during warehouse sync because the ledger was sealed."
    pack = write_pack(tmp_path / "pack", PACK_SIGNATURE.replace('patterns = [', f'templates = ["{template}"]\npatterns = [', 1))
    log = tmp_path / "job.log"
    log.write_text(before + "2024-05-01 10:00:00 ERROR [widget] sprocket registry dropped the nightly snapshot during warehouse")
    result = run_cli_text("explain", "--kb", str(pack), str(log), "--format", "json")
    assert json.loads(result.stdout)["findings"][0]["signature"] == "team-widget-overflow"


def test_without_the_pack_its_code_is_unknown(tmp_path):
    assert run_cli("codes", "TEAM_EWID001").returncode == 2


def test_bad_pack_names_the_file_and_the_field(tmp_path):
    broken = PACK_SIGNATURE.replace('title = "A later batch is larger than the first"\n', "")
    pack = write_pack(tmp_path / "pack", broken)
    result = run_cli_text("codes", "--kb", str(pack))
    assert result.returncode == 2
    assert result.stderr == (
        f"nforensics: {pack / 'team-widget-overflow.toml'}: field 'hypotheses.0.title': Field required\n"
    )


def test_bad_regex_and_bad_toml_name_the_file(tmp_path):
    pack = write_pack(tmp_path / "regex", PACK_SIGNATURE.replace("slot \\d+", "slot (\\d+"))
    result = run_cli_text("codes", "--kb", str(pack))
    assert_clean_error(result.returncode, result.stderr, "field 'match.patterns'")
    pack = write_pack(tmp_path / "toml", "id = \n")
    result = run_cli_text("explain", "--kb", str(pack), "-", input=b"")
    assert result.returncode == 2 and "team-widget-overflow.toml: not valid TOML" in result.stderr


def test_a_pack_written_for_numbered_priorities_is_told_what_replaced_them(tmp_path):
    numbered = PACK_SIGNATURE.replace("[match]\n", "[match]\npriority = 70\n")
    result = run_cli_text("codes", "--kb", str(write_pack(tmp_path / "pack", numbered)))
    assert_clean_error(result.returncode, result.stderr, "field 'match': Value error, `priority` is gone")
    assert "tier" in result.stderr and "Recognition order" in result.stderr


def test_a_pack_ordered_before_an_unknown_signature_is_an_input_error(tmp_path):
    ahead = PACK_SIGNATURE.replace("[match]\n", '[match]\nbefore = ["no-such-signature"]\n')
    result = run_cli_text("explain", "--kb", str(write_pack(tmp_path / "pack", ahead)), "-", input=LOG)
    assert_clean_error(result.returncode, result.stderr, "'team-widget-overflow': [match].before names ['no-such-signature']")


def test_missing_or_empty_pack_folder_is_an_input_error(tmp_path):
    missing = run_cli_text("codes", "--kb", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "signature pack folder not found" in missing.stderr
    (tmp_path / "empty").mkdir()
    empty = run_cli_text("codes", "--kb", str(tmp_path / "empty"))
    assert empty.returncode == 2 and "no *.toml signature files" in empty.stderr


def _install_fake_distribution(site: Path, entry_point: str) -> None:
    """A distribution as pip would leave it: a *.dist-info with entry_points.txt, no pip needed."""
    info = site / "team_kb-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: team-kb\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[nforensics.signatures]\nteam = {entry_point}\n")


def _env_with(site: Path) -> dict:
    return {"PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}


@pytest.mark.parametrize("entry_point", ["team_kb", "team_kb:signature_dir"])
def test_installed_pack_is_found_through_its_entry_point(tmp_path, entry_point):
    """The entry point names the package holding the TOML files, or a function returning their folder."""
    site = tmp_path / "site"
    write_pack(site / "team_kb" / "signatures")
    (site / "team_kb" / "__init__.py").write_text(
        "from pathlib import Path\n\ndef signature_dir():\n    return Path(__file__).parent / 'signatures'\n")
    if entry_point == "team_kb":
        write_pack(site / "team_kb")
    _install_fake_distribution(site, entry_point)
    result = run_cli_text("codes", "TEAM_EWID001", "--format", "json", env=_env_with(site))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)[0]["id"] == "team-widget-overflow"


def test_broken_entry_point_names_the_entry_point(tmp_path):
    site = tmp_path / "site"
    _install_fake_distribution(site, "team_kb_missing")
    result = run_cli_text("codes", env=_env_with(site))
    assert result.returncode == 2
    assert result.stderr.startswith(
        "nforensics: signature pack entry point 'team = team_kb_missing' (from team-kb): cannot be loaded (ModuleNotFoundError"
    )
