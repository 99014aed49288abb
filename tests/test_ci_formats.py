"""The CI formats (SARIF, GitHub workflow commands, JUnit, GitLab Code Quality, Markdown) and grouping.

Always-on tests build findings by hand; the seed-log tests run the real analysis on sample_logs/; the
SARIF schema validation reads the official schema from ../shared and skips where it is absent.
"""

from __future__ import annotations

import functools
import json
import re
from xml.etree import ElementTree as ET

import pytest

from conftest import ALL_SAMPLE_LOGS, REPO, SAMPLE_LOGS, SHARED, another_machine_and_day, run_cli_text
from nforensics.ci import FormatRequest, exit_code, parse_formats, write_outputs
from nforensics.errors import InputError
from nforensics.records import Analysis, Evidence, Finding, Hypothesis, Reference, Workaround
from nforensics.render.github import MAX_ANNOTATIONS, escape_data, escape_property, render_github
from nforensics.render.gitlab import render_gitlab
from nforensics.render.groups import ci_path, group_findings
from nforensics.render.junit import render_junit
from nforensics.render.markdown import code_span, render_markdown
from nforensics.render.sarif import to_sarif

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


@functools.cache
def official_sarif_validator():
    import jsonschema

    return jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA.read_text()))


def validate_against_official_schema(sarif: dict) -> None:
    if not SARIF_SCHEMA.is_file():
        pytest.skip("../shared/schemas/sarif-schema-2.1.0.json is not present")
    official_sarif_validator().validate(sarif)


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
    assert summary.startswith("# nforensics: 1 failure(s), 1 warning(s) or note(s) in 3 input(s)")


def test_github_caps_annotations_and_lists_the_rest_in_the_summary():
    analyses = [Analysis(source=f"l{i}.log", findings=[finding(fingerprint=f"fp{i:02}")]) for i in range(13)]
    commands, summary = render_github(analyses)
    annotations = [line for line in commands.splitlines() if line.startswith("::error")]
    assert len(annotations) == MAX_ANNOTATIONS
    assert "3 more failure group(s)" in commands
    assert "## Not annotated" in summary and "Title of fp12" in summary


def test_github_job_summary_respects_the_1_mib_limit():
    huge = finding(meaning="m" * 400_000)
    analyses = [Analysis(source=f"l{i}.log", findings=[huge.model_copy(update={"fingerprint": f"fp{i}"})]) for i in range(4)]
    _, summary = render_github(analyses)
    assert len(summary.encode()) <= 1 << 20 and "cut at GitHub's 1 MiB job-summary limit" in summary


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
    assert root.tag == "testsuites" and root.get("tests") == "2" and root.get("failures") == "1"
    cases = root.findall("./testsuite/testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("compiler", "Title of fp-barrier"),
        ("compiler", "Title of fp-oob"),
    ]
    failure = cases[0].find("failure")
    assert failure.get("type") == "NCC_IXLV002"
    assert "seen 2x in: logs/a.log, log-neuron-cc.txt" in failure.text
    # The warning is a passing case that says what it saw: a warning or a note fails no CI job.
    assert cases[1].find("failure") is None and "seen 1x in" in cases[1].find("system-out").text


def test_junit_stays_well_formed_with_terminal_control_characters():
    coloured = finding(summary="\x1b[31mERROR\x1b[0m \x00 <tag> & done", evidence=[Evidence(line=1, text="\x1b[1mx")])
    failure = ET.fromstring(render_junit([Analysis(source="a.log", findings=[coloured])])).find(".//failure")
    assert failure.get("message") == "\ufffd[31mERROR\ufffd[0m \ufffd <tag> & done"


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
    assert markdown.startswith("# nforensics: 1 failure(s), 1 warning(s) or note(s) in 3 input(s)")
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


# ---------------------------------------------------------------- the real pipeline on the sample logs

SEED_LOGS = sorted(SAMPLE_LOGS.glob("seed00*.log"))
FILE_FORMATS = ("json", "sarif", "github", "junit", "gitlab", "markdown", "text")


def test_the_five_seed_logs_are_present():
    assert [p.name[:7] for p in SEED_LOGS] == [f"seed00{i}" for i in range(5)]


