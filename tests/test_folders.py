"""`explain` of folders on every core (issue 14): the same output with any number of jobs, JSON and text
written input by input exactly as the whole set would print, placeholders numbered across inputs."""

from __future__ import annotations

import json

import pytest

from conftest import SAMPLE_LOGS, SEED000, cli

from nforensics.records import Analysis, AnalysisSet, SourcedFinding
from nforensics.render.groups import group_findings
import nforensics.render.json as json_render
from nforensics.render.json import _group, render_json


def test_any_number_of_jobs_gives_the_same_output():
    for fmt in ("json", "text", "sarif"):
        single = cli("explain", SAMPLE_LOGS, "--format", fmt, "--jobs", "1")
        pooled = cli("explain", SAMPLE_LOGS, "--format", fmt, "--jobs", "2")
        assert single.returncode == pooled.returncode == 1
        assert single.stdout == pooled.stdout and single.stderr == pooled.stderr


def test_streamed_json_is_the_analysis_set_dumped_at_once():
    from nforensics.pipeline import analyze_path

    analyses = [analyze_path(str(path)) for path in sorted(SAMPLE_LOGS.glob("*.log"))[:12]]
    whole = AnalysisSet(
        inputs=analyses,
        findings=[SourcedFinding(**f.model_dump(), source=a.source) for a in analyses for f in a.findings],
        groups=[_group(g) for g in group_findings(analyses)],
    ).model_dump_json(indent=2) + "\n"
    assert render_json(analyses) == whole
    # The spooled findings are copied back a block at a time (a folder's findings never sit in memory whole),
    # and the pieces still make the same document.
    writer = json_render.JsonWriter()
    head = "".join(writer.add(analysis) for analysis in analyses)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json_render, "COPY_BLOCK", 4096)
        pieces = list(writer.close())
    assert len(pieces) > 10 and max(map(len, pieces)) < len(whole) // 4 and head + "".join(pieces) == whole
    one = AnalysisSet(inputs=analyses[:1], findings=[SourcedFinding(**f.model_dump(), source=analyses[0].source)
                                                    for f in analyses[0].findings],
                      groups=[_group(g) for g in group_findings(analyses[:1])])
    assert render_json(analyses[:1]) == one.model_dump_json(indent=2) + "\n"  # one input: the same shape
    assert json.loads(render_json([])) == json.loads(AnalysisSet(inputs=[], findings=[], groups=[]).model_dump_json())
    quiet = [Analysis(source="a.log"), Analysis(source="b.log")]
    assert render_json(quiet) == AnalysisSet(inputs=quiet, findings=[], groups=[]).model_dump_json(indent=2) + "\n"


def test_placeholders_are_numbered_across_inputs_in_input_order():
    from nforensics.batch import _Renumbering

    renumbering = _Renumbering()
    first = renumbering.apply({"text": "[redacted:ipv4-1] [redacted:token-1]"},
                              {"10.0.0.1": "[redacted:ipv4-1]", "ghp_a": "[redacted:token-1]"})
    second = renumbering.apply({"text": "[redacted:ipv4-1] then [redacted:ipv4-2]", "[redacted:ipv4-2]": ["x"]},
                               {"10.0.0.2": "[redacted:ipv4-1]", "10.0.0.1": "[redacted:ipv4-2]"})
    assert first == {"text": "[redacted:ipv4-1] [redacted:token-1]"}
    assert second == {"text": "[redacted:ipv4-2] then [redacted:ipv4-1]", "[redacted:ipv4-1]": ["x"]}


def test_an_unreadable_named_file_stops_the_run_and_a_folder_file_is_skipped(tmp_path):
    (tmp_path / "a.log").write_text(SEED000.read_text())
    (tmp_path / "b.neff").write_bytes(b"\x00binary")
    (tmp_path / "c.log").write_text(SEED000.read_text())
    skipped = cli("explain", tmp_path, "--format", "json", "--jobs", "2")
    assert skipped.returncode == 1 and "skipped" in skipped.stderr and "b.neff" in skipped.stderr
    assert [i["source"] for i in json.loads(skipped.stdout)["inputs"]] == [str(tmp_path / "a.log"), str(tmp_path / "c.log")]
    named = cli("explain", tmp_path / "a.log", tmp_path / "b.neff", "--jobs", "2")
    assert named.returncode == 2 and named.stdout == "" and "binary" in named.stderr


def test_a_secret_one_input_gave_away_is_masked_in_every_later_input(tmp_path):
    # The first log prints the password with its key name (a rule sees it); the second only repeats the value.
    failure = "2024-08-15T14:51:41Z ERROR 1234 [neuronx-cc]: [NCC_EVRF009] failed to open {}\n"
    (tmp_path / "a.log").write_text("export NEURON_COMPILE_CACHE_PASSWORD=Wq7rT2vZp9Lk4Xs\n" + failure.format("x.pb"))
    (tmp_path / "b.log").write_text(failure.format("/mnt/Wq7rT2vZp9Lk4Xs/model.pb"))
    for jobs in ("1", "2"):
        result = cli("explain", tmp_path, "--format", "json", "--jobs", jobs)
        assert "Wq7rT2vZp9Lk4Xs" not in result.stdout and "Wq7rT2vZp9Lk4Xs" not in result.stderr


def test_a_bug_met_on_one_input_of_a_folder_keeps_the_others_results(tmp_path, monkeypatch):
    """An internal error on one file is that file's skip reason, said in one line: the folder's other
    results are all printed."""
    import nforensics.batch as batch

    for name in ("a.log", "b.log", "c.log"):
        (tmp_path / name).write_text(SEED000.read_text())
    real = batch.analyze_path

    def failing_on_b(spec, **options):
        if spec.endswith("b.log"):
            raise RuntimeError("a bug")
        return real(spec, **options)

    monkeypatch.setattr(batch, "analyze_path", failing_on_b)
    result = cli("explain", tmp_path, "--format", "json", "--jobs", "1")
    assert result.returncode == 1 and "b.log: internal error (RuntimeError: a bug)" in result.stderr
    assert "Traceback" not in result.stderr
    assert [i["source"] for i in json.loads(result.stdout)["inputs"]] == [str(tmp_path / "a.log"), str(tmp_path / "c.log")]
