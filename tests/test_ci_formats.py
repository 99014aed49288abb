"""The CI formats (SARIF, GitHub workflow commands, JUnit, GitLab Code Quality, Markdown) and grouping.

Always-on tests build findings by hand; the seed-log tests run the real analysis on sample_logs/; the
SARIF schema validation reads the official schema from ../shared and skips where it is absent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from forensics.ci import FormatRequest, exit_code, parse_formats, write_outputs
from forensics.errors import InputError
from forensics.records import Analysis, Evidence, Finding, Hypothesis, Reference, Workaround
from forensics.render.github import MAX_ANNOTATIONS, escape_data, escape_property, render_github
from forensics.render.gitlab import render_gitlab
from forensics.render.groups import ci_path, group_findings
from forensics.render.junit import render_junit
from forensics.render.markdown import code_span, render_markdown
from forensics.render.sarif import to_sarif

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SARIF_SCHEMA = SHARED / "schemas" / "sarif-schema-2.1.0.json"
TEMP_LOG = "/tmp/ubuntu/neuroncc_compile_workdir/5f0c8a2e-3f7e-4c1b-9d55-0d4b2a7e1c11/log-neuron-cc.txt"


def finding(code: str | None = "NCC_IXLV002", fingerprint: str = "fp-barrier", severity: str = "error", **extra) -> Finding:
    values = dict(
        code=code,
        signature=f"sig-{fingerprint}",
        title=f"Title of {fingerprint}",
        component="compiler",
        severity=severity,
        summary=f"Summary of {fingerprint}: 100% sure, line one\nline two",
        meaning="What it means.",
        fingerprint=fingerprint,
        evidence=[Evidence(line=7, text="[INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers"), Evidence(line=9, text="x")],
        hypotheses=[Hypothesis(id="h", title="Kernel called twice", score=2.0, evidence=[Evidence(line=3, text="kernel[2]")])],
        workarounds=[Workaround(title="Call the kernel once", code="y = kernel[2](x)", language="python")],
        references=[Reference(title="aws-neuron-sdk issue", url="https://github.com/aws-neuron/aws-neuron-sdk/issues/1")],
    )
    return Finding(**(values | extra))


def analyses_two_inputs_one_failure_twice() -> list[Analysis]:
    return [
        Analysis(source="logs/a.log", findings=[finding(), finding(code="NRT_EXEC_OOB", fingerprint="fp-oob", severity="warning")]),
        Analysis(source=TEMP_LOG, findings=[finding()]),
        Analysis(source="<stdin>"),
    ]


# ---------------------------------------------------------------- grouping and locations


def test_identical_failures_group_by_fingerprint_with_counts_and_inputs():
    groups = group_findings(analyses_two_inputs_one_failure_twice())
    assert [g.fingerprint for g in groups] == ["fp-barrier", "fp-oob"]  # errors before warnings
    assert groups[0].count == 2 and groups[0].inputs == ["logs/a.log", "log-neuron-cc.txt"]
    assert groups[0].first.line == 7


def test_more_frequent_failure_comes_first_at_equal_severity():
    analyses = [
        Analysis(source="a.log", findings=[finding(fingerprint="once")]),
        Analysis(source="b.log", findings=[finding(fingerprint="twice")]),
        Analysis(source="c.log", findings=[finding(fingerprint="twice")]),
    ]
    assert [g.fingerprint for g in group_findings(analyses)] == ["twice", "once"]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("logs/a.log", "logs/a.log"),
        ("./logs/../logs/a.log", "logs/a.log"),
        (TEMP_LOG, "log-neuron-cc.txt"),
        ("../elsewhere/build.log", "build.log"),
        ("<stdin>", None),
        ("-", None),
    ],
)
def test_ci_paths_are_repo_relative_and_never_temp_dirs(source, expected):
    assert ci_path(source) == expected


def test_absolute_path_inside_the_checkout_becomes_relative(tmp_path, monkeypatch):
    (tmp_path / "ci").mkdir()
    monkeypatch.chdir(tmp_path)
    assert ci_path(str(tmp_path / "ci" / "build.log")) == "ci/build.log"


# ---------------------------------------------------------------- SARIF


def sarif_structure_problems(sarif: dict) -> list[str]:
    """What GitHub code scanning requires (reference section 6), checked without the schema."""
    problems = []
    if sarif.get("version") != "2.1.0" or "$schema" not in sarif or not sarif.get("runs"):
        problems.append("top level")
    for run in sarif["runs"]:
        driver = run["tool"]["driver"]
        rule_ids = [rule["id"] for rule in driver["rules"]]
        if driver.get("name") != "nforensics" or len(set(rule_ids)) != len(rule_ids):
            problems.append("driver/rules")
        for rule in driver["rules"]:
            for key in ("shortDescription", "fullDescription", "help"):
                if not rule[key]["text"] or len(rule[key]["text"]) > (1024 if key != "help" else 10**6):
                    problems.append(f"rule {rule['id']} {key}")
        for result in run["results"]:
            if rule_ids[result["ruleIndex"]] != result["ruleId"] or not result["message"]["text"]:
                problems.append("result rule/message")
            if not result["partialFingerprints"]:
                problems.append("fingerprint")
            for location in result.get("locations", []):
                uri = location["physicalLocation"]["artifactLocation"]["uri"]
                if uri.startswith(("/", "file:")) or "neuroncc_compile_workdir" in uri or ".." in uri.split("/"):
                    problems.append(f"uri {uri}")
                if location["physicalLocation"]["region"]["startLine"] < 1:
                    problems.append("startLine")
    return problems


def validate_against_official_schema(sarif: dict) -> None:
    if not SARIF_SCHEMA.is_file():
        pytest.skip("../shared/schemas/sarif-schema-2.1.0.json is not present")
    import jsonschema

    jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA.read_text())).validate(sarif)


def test_sarif_rules_results_fingerprints_and_locations():
    sarif = to_sarif(analyses_two_inputs_one_failure_twice())
    assert sarif_structure_problems(sarif) == []
    run = sarif["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["sig-fp-barrier", "sig-fp-oob"]
    rule = run["tool"]["driver"]["rules"][0]
    assert rule["shortDescription"]["text"] == "Title of fp-barrier"
    assert "Call the kernel once" in rule["help"]["text"] and "```python" in rule["help"]["markdown"]
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["sig-fp-barrier", "sig-fp-oob", "sig-fp-barrier"]
    assert [r["level"] for r in results] == ["error", "warning", "error"]
    assert results[0]["partialFingerprints"] == {"nforensics/v1": "fp-barrier"}
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
    assert uris == ["logs/a.log", "logs/a.log", "log-neuron-cc.txt"]
    assert results[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 7}


def test_sarif_for_stdin_has_no_made_up_file_and_validates():
    sarif = to_sarif([Analysis(source="<stdin>", findings=[finding()])])
    assert "locations" not in sarif["runs"][0]["results"][0]
    assert sarif_structure_problems(sarif) == []
    validate_against_official_schema(sarif)


def test_sarif_of_synthetic_findings_validates_against_official_schema():
    validate_against_official_schema(to_sarif(analyses_two_inputs_one_failure_twice()))


def test_long_descriptions_are_clipped_to_github_limit():
    long = finding(title="t" * 3000, meaning="m" * 3000)
    rule = to_sarif([Analysis(source="a.log", findings=[long])])["runs"][0]["tool"]["driver"]["rules"][0]
    assert len(rule["shortDescription"]["text"]) == 1024 and len(rule["fullDescription"]["text"]) == 1024


# ---------------------------------------------------------------- GitHub workflow commands


def test_escaping_follows_actions_toolkit():
    assert escape_data("100%\r\nok: a,b") == "100%25%0D%0Aok: a,b"
    assert escape_property("100%\r\nok: a,b") == "100%25%0D%0Aok%3A a%2Cb"


def test_github_annotation_per_group_with_escaped_properties_and_message():
    commands, summary = render_github(analyses_two_inputs_one_failure_twice())
    lines = commands.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("::error file=logs/a.log,line=7,title=NCC_IXLV002%3A Title of fp-barrier::")
    assert lines[1].startswith("::warning file=logs/a.log,line=7,title=NRT_EXEC_OOB%3A Title of fp-oob::")
    message = lines[0].split("::", 2)[2]
    assert "100%25 sure, line one%0Aline two" in message and "\n" not in message
    assert "Seen 2 times in: logs/a.log, log-neuron-cc.txt" in message
    assert "Most likely: Kernel called twice" in message
    assert summary.startswith("# nforensics: 2 failure(s) in 3 input(s)")


def test_github_caps_annotations_and_lists_the_rest_in_the_summary():
    analyses = [Analysis(source=f"l{i}.log", findings=[finding(fingerprint=f"fp{i:02}")]) for i in range(13)]
    commands, summary = render_github(analyses)
    annotations = [line for line in commands.splitlines() if line.startswith("::error")]
    assert len(annotations) == MAX_ANNOTATIONS
    assert "3 more failure group(s)" in commands
    assert "## Not annotated" in summary and "Title of fp12" in summary


def test_github_format_appends_the_job_summary_when_the_variable_is_set(tmp_path):
    summary_file = tmp_path / "summary.md"
    summary_file.write_text("earlier step\n")
    out = tmp_path / "annotations.txt"
    write_outputs(
        analyses_two_inputs_one_failure_twice(),
        [FormatRequest("github", str(out))],
        stream=None,  # type: ignore[arg-type]  # every request has a file
        env={"GITHUB_STEP_SUMMARY": str(summary_file)},
    )
    assert out.read_text().startswith("::error ")
    summary = summary_file.read_text()
    assert summary.startswith("earlier step\n# nforensics:") and "## 1. Title of fp-barrier" in summary


# ---------------------------------------------------------------- JUnit


def test_junit_one_failing_testcase_per_group():
    root = ET.fromstring(render_junit(analyses_two_inputs_one_failure_twice()))
    assert root.tag == "testsuites" and root.get("tests") == "2" and root.get("failures") == "2"
    cases = root.findall("./testsuite/testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("compiler", "Title of fp-barrier"),
        ("compiler", "Title of fp-oob"),
    ]
    failure = cases[0].find("failure")
    assert failure.get("type") == "NCC_IXLV002"
    assert "seen 2x in: logs/a.log, log-neuron-cc.txt" in failure.text


def test_junit_without_failures_is_one_passing_testcase():
    root = ET.fromstring(render_junit([Analysis(source="a.log")]))
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == 1 and cases[0].find("failure") is None and root.get("failures") == "0"


# ---------------------------------------------------------------- GitLab Code Quality


def test_gitlab_code_quality_fields():
    issues = json.loads(render_gitlab(analyses_two_inputs_one_failure_twice()))
    assert isinstance(issues, list) and len(issues) == 3
    first = issues[0]
    assert first["description"] == "NCC_IXLV002: Title of fp-barrier"
    assert first["check_name"] == "sig-fp-barrier" and first["severity"] == "critical"
    assert first["location"] == {"path": "logs/a.log", "lines": {"begin": 7}}
    assert issues[1]["severity"] == "minor"
    # Same failure in two logs stays two entries (GitLab shows identical fingerprints once).
    assert len({i["fingerprint"] for i in issues}) == 3


# ---------------------------------------------------------------- Markdown


def test_markdown_explanation_sections():
    markdown = render_markdown(analyses_two_inputs_one_failure_twice())
    assert markdown.startswith("# nforensics: 2 failure(s) in 3 input(s)")
    assert "| 1 | Title of fp-barrier | NCC_IXLV002 | compiler | 2 | logs/a.log, log-neuron-cc.txt |" in markdown
    assert "## 1. Title of fp-barrier (`NCC_IXLV002`)" in markdown
    assert "1. **Kernel called twice** (score 2)" in markdown
    assert "```python\n  y = kernel[2](x)\n  ```" in markdown
    assert "- [aws-neuron-sdk issue](https://github.com/aws-neuron/aws-neuron-sdk/issues/1)" in markdown


def test_markdown_code_spans_survive_backticks_and_pipes_in_tables():
    assert code_span("a `b` c") == "``a `b` c``"
    assert code_span("`x") == "`` `x ``"
    markdown = render_markdown([Analysis(source="a.log", findings=[finding(title="a | b")])])
    assert "| a \\| b |" in markdown


def test_markdown_without_failures_says_so():
    assert "no Neuron failure recognised" in render_markdown([Analysis(source="a.log")])


# ---------------------------------------------------------------- format requests and exit codes


def test_format_requests_parse_names_and_files():
    assert parse_formats(["json", "sarif=out/x.sarif", "GitHub"]) == [
        FormatRequest("json"),
        FormatRequest("sarif", "out/x.sarif"),
        FormatRequest("github"),
    ]
    with pytest.raises(InputError, match="unknown format 'yaml'"):
        parse_formats(["yaml"])
    with pytest.raises(InputError, match="give a file name"):
        parse_formats(["sarif="])


def test_exit_codes_and_exit_zero():
    diagnosed = analyses_two_inputs_one_failure_twice()
    assert exit_code(diagnosed, exit_zero=False) == 1
    assert exit_code(diagnosed, exit_zero=True) == 0
    assert exit_code([Analysis(source="a.log")], exit_zero=False) == 0


def test_no_temp_dir_reaches_any_ci_output():
    analyses = [Analysis(source=TEMP_LOG, findings=[finding()])]
    sarif = json.dumps(to_sarif(analyses))
    for text in (json.dumps(json.loads(sarif)["runs"][0]["results"]), render_gitlab(analyses), render_github(analyses)[0]):
        assert not re.search(r"neuroncc_compile_workdir|/tmp/", text)
