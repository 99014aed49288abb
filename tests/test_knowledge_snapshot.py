"""The built-in catalogue can ship validated (nforensics/knowledge/catalogue.bin, tools/build_knowledge_snapshot.py):
the first run after installing reads each file's model from it instead of validating every signature and family
file. A file it was not built from (edited since) is validated as before, so a stale snapshot costs time only."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import REPO

from nforensics import knowledge
from nforensics.knowledge.disk_cache import encode


@pytest.fixture
def snapshot(tmp_path, monkeypatch):
    """A snapshot of this checkout's catalogue, built as the tool builds it."""
    spec = importlib.util.spec_from_file_location("build_knowledge_snapshot", REPO / "tools/build_knowledge_snapshot.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    target = tmp_path / "catalogue.bin"
    target.write_bytes(tool.render())
    monkeypatch.setattr(knowledge, "SNAPSHOT_FILE", target)
    knowledge._snapshot.cache_clear()
    yield tool
    knowledge._snapshot.cache_clear()


def test_snapshot_gives_what_validating_gives(snapshot):
    assert snapshot.stale() == []
    for folder, model in ((knowledge.BUILTIN_DIR, knowledge.Signature), (knowledge.FAMILIES_DIR, knowledge.Family)):
        paths = sorted(folder.glob("*.toml"))
        shipped = knowledge._shipped(paths, model)
        assert shipped is not None
        values, text = shipped
        validated = [knowledge._load_file(path, model) for path in paths]
        assert values == validated
        assert text == encode(validated) == encode(values)


def test_a_changed_file_is_validated_and_the_rest_read(snapshot, tmp_path):
    folder = tmp_path / "pack"
    folder.mkdir()
    paths = sorted(knowledge.BUILTIN_DIR.glob("*.toml"))[:3]
    for path in paths:
        (folder / path.name).write_bytes(path.read_bytes())
    changed = folder / paths[0].name
    changed.write_text(changed.read_text(encoding="utf-8").replace('title = "', 'title = "Changed: ', 1), encoding="utf-8")
    copies = sorted(folder.glob("*.toml"))
    shipped = knowledge._shipped(copies, knowledge.Signature)
    assert shipped is not None
    assert shipped[0] == [knowledge._load_file(path) for path in copies]
    assert shipped[0][0].title.startswith("Changed: ")


def test_no_snapshot_or_other_models_mean_validating(tmp_path, monkeypatch):
    monkeypatch.setattr(knowledge, "SNAPSHOT_FILE", tmp_path / "missing.bin")
    knowledge._snapshot.cache_clear()
    try:
        assert knowledge._shipped(sorted(knowledge.BUILTIN_DIR.glob("*.toml")), knowledge.Signature) is None
    finally:
        knowledge._snapshot.cache_clear()
