"""`explain` on a read-only install (issue 14): the same output with the cache home, the temp folder, the
home folder and site-packages read-only; a read-only home falls back to a private folder in the temp folder;
writing a cache file prunes the stale ones of its kind."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from conftest import REPO, SEED000, run_cli_text

_FORMATS = (("--format", "json"), ("--format", "text"))


def _clean_env(**env: str) -> dict[str, str]:
    """The environment of a run whose cache location comes only from `env` (no NFORENSICS_CACHE_DIR)."""
    base = {k: v for k, v in os.environ.items() if k not in ("NFORENSICS_CACHE_DIR", "XDG_CACHE_HOME")}
    return {**base, "PYTHONPATH": str(REPO), **env}


def _explain(env: dict[str, str], *fmt: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nforensics", "explain", str(SEED000), *fmt],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=120)


def _references(tmp_path: Path) -> dict[tuple[str, ...], subprocess.CompletedProcess]:
    cache = str(tmp_path / "reference-cache")
    return {fmt: run_cli_text("explain", SEED000, *fmt, env={"NFORENSICS_CACHE_DIR": cache}) for fmt in _FORMATS}


def test_read_only_cache_home_and_temp_folder_give_the_same_output(tmp_path):
    references = _references(tmp_path)
    home, temp = tmp_path / "home", tmp_path / "tmp"
    for folder in (home, temp, home / ".cache"):
        folder.mkdir()
    for folder in (home / ".cache", home, temp):
        os.chmod(folder, 0o555)  # root may still write: the next test makes them read-only for anyone
    env = _clean_env(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), TMPDIR=str(temp))
    try:
        for fmt, reference in references.items():
            result = _explain(env, *fmt)
            assert (result.returncode, result.stdout, result.stderr) == (reference.returncode, reference.stdout, "")
        if os.geteuid() != 0:
            assert list(home.rglob("*")) == [home / ".cache"]
            assert not any(temp.iterdir())
    finally:
        for folder in (home, home / ".cache", temp):
            os.chmod(folder, 0o755)


def _can_mount_read_only(tmp_path: Path) -> bool:
    if not shutil.which("unshare"):
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    result = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount --bind -o ro {probe} {probe} && ! touch {probe}/x"],
                            capture_output=True, timeout=30)
    return result.returncode == 0


def test_explain_with_site_packages_home_and_temp_mounted_read_only(tmp_path):
    """The real thing: a mount namespace where site-packages, this checkout, the home folder and the temp
    folder are read-only file systems (for root too)."""
    if not _can_mount_read_only(tmp_path):
        pytest.skip("no unprivileged mount namespace here (unshare -rm)")
    references = _references(tmp_path)
    home, temp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temp.mkdir()
    read_only = [sysconfig.get_paths()["purelib"], str(REPO), str(home), str(temp)]
    mounts = " && ".join(f"mount --bind -o ro '{path}' '{path}'" for path in read_only)
    env = _clean_env(HOME=str(home), TMPDIR=str(temp), PYTHONDONTWRITEBYTECODE="1")
    for fmt, reference in references.items():
        command = f"{mounts} && exec '{sys.executable}' -m nforensics explain '{SEED000}' {' '.join(fmt)}"
        result = subprocess.run(["unshare", "-rm", "sh", "-c", command], capture_output=True, text=True, cwd=REPO,
                                env=env, timeout=120)
        assert (result.returncode, result.stdout, result.stderr) == (reference.returncode, reference.stdout, "")


def test_a_read_only_home_caches_in_a_private_folder_of_the_temp_folder(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = _clean_env(HOME=str(blocker / "home"), XDG_CACHE_HOME=str(blocker / "cache"), TMPDIR=str(temp))
    first, second = _explain(env, "--format", "json"), _explain(env, "--format", "json")
    assert first.returncode == second.returncode == 1 and first.stdout == second.stdout and not second.stderr
    folder = temp / f"nforensics-{os.getuid()}"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert list(folder.glob("signatures-*.json")) and [p.name for p in temp.iterdir()] == [folder.name]


def test_writing_a_cache_file_prunes_the_ones_unused_for_a_week(tmp_path, monkeypatch):
    from nforensics.knowledge import disk_cache

    cache = tmp_path / "cache"
    monkeypatch.setenv("NFORENSICS_CACHE_DIR", str(cache))
    assert disk_cache.remember("probe", ["used"], lambda: 1) == 1
    (used,) = cache.glob("probe-*.json")
    weeks_ago, hours_ago = time.time() - 2 * disk_cache.STALE_AFTER, time.time() - 7200
    stale, recent, other_kind = cache / "probe-stale.json", cache / "probe-recent.json", cache / "cases-stale.sqlite"
    leftover, in_progress = cache / ".probe-x.json.abc.tmp", cache / ".probe-y.json.def.tmp"
    for path, when in ((stale, weeks_ago), (recent, hours_ago), (other_kind, weeks_ago), (leftover, hours_ago),
                       (in_progress, time.time()), (used, weeks_ago)):
        if path != used:
            path.write_text("1")
        os.utime(path, (when, when))
    foreign = tmp_path / "elsewhere.json"
    foreign.write_text("")
    os.utime(foreign, (weeks_ago, weeks_ago))
    (cache / "probe-link.json").symlink_to(foreign)

    assert disk_cache.remember("probe", ["used"], lambda: 2) == 1  # a hit: the file counts as used again
    assert disk_cache.remember("probe", ["new"], lambda: 3) == 3  # a write prunes
    assert not stale.exists() and not other_kind.exists() and not leftover.exists()
    assert used.exists() and recent.exists() and in_progress.exists()
    assert (cache / "probe-link.json").is_symlink() and foreign.exists()  # not ours to remove
    assert disk_cache.remember("probe", ["new"], lambda: 4) == 3


def test_of_each_kind_only_the_most_recently_used_few_are_kept(tmp_path, monkeypatch):
    from nforensics.knowledge import disk_cache

    cache = tmp_path / "cache"
    monkeypatch.setenv("NFORENSICS_CACHE_DIR", str(cache))
    keys = [f"edit-{n}" for n in range(disk_cache.KEEP_PER_KIND + 3)]
    for age, key in enumerate(reversed(keys)):  # the last key written is the most recently used
        disk_cache.remember("probe", [key], lambda: 1)
        for path in cache.glob("probe-*.json"):
            if os.stat(path).st_mtime > time.time() - 60 * age:
                os.utime(path, (time.time() - 60 * (age + 1),) * 2)
    disk_cache.remember("other", ["x"], lambda: 1)
    disk_cache.remember("probe", ["latest"], lambda: 1)  # a write prunes
    assert len(list(cache.glob("probe-*.json"))) == disk_cache.KEEP_PER_KIND
    assert len(list(cache.glob("other-*.json"))) == 1  # another kind keeps its own
    assert disk_cache.remember("probe", ["latest"], lambda: 2) == 1  # the newest survived


def test_the_signature_pack_stamp_does_not_change_with_the_working_folder(tmp_path, monkeypatch):
    from nforensics import knowledge

    monkeypatch.setenv("NFORENSICS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # `python -m nforensics` puts the working folder first
    knowledge.installed_packs.cache_clear()
    knowledge.installed_packs()
    (tmp_path / "run.log").write_text("a log written where the user works\n")
    os.utime(tmp_path, (time.time() + 5,) * 2)
    knowledge.installed_packs.cache_clear()
    knowledge.installed_packs()
    knowledge.installed_packs.cache_clear()
    assert len(list((tmp_path / "cache").glob("packs-*.json"))) == 1
