"""The case base of public reports: its data holds to the schema and stores no verbatim paste; `explain`
shows a report where the log's failure resembles it, the lowest tier of recognition when nothing else
knows the failure, and nothing on logs that did not fail; packs add their own cases; `cases` searches it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import REPO, SAMPLE_LOGS, cli, run_cli_text
from nforensics.diagnose.order import narrows
from nforensics.diagnose.similar import failure_site, site_text
from nforensics.ingest import text_lines
from nforensics.pipeline import analyze_text
from nforensics.knowledge import builtin_kb
from nforensics.knowledge.cases import CASES_DIR, case_files, cases_for, read_cases
from nforensics.masking import mask
from nforensics.parse import assemble

KB = builtin_kb()
CASES = cases_for(())
NEGATIVE = sorted((SAMPLE_LOGS.parent / "tests" / "negative").glob("*.log"))


def test_every_case_file_validates_and_names_real_knowledge():
    assert len(CASES) >= 300
    signatures = {s.id for s in KB.signatures}
    for path in case_files(CASES_DIR):
        for case in read_cases(path):  # the schema checks the URL is this repository's issue or pull request
            assert path.name == case.repo.replace("/", "__") + ".jsonl", f"{case.url} filed under {path.name}"
            assert case.family in KB.families, f"{case.url}: unknown family {case.family}"
            assert case.signature is None or case.signature in signatures, f"{case.url}: unknown signature"
    assert len({(c.repo, c.number) for c in CASES}) == len(CASES)


def test_a_case_family_agrees_with_the_signature_its_error_matched():
    # A case's family is what the thread found (a kernel, not the tensorizer error it caused); its signature is
    # what the paste matched. The two agree when the family is the signature's, narrows it or causes it.
    by_id = {s.id: s for s in KB.signatures}
    for case in CASES:
        if case.signature:
            shown = by_id[case.signature].family
            assert case.family == shown or narrows(KB, case.family, shown) or shown in KB.families[case.family].causes, (
                f"{case.url}: family {case.family} but its signature {case.signature} is of {shown}")


def test_cases_store_masked_error_lines_not_the_paste():
    for case in CASES:
        for template in case.templates:
            assert mask(template) == template, f"{case.url}: an unmasked error line {template[:80]!r}"
            assert len(template) <= 240 and "\n" not in template


def test_a_bad_case_line_is_one_clear_error(tmp_path):
    pack = tmp_path / "pack"
    (pack / "cases").mkdir(parents=True)
    (pack / "sig.toml").write_text((SAMPLE_LOGS.parent / "nforensics/knowledge/signatures/nrt-status-resource.toml").read_text())
    (pack / "cases" / "acme.jsonl").write_text('{"repo": "acme/tracker", "number": 7, "url": "https://example.com/7"}\n')
    result = cli("cases", "--kb", str(pack))
    assert result.returncode == 2
    assert "acme.jsonl:1" in result.stderr and len(result.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------ what explain shows

def _case(url: str):
    return next(c for c in CASES if c.url == url)


def test_the_report_of_a_failure_is_shown_under_its_finding():
    analysis = analyze_text((SAMPLE_LOGS / "seed000_ncc_ixlv002_sendrecv_twice.log").read_text())
    reports = analysis.findings[0].similar_reports
    assert reports[0].url == "https://github.com/aws-neuron/aws-neuron-sdk/issues/1298"
    assert reports[0].family == analysis.findings[0].family and 0 < reports[0].closeness <= 1


def test_a_failure_only_a_public_report_knows_is_tier_similar():
    # An error line of a real report that no signature or family recognises, in a log of its own.
    known = [c for c in CASES if c.family in KB.families]
    for case in known:
        text = "some job output\n" + "\n".join(case.templates) + "\n"
        analysis = analyze_text(text)
        if analysis.findings and analysis.findings[0].tier == "similar":
            top = analysis.findings[0]
            assert top.family == case.family or top.similar_reports[0].family == top.family
            assert top.confidence < 0.45 and top.title.startswith("Resembles ")
            assert top.hypotheses and top.workarounds  # the family's knowledge, to act on
            return
    pytest.fail("no case's own error lines produced a finding of tier similar")


def test_a_line_reports_of_several_families_share_names_none_of_them():
    line = "RuntimeError: The following operation failed in the TorchScript interpreter."
    holders = {c.family for c in CASES if any(line.split(": ", 1)[1].rstrip(".") in t for t in c.templates)}
    assert len(holders) > 1  # (runtime execution and runtime init reports both print it)
    assert not [f for f in analyze_text(line + "\n").findings if f.tier == "similar"]


def test_the_line_that_says_what_failed_is_resembled_below_a_line_reports_share():
    shared = "RuntimeError: The following operation failed in the TorchScript interpreter."
    cause = "RuntimeError: Inconsistent batch sizes found on inputs"
    own = [c for c in CASES if any(cause.split(": ", 1)[1] in t for t in c.templates)]
    assert own and len({c.family for c in own}) == 1
    top = analyze_text(f"{shared}\n{cause}\n").findings[0]
    assert (top.tier, top.family) == ("similar", own[0].family)


def test_changing_the_telling_word_of_an_error_line_loses_the_resemblance():
    # "No module named 'X'" resembles a report only when X is the same module.
    line = "ModuleNotFoundError: No module named 'neuronxcc'"
    same = [r for f in analyze_text(line + "\n").findings for r in f.similar_reports]
    other = [r for f in analyze_text(line.replace("neuronxcc", "research") + "\n").findings for r in f.similar_reports]
    assert not other
    assert all("neuronxcc" in " ".join(_case(r.url).templates) for r in same)


@pytest.mark.parametrize("log", NEGATIVE, ids=lambda p: p.name)
def test_no_report_is_shown_for_a_log_that_did_not_fail_or_failed_elsewhere(log):
    analysis = analyze_text(log.read_text(encoding="utf-8"), log.name)
    shown = [(f.signature, r.url) for f in analysis.findings for r in f.similar_reports]
    assert not shown and not [f for f in analysis.findings if f.tier == "similar"]


def test_a_pack_adds_its_own_cases(tmp_path):
    pack = tmp_path / "pack"
    (pack / "cases").mkdir(parents=True)
    (pack / "sig.toml").write_text((SAMPLE_LOGS.parent / "nforensics/knowledge/signatures/nrt-status-resource.toml").read_text())
    case = {"repo": "acme/ml-tracker", "number": 42, "url": "https://github.com/acme/ml-tracker/issues/42",
            "title": "Internal: frobnicator pass rejects widget tensors", "component": "compiler",
            "family": "compiler-internal-crash", "state": "closed",
            "templates": ["[NCC_IFRB777] frobnicator pass rejects widget tensors of rank <n> in subgraph <n>"],
            "answer": "Fixed in the internal compiler build of last week."}
    (pack / "cases" / "acme.jsonl").write_text(json.dumps(case) + "\n")
    log = tmp_path / "x.log"
    log.write_text("2025-01-01T00:00:00Z ERROR 1 [neuronx-cc]: [NCC_IFRB777] frobnicator pass rejects widget tensors "
                   "of rank 5 in subgraph 3\n")
    result = cli("explain", str(log), "--kb", str(pack), "--format", "json")
    reports = [r for f in json.loads(result.stdout)["findings"] for r in f["similar_reports"]]
    assert reports[0]["url"] == "https://github.com/acme/ml-tracker/issues/42" and reports[0]["closeness"] == 1.0
    assert "acme/ml-tracker#42" in cli("cases", "--kb", str(pack), "--repo", "ml-tracker").stdout


# ------------------------------------------------------------------ nforensics cases

def test_cases_searches_by_code_family_and_prints_one():
    listing = cli("cases", "--code", "IXLV002").stdout
    assert "aws-neuron/aws-neuron-sdk#1298" in listing and listing.strip().endswith("1 report(s)")
    assert cli("cases", "--code", "NCC_IXLV002").stdout == listing
    shown = cli("cases", "aws-neuron-sdk#1298")
    assert shown.returncode == 0 and "https://github.com/aws-neuron/aws-neuron-sdk/issues/1298" in shown.stdout
    families = {c["family"] for c in json.loads(cli("cases", "--family", "host-oom-kill", "-f", "json").stdout)}
    assert families == {"host-oom-kill"}
    missing = cli("cases", "aws-neuron-sdk#999999")
    assert missing.returncode == 2 and "no public report" in missing.stderr


def test_a_report_is_found_by_where_its_error_was_raised_not_only_by_its_words():
    log = assemble("x", text_lines(
        'Traceback (most recent call last):\n'
        '  File "/home/alice/run.py", line 3, in <module>\n'
        '    main()\n'
        '  File "/opt/venv/lib/python3.10/site-packages/transformers_neuronx/decoder.py", line 157, in build_weight_shared\n'
        '    assert n_positions\n'
        'AssertionError\n'))[0]
    frames, exception = failure_site(log)
    # Paths inside their packages, no machine folders or user names; the exception that ended it.
    assert frames[-1] == "transformers_neuronx/decoder.py:build_weight_shared"
    assert not any("alice" in f or "/opt/" in f for f in frames)
    assert exception == "AssertionError"
    assert "transformers_neuronx/decoder.py" in site_text(frames, exception)
    assert site_text([], None) == ""


def test_a_windows_home_is_left_out_of_a_failure_site():
    from nforensics.records import Frame

    assert Frame(file="C:\\Users\\bob\\proj\\train\\run.py").package_path == "proj/train/run.py"


def test_the_shipped_case_index_is_current_and_a_first_run_opens_it_instead_of_building(tmp_path):
    result = subprocess.run([sys.executable, str(REPO / "tools/build_case_index.py"), "--check"],
                            capture_output=True, text=True, cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stderr
    # An empty cache folder: the reports come from the shipped index, and nothing is built into the folder.
    cache = tmp_path / "cache"
    shown = run_cli_text("explain", SAMPLE_LOGS / "seed000_ncc_ixlv002_sendrecv_twice.log", "--format", "json",
                         env={"NFORENSICS_CACHE_DIR": str(cache)})
    assert json.loads(shown.stdout)["findings"][0]["similar_reports"], shown.stderr
    assert cache.is_dir() and not list(cache.glob("cases-*.sqlite"))
