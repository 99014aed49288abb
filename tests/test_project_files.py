"""The files a package index and a user look for (issue 15): a LICENSE that is the license pyproject.toml
names, and a CHANGELOG that has the version pyproject.toml gives."""

from __future__ import annotations

import sys

from conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
LICENSE_HEADS = {"Apache-2.0": ("Apache License", "Version 2.0, January 2004")}


def test_the_license_file_is_the_license_pyproject_names():
    named = PROJECT["license"]
    spdx = named["text"] if isinstance(named, dict) else named
    text = (REPO / "LICENSE").read_text()
    assert spdx in LICENSE_HEADS, f"no LICENSE check for {spdx!r}"
    head = [line.strip() for line in text.splitlines()[:4] if line.strip()]
    assert head[: len(LICENSE_HEADS[spdx])] == list(LICENSE_HEADS[spdx])
    assert "END OF TERMS AND CONDITIONS" in text


def test_the_changelog_has_this_version_and_does_not_claim_a_release():
    text = (REPO / "CHANGELOG.md").read_text()
    assert f"## {PROJECT['version']} (unreleased)" in text
    assert "install it from this" in text.lower()