@pytest.fixture(scope="module", params=SEED_LOGS, ids=lambda p: p.name[:7])
def seed_outputs(request, tmp_path_factory) -> dict:
    """One `explain` per seed log writing every format at once, as a CI step would."""
    out = tmp_path_factory.mktemp(request.param.stem)
    log = request.param.relative_to(REPO).as_posix()
    summary = out / "summary.md"
    args = [f"--format={name}={out / name}" for name in FILE_FORMATS]
    result = run_cli_text("explain", log, *args, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.returncode == 1, result.stderr
    assert result.stdout == "" and result.stderr == ""  # everything went to the files
    outputs = {name: (out / name).read_text() for name in FILE_FORMATS}
    outputs["summary"] = summary.read_text()
    outputs["log"] = log
    outputs["analysis"] = json.loads(outputs["json"])
    outputs["top"] = outputs["analysis"]["findings"][0]
    return outputs


def test_seed_json_is_the_contract(seed_outputs):
    analysis = seed_outputs["analysis"]
    assert analysis["schema_version"] == "2.0" and [i["source"] for i in analysis["inputs"]] == [seed_outputs["log"]]
    assert all(f["source"] == seed_outputs["log"] for f in analysis["findings"])
    for key in ("code", "signature", "title", "component", "fields", "generic", "fingerprint", "hypotheses",
                "workarounds", "evidence"):
        assert key in seed_outputs["top"]
    validate_output_schema(analysis)


def test_seed_sarif(seed_outputs):
    sarif = json.loads(seed_outputs["sarif"])
    assert sarif_structure_problems(sarif) == []
    results = sarif["runs"][0]["results"]
    findings = seed_outputs["analysis"]["findings"]
    assert [r["ruleId"] for r in results] == [f["signature"] for f in findings]
    assert [r["partialFingerprints"] for r in results] == [
        {f"nforensics/v{f['fingerprint_version']}": f["fingerprint"]} for f in findings
    ]
    location = results[0]["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": seed_outputs["log"]}, "region": {"startLine": findings[0]["evidence"][0]["line"]}}
    validate_against_official_schema(sarif)


def test_seed_github_annotations(seed_outputs):
    top = seed_outputs["top"]
    first = seed_outputs["github"].splitlines()[0]
    assert first.startswith(f"::error file={seed_outputs['log']},line={top['evidence'][0]['line']},title=")
    assert escape_property(top["title"]) in first
    assert f"## 1. {top['title']}" in seed_outputs["summary"]


def test_seed_junit(seed_outputs):
    cases = ET.fromstring(seed_outputs["junit"]).findall("./testsuite/testcase")
    top = seed_outputs["top"]
    assert (cases[0].get("classname"), cases[0].get("name")) == (top["component"], top["title"])
    assert cases[0].find("failure").get("type") == (top["code"] or top["signature"])


def test_seed_gitlab(seed_outputs):
    issues = json.loads(seed_outputs["gitlab"])
    top = seed_outputs["top"]
    assert issues[0]["check_name"] == top["signature"]
    assert issues[0]["location"] == {"path": seed_outputs["log"], "lines": {"begin": top["evidence"][0]["line"]}}
    assert all(re.fullmatch(r"[0-9a-f]{32}", i["fingerprint"]) for i in issues)


def test_seed_markdown_and_text(seed_outputs):
    top = seed_outputs["top"]
    assert f"## 1. {top['title']}" in seed_outputs["markdown"]
    assert top["workarounds"][0]["title"] in seed_outputs["markdown"]
    assert seed_outputs["text"].startswith(f"{seed_outputs['log']}: ")
    assert top["title"][:60] in seed_outputs["text"] and "\x1b[" not in seed_outputs["text"]  # no colour in files


def test_sarif_of_every_sample_log_validates():
    from nforensics.pipeline import analyze_path

    assert len(ALL_SAMPLE_LOGS) >= 5
    for log in ALL_SAMPLE_LOGS:
        sarif = to_sarif([analyze_path(str(log))])
        assert sarif_structure_problems(sarif) == [], log.name
        validate_against_official_schema(sarif)


@pytest.mark.parametrize("log", SEED_LOGS, ids=lambda p: p.name[:7])
def test_rule_ids_and_fingerprints_survive_temp_paths_pids_and_timestamps(log, tmp_path, monkeypatch):
    from nforensics.pipeline import analyze_path

    original = log.read_text()
    changed = another_machine_and_day(original)
    assert changed != original
    monkeypatch.chdir(tmp_path)
    for run, text in (("one", original), ("two", changed)):
        (tmp_path / run).mkdir()
        (tmp_path / run / log.name).write_text(text)
    runs = [to_sarif([analyze_path(f"{run}/{log.name}")])["runs"][0] for run in ("one", "two")]
    ids = [[(r["ruleId"], r["partialFingerprints"]) for r in run["results"]] for run in runs]
    assert ids[0] and ids[0] == ids[1]
    assert runs[0]["tool"]["driver"]["rules"] == runs[1]["tool"]["driver"]["rules"]


