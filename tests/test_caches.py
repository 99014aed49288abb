"""No code execution from caches (issue 12): nothing is unpickled, the knowledge cache lives in a private
folder the user owns (else it is not used), the grammars' tables ship prebuilt, and `explain` answers the
same with no cache folder at all."""

from __future__ import annotations

import json
import os
import pickle
import stat
import subprocess
import sys

import pytest

from conftest import REPO, SEED000, run_cli_text


class _Payload:
    """What a planted pickle would run on load: it creates a marker file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _plant(folder, marker) -> None:
    """Pickle payloads under every name an earlier nforensics or lark's cache would read."""
    payload = pickle.dumps(_Payload(str(marker)))
    for name in ("signatures", "families", "packs", "table-releases", "table-templates", "template-holders",
                 "template-index"):
        for suffix in (".pickle", ".json"):
            (folder / f"{name}-planted{suffix}").write_bytes(payload)


def _explain(tmp_path, cache, **env) -> subprocess.CompletedProcess:
    return run_cli_text("explain", SEED000, "--format", "json",
                        env={"NFORENSICS_CACHE_DIR": str(cache), "TMPDIR": str(tmp_path / "tmp"), **env})


def test_cache_is_private_json_and_temp_folder_untouched(tmp_path):
    (tmp_path / "tmp").mkdir()
    cache = tmp_path / "cache"
    first = _explain(tmp_path, cache)
    second = _explain(tmp_path, cache)
    assert first.returncode == second.returncode == 1 and first.stdout == second.stdout and not second.stderr
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    files = list(cache.glob("*.json"))
    assert files and not list(cache.glob("*.pickle"))
    for f in files:
        json.loads(f.read_text())  # plain JSON: nothing in it can run
        assert stat.S_IMODE(f.stat().st_mode) & 0o077 == 0
    assert list((tmp_path / "tmp").iterdir()) == []  # no parser tables (or anything) in the shared temp folder


def test_a_folder_others_can_write_is_refused(tmp_path):
    (tmp_path / "tmp").mkdir()
    cache = tmp_path / "cache"
    cache.mkdir()
    marker = tmp_path / "pwned"
    _plant(cache, marker)
    os.chmod(cache, 0o777)
    clean = _explain(tmp_path, tmp_path / "clean")
    shared = _explain(tmp_path, cache)
    assert shared.returncode == clean.returncode == 1 and shared.stdout == clean.stdout and not shared.stderr
    assert not marker.exists()
    assert [p.name for p in cache.glob("*.json") if "planted" not in p.name] == []  # nothing written either


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_another_users_folder_is_refused(tmp_path):
    (tmp_path / "tmp").mkdir()
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    os.chown(cache, 65534, 65534)
    result = _explain(tmp_path, cache)
    assert result.returncode == 1 and not result.stderr
    assert list(cache.glob("*.json")) == []  # neither read nor written


def test_symlinked_or_foreign_files_are_not_read(tmp_path):
    """A planted file in the user's own folder (say from before it was made private) is a cache miss,
    never code: the cache is JSON, rebuilt from an allow-list of types."""
    from nforensics.knowledge import disk_cache

    cache = tmp_path / "cache"
    marker = tmp_path / "pwned"
    os.environ["NFORENSICS_CACHE_DIR"] = str(cache)
    try:
        assert disk_cache.remember("probe", ["a"], lambda: ("x", 1)) == ("x", 1)
        (target,) = cache.glob("probe-*.json")
        target.write_bytes(pickle.dumps(_Payload(str(marker))))
        assert disk_cache.remember("probe", ["a"], lambda: ("y", 2)) == ("y", 2)
        target.write_text(json.dumps({"__model__": "os.system", "fields": {}, "set": []}))
        assert disk_cache.remember("probe", ["a"], lambda: ("z", 3)) == ("z", 3)
        elsewhere = tmp_path / "elsewhere.json"
        elsewhere.write_text(json.dumps({"__tuple__": ["planted", 0]}))
        target.unlink()
        target.symlink_to(elsewhere)
        assert disk_cache.remember("probe", ["a"], lambda: ("w", 4)) == ("w", 4)
        assert disk_cache.remember("probe", ["a"], lambda: ("v", 5)) == ("w", 4)  # its own file: a hit
        os.chmod(cache, 0o775)  # a group could have written it since: not trusted any more
        assert disk_cache.remember("probe", ["a"], lambda: ("u", 6)) == ("u", 6)
        os.chmod(cache, 0o755)  # as earlier versions created it: readable only, tightened and used
        assert disk_cache.remember("probe", ["a"], lambda: ("t", 7)) == ("w", 4)
        assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    finally:
        del os.environ["NFORENSICS_CACHE_DIR"]
    assert not marker.exists()


def test_explain_works_without_any_writable_cache_or_temp_folder(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    reference = _explain(tmp_path, tmp_path / "cache")
    nowhere = str(blocker / "sub")
    result = run_cli_text("explain", SEED000, "--format", "json",
                          env={"NFORENSICS_CACHE_DIR": nowhere, "XDG_CACHE_HOME": nowhere, "HOME": nowhere,
                               "TMPDIR": nowhere, "TEMP": nowhere, "TMP": nowhere})
    assert result.returncode == reference.returncode == 1
    assert result.stdout == reference.stdout and result.stderr == ""
    empty = run_cli_text("explain", "-", input="nothing to see here\n", env={"NFORENSICS_CACHE_DIR": nowhere})
    assert empty.returncode == 0 and empty.stderr == ""


def test_parse_tables_ship_prebuilt_and_current():
    """grammars/*.lark changed without `python tools/build_parse_tables.py`: the tables are stale (start-up
    would still work, building them, but slower)."""
    result = subprocess.run([sys.executable, str(REPO / "tools/build_parse_tables.py"), "--check"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    from nforensics.parse import grammars

    for path in sorted(grammars.grammar_dir().glob("*.lark")):
        assert grammars.prebuilt(path.stem, path.read_text(encoding="utf-8")) is not None, path.stem
    source = (REPO / "nforensics/parse/grammars.py").read_text()
    assert "cache=True)" not in source and "import pickle" not in source
