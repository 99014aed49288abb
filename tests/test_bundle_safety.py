"""The bundle cannot be turned against its writer: a log named like a bundle member does not replace it,
and no symbolic link (at the folder, the archive or a member) is written through or archived."""

from __future__ import annotations

import tarfile

import pytest

from conftest import SEED000, cli


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "name, copy",
    [("report.md", "input-report.md"), ("MANIFEST.md", "input-MANIFEST.md"), ("Report.MD", "input-Report.MD"),
     ("env.json", "input-env.json"), (".hidden.log", "hidden.log")],
)
def test_a_log_named_like_a_bundle_member_does_not_replace_it(here, name, copy):
    (here / name).write_text(SEED000.read_text())
    result = cli("report", name, "--bundle", "b")
    assert result.returncode == 0, result.stderr
    folder = here / "b"
    names = sorted(p.name for p in folder.iterdir())
    assert names.count("report.md") == 1 and "MANIFEST.md" in names and "env.json" in names
    assert (folder / "report.md").read_text().startswith("# [Bug]")  # the report, not the log
    assert (folder / "MANIFEST.md").read_text().startswith("# nforensics bundle")
    assert "NCC_IXLV002" in (folder / copy).read_text() and f"`{copy}`" in (folder / "MANIFEST.md").read_text()
    assert not any(n.startswith(".") for n in names)


def test_the_archive_replaces_a_planted_link_instead_of_writing_through_it(here):
    victim = here / "victim.txt"
    victim.write_text("keep me\n")
    (here / "b.tar.gz").symlink_to(victim)
    result = cli("report", str(SEED000), "--bundle", "b")
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "keep me\n"
    archive = here / "b.tar.gz"
    assert not archive.is_symlink() and tarfile.is_tarfile(archive)
    with tarfile.open(archive) as tar:
        assert all(m.isfile() or m.isdir() for m in tar.getmembers())


def test_a_bundle_folder_that_is_a_link_is_refused(here):
    (here / "elsewhere").mkdir()
    (here / "b").symlink_to(here / "elsewhere")
    result = cli("report", str(SEED000), "--bundle", "b")
    assert result.returncode == 2 and "symbolic link" in result.stderr
    assert not any((here / "elsewhere").iterdir())


def test_links_in_the_folder_are_not_archived(here, monkeypatch):
    import nforensics.bundle as bundle

    original = bundle._archive

    def plant_then_archive(folder, archive):
        (folder / "passwd").symlink_to("/etc/passwd")
        original(folder, archive)

    monkeypatch.setattr(bundle, "_archive", plant_then_archive)
    assert cli("report", str(SEED000), "--bundle", "b").returncode == 0
    with tarfile.open(here / "b.tar.gz") as tar:
        assert "b/passwd" not in tar.getnames() and not any(m.issym() for m in tar.getmembers())