# ---------------------------------------------------------------- explain: several inputs, folders, stdin


def test_explain_folder_glob_stdin_and_grouping(tmp_path):
    seed0, seed3 = SEED_LOGS[0].read_text(), SEED_LOGS[3].read_text()
    (tmp_path / "nightly" / "deep").mkdir(parents=True)
    (tmp_path / "nightly" / "a.log").write_text(seed0)
    (tmp_path / "nightly" / "deep" / "b.log").write_text(another_machine_and_day(seed0))
    (tmp_path / "nightly" / "notes.md").write_text("not a log")
    (tmp_path / "nightly" / "model.neff").write_bytes(b"\x00NEFF" * 100)
    result = run_cli_text("explain", "nightly", "-", "--glob", "*.log", "--format", "json", input=seed3, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    validate_output_schema(document)
    assert [a["source"] for a in document["inputs"]] == ["nightly/a.log", "nightly/deep/b.log", "<stdin>"]
    twice = [g for g in document["groups"] if g["count"] == 2]
    assert twice and [i["source"] for i in twice[0]["inputs"]] == ["nightly/a.log", "nightly/deep/b.log"]
    assert any(g["code"] == "NCC_INLA001" and g["inputs"][0]["source"] == "<stdin>" for g in document["groups"])


def test_explain_folder_skips_unreadable_files_with_a_note(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.log").write_text(SEED_LOGS[0].read_text())
    (tmp_path / "logs" / "model.neff").write_bytes(b"\x00NEFF" * 100)
    result = run_cli_text("explain", "logs", "--format", "gitlab", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("nforensics: skipped logs/model.neff")
    assert json.loads(result.stdout)[0]["location"]["path"] == "logs/a.log"


def test_explain_text_groups_the_same_failure_across_inputs(tmp_path):
    for name in ("a.log", "b.log"):
        (tmp_path / name).write_text(SEED_LOGS[0].read_text())
    result = run_cli_text("explain", "a.log", "b.log", cwd=tmp_path)
    assert result.returncode == 1
    assert "same failure as in a.log" in result.stdout
    assert re.search(r"2×\s+NCC_IXLV002", result.stdout)


def test_exit_zero_and_bad_format(tmp_path):
    (tmp_path / "a.log").write_text(SEED_LOGS[0].read_text())
    assert run_cli_text("explain", "a.log", "--format", "sarif", "--exit-zero", cwd=tmp_path).returncode == 0
    bad = run_cli_text("explain", "a.log", "--format", "yaml", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.startswith("nforensics: unknown format 'yaml'") and bad.stdout == ""


def test_empty_folder_is_an_input_error(tmp_path):
    (tmp_path / "empty").mkdir()
    result = run_cli_text("explain", "empty", cwd=tmp_path)
    assert result.returncode == 2 and "no files matching" in result.stderr


# ---------------------------------------------------------------- the published JSON Schema


SCHEMA_DOC = REPO / "docs" / "schema.json"
REGENERATE = (
    ".venv/bin/python -c \"from nforensics.render.json import json_schema_text; "
    "print(json_schema_text(), end='')\" > docs/schema.json"
)


def validate_output_schema(document: dict) -> None:
    import jsonschema

    jsonschema.Draft202012Validator(json.loads(SCHEMA_DOC.read_text())).validate(document)


def test_docs_schema_is_current():
    from nforensics.render.json import json_schema_text

    assert SCHEMA_DOC.read_text() == json_schema_text(), f"docs/schema.json is stale; regenerate: {REGENERATE}"
    schema = json.loads(SCHEMA_DOC.read_text())
    assert {"Analysis", "Finding", "FailureGroupRecord"} <= set(schema["$defs"])
    assert schema["required"] == ["inputs", "findings", "groups"]  # one shape: the set, for any number of inputs
    assert "schema_version" in schema["$defs"]["Analysis"]["properties"]


def test_markdown_names_facts_without_a_line_by_what_held():
    """Hypothesis evidence from the finding's fields or an artifact has no input line: Markdown states the
    fact instead of printing `line None`."""
    log = SAMPLE_LOGS / "ncc_eoom001_batch_too_large_trn2.log"
    out = run_cli_text("explain", str(log), "-f", "markdown").stdout
    assert "line None" not in out
    assert "   - the scratchpad part alone is 8 GB or more\n" in out
