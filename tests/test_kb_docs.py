"""The catalogue is complete and its docs are current: every signature has its sections, sample log and
[test]; docs/signatures/ is what tools/gen_signature_docs.py would write; `nforensics codes` shows it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import REPO, run_cli_text

from nforensics.diagnose.versions import catalogue_fixed_in
from nforensics.knowledge import builtin_kb
from nforensics.knowledge.docs import missing_sections
from nforensics.knowledge.schema import Signature
from nforensics.render.family_docs import family_pages
from nforensics.render.catalogue import docs_pages
from tools.gen_signature_docs import DOCS_DIR, stale_pages

SIGNATURES = builtin_kb().signatures
FIXED_IN = catalogue_fixed_in(SIGNATURES)
GENERATE = [sys.executable, str(REPO / "tools" / "gen_signature_docs.py")]


@pytest.mark.parametrize("signature", SIGNATURES, ids=lambda s: s.id)
def test_signature_documents_every_required_section(signature):
    assert missing_sections(signature) == []


def test_an_incomplete_signature_is_reported(tmp_path):
    bare = Signature(id="team-bare", title="Bare", component="compiler", summary="", meaning="Why.",
                     match={"codes": ["TEAM001"]}, sample_log="team_bare.log", fields={"size": "int"})
    problems = missing_sections(bare, sample_logs=tmp_path)
    assert problems == [
        "summary (what it is) is empty",
        "no [[hypotheses]]",
        "no [[workarounds]]",
        "no [[references]] (link the public source)",
        "sample log sample_logs/team_bare.log is missing",
        "[test.fields] gives none of the extracted [fields]",
    ]


def test_docs_pages_are_current():
    stale = stale_pages(docs_pages(SIGNATURES, FIXED_IN), DOCS_DIR)
    assert not stale, f"docs/signatures is stale ({stale[:5]}...): run python tools/gen_signature_docs.py"


def test_generator_check_fails_on_stale_docs_and_passes_after_writing(tmp_path):
    out, families = tmp_path / "signatures", ["--families-out", str(tmp_path / "families")]

    def stale_report() -> list[str]:
        checked = subprocess.run([*GENERATE, "--check", "--out", str(out), *families], capture_output=True, text=True)
        stale = [line for line in checked.stdout.splitlines() if line.endswith("stale, run python tools/gen_signature_docs.py")]
        assert not stale or checked.returncode == 1
        return stale

    # nothing written yet: every page and the index of both sets
    assert len(stale_report()) == len(SIGNATURES) + 1 + len(builtin_kb().families) + 1
    subprocess.run([*GENERATE, "--out", str(out), *families], check=True, capture_output=True)
    assert stale_report() == []
    (out / "gone-signature.md").write_text("# removed signature\n")
    assert stale_report() == [f"{out / 'gone-signature.md'}: stale, run python tools/gen_signature_docs.py"]
    subprocess.run([*GENERATE, "--out", str(out), *families], check=True, capture_output=True)
    assert not (out / "gone-signature.md").exists() and stale_report() == []
    index = (out / "index.md").read_text()
    assert all(f"]({s.id}.md)" in index for s in SIGNATURES)


def test_every_signature_page_has_the_entry_sections():
    for name, text in docs_pages(SIGNATURES, FIXED_IN).items():
        if name == "index.md":
            continue
        for heading in ("## What it is", "## Why it happens", "## How it is recognised", "## Fixed in", "## Example"):
            assert heading in text, f"{name}: {heading}"


def test_codes_lists_and_filters_the_catalogue():
    listing = run_cli_text("codes", "--prefix", "NCC_E", "--format", "json")
    assert listing.returncode == 0, listing.stderr
    rows = json.loads(listing.stdout)
    assert rows and all(any(c.startswith("NCC_E") for c in [r["code"] or "", *r["aliases"]]) for r in rows)
    runtime = json.loads(run_cli_text("codes", "--component", "runtime", "--format", "json").stdout)
    assert runtime and {r["component"] for r in runtime} == {"runtime"}
    text = run_cli_text("codes", "--status", "open")
    assert text.returncode == 0 and "signature(s)" in text.stdout
    assert all(s.id in text.stdout for s in SIGNATURES if s.status == "open")


def test_codes_prints_a_full_entry_by_code_or_id():
    signature = next(s for s in SIGNATURES if s.code and s.workarounds and any(w.code for w in s.workarounds))
    by_code = run_cli_text("codes", signature.code.lower())
    assert by_code.returncode == 0, by_code.stderr
    for part in (signature.title, "## What it is", "## Why it happens", "## Hypotheses", "## Workarounds", "```"):
        assert part in by_code.stdout
    by_id = run_cli_text("codes", signature.id, "--format", "json")
    assert [e["id"] for e in json.loads(by_id.stdout)] == [signature.id]


def test_codes_unknown_key_is_an_input_error():
    result = run_cli_text("codes", "NCC_ZZZ999")
    assert result.returncode == 2
    assert result.stderr.startswith("nforensics: no signature has the code or id 'NCC_ZZZ999'")


def test_no_internal_word_reaches_the_text_users_read():
    """'seed' is this project's name for a development report; users see the public issue it came from."""
    import re

    from nforensics.knowledge import builtin_kb

    internal = re.compile(r"\bseeds? (?:report|log|thread|\d)|\bthe seed\b", re.I)
    for signature in builtin_kb().signatures:
        texts = [signature.title, signature.summary, signature.meaning]
        texts += [t for h in signature.hypotheses for t in (h.title, h.explanation, h.check or "")]
        texts += [t for w in signature.workarounds for t in (w.title, w.description or "")]
        assert not any(internal.search(t or "") for t in texts), signature.id


def test_family_pages_are_current_and_say_how_each_family_is_recognised():
    families = list(builtin_kb().families.values())
    pages = family_pages(families)
    assert not stale_pages(pages, REPO / "docs" / "families"), "docs/families is stale: run python tools/gen_signature_docs.py"
    for family in families:
        page = pages[f"{family.id}.md"]
        for heading in ("## What it is", "## What it means", "## How it is recognised", "## Examples"):
            assert heading in page, f"{family.id}: {heading}"
        recognised = page.split("## How it is recognised", 1)[1].split("\n## ", 1)[0]
        assert recognised.count("\n- ") == len(family.detect), family.id  # one line per rule
        assert "\n- \n" not in recognised, f"{family.id}: a rule no phrase describes"
    assert all(f"]({f.id}.md)" in pages["index.md"] for f in families)
