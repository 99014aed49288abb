"""HLO facts in the diagnosis (issue 16): `explain LOG --hlo FILE`, the modules a log names that are on this
machine, `cache --failed`, and the `hlo` evidence kind of the seed 000, 003 and 004 hypotheses, as a user sees
them: the hypothesis the graph supports first, its evidence in the module's own words, a module without the fact
earning nothing (near misses), and a module that cannot be read as one line (given) or one note (found).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import REPO, SAMPLE_LOGS, assert_clean_error, cli
from pydantic import ValidationError

from nforensics.artifacts.hlo import read_hlo
from nforensics.artifacts.hlo_evidence import observations
from nforensics.artifacts.hlo_named import AUTO_MAX_BYTES
from nforensics.fact_records import HLO_FACTS
from nforensics.knowledge.schema import EvidenceRule

FIXTURES = REPO / "tests" / "fixtures" / "hlo"
SEED000 = SAMPLE_LOGS / "seed000_ncc_ixlv002_sendrecv_twice.log"
SEED003 = SAMPLE_LOGS / "seed003_ncc_inla001_xla_use_bf16.log"
SEED004 = SAMPLE_LOGS / "seed004_ncc_iten404_conv7x7_backward_trn1.log"
# (log, module, hypothesis the graph supports, what the evidence says)
SEEDS = [
    (SEED000, "custom_kernel_twice.pb", "sendrecv-kernel-called-twice",
     "the HLO calls kernel sendrecv_kernel 2 times (custom-call AwsNeuronCustomNativeKernel)"),
    (SEED003, "bf16_islands.hlo", "global-bf16-with-autocast-none",
     "3 of the 23 arithmetic instructions in the HLO compute in bf16"),
    (SEED004, "conv7x7_grad.pb", "conv7x7-backward-on-trn1",
     "conv_general_dilated.4 is the filter gradient of a 7x7 convolution (conv_general_dilated.3, stride 2x2)"),
]
# The same logs with a module that lacks the fact: a forward-only 7x7 convolution in f32, no kernel.
NEAR_MISSES = [(SEED000, "conv7x7.pb", "sendrecv-kernel-called-twice"),
               (SEED003, "conv7x7.pb", "global-bf16-with-autocast-none"),
               (SEED004, "conv7x7.hlo", "conv7x7-backward-on-trn1")]


def explain_json(*args: str | Path) -> dict:
    """The one input's analysis (validated, with the whole document, against docs/schema.json)."""
    code, out, err = cli("explain", *args, "--format", "json", "--no-redact")
    assert code == 1 and err == "", err
    document = json.loads(out)
    validate(document)
    (analysis,) = document["inputs"]
    return analysis


def hypothesis(analysis: dict, wanted: str) -> dict:
    return next(h for h in analysis["findings"][0]["hypotheses"] if h["id"] == wanted)


def hlo_evidence(found: dict) -> list[dict]:
    return [e for e in found["evidence"] if e["artifact"]]


def flat(text: str) -> str:
    """Terminal text without the panel's borders and wrapping."""
    return " ".join(text.replace("│", " ").split())


def validate(document: dict) -> None:
    import jsonschema

    jsonschema.Draft202012Validator(json.loads((REPO / "docs" / "schema.json").read_text())).validate(document)


@pytest.mark.parametrize(("log", "module", "top", "said"), SEEDS, ids=["seed000", "seed003", "seed004"])
def test_the_graph_ranks_its_hypothesis_first_with_the_module_cited(log, module, top, said):
    path = FIXTURES / module
    analysis = explain_json(log, "--hlo", path)
    assert analysis["schema_version"] == "2.0"
    assert analysis["artifacts"] == [{"kind": "hlo", "path": str(path), "line": None, "read": True, "facts": {},
                                      "note": analysis["artifacts"][0]["note"]}]
    first = analysis["findings"][0]["hypotheses"][0]
    assert first["id"] == top
    cited = hlo_evidence(first)
    assert cited and all(e["artifact"] == str(path) and e["line"] is None for e in cited)
    assert any(said in e["text"] for e in cited), cited
    without = hypothesis(explain_json(log), top)
    assert first["score"] > without["score"] and not hlo_evidence(without)

    code, out, err = cli("explain", log, "--hlo", path, "--no-redact")
    assert code == 1 and err == ""
    assert f"HLO read: {path}" in flat(out)
    assert f"[{module}: {said}" in flat(out)


@pytest.mark.parametrize(("log", "module", "wanted"), NEAR_MISSES, ids=["seed000", "seed003", "seed004"])
def test_a_module_without_the_fact_earns_nothing_and_says_so(log, module, wanted):
    path = FIXTURES / module
    with_module = hypothesis(explain_json(log, "--hlo", path), wanted)
    without = hypothesis(explain_json(log), wanted)
    cited = hlo_evidence(with_module)
    assert [e["text"].startswith("not in the HLO: ") for e in cited] == [True]  # only the fact's absence
    assert with_module["score"] < without["score"]


def test_several_modules_each_count_on_their_own():
    kernel, conv = FIXTURES / "custom_kernel_twice.pb", FIXTURES / "conv7x7_grad.hlo"
    analysis = explain_json(SEED000, "--hlo", conv, "--hlo", kernel)
    assert [a["path"] for a in analysis["artifacts"]] == [str(conv), str(kernel)]
    first = analysis["findings"][0]["hypotheses"][0]
    assert first["id"] == "sendrecv-kernel-called-twice"
    assert [e["artifact"] for e in hlo_evidence(first)] == [str(kernel)]


@pytest.mark.parametrize(("content", "fragment"), [
    (None, "cannot read"),
    (SEED000.read_bytes(), "not an HLO module"),
    ((FIXTURES / "conv7x7_grad.pb").read_bytes()[:40], "proto"),
    (b"", "empty file"),
], ids=["missing", "a log", "cut proto", "empty"])
def test_an_unreadable_hlo_is_one_line_and_exit_2(tmp_path, content, fragment):
    bad = tmp_path / "model.hlo_module.pb"
    if content is not None:
        bad.write_bytes(content)
    for inputs in ([SEED000], [SAMPLE_LOGS]):  # a folder of logs stops before any output too
        code, out, err = cli("explain", *inputs, "--hlo", bad)
        assert_clean_error(code, err, fragment)
        assert str(bad) in err and out == ""


# ---------------------------------------------------------------- modules the log names


def workdir_log(tmp_path: Path, log: Path, module: str | None) -> tuple[Path, Path]:
    """The seed log as if compiled here: its workdir under tmp_path, holding `module` (None: nothing)."""
    text = log.read_text().replace("/tmp/ubuntu", str(tmp_path))
    named = next(word for word in text.split() if word.endswith(".hlo_module.pb"))
    target = Path(named)
    target.parent.mkdir(parents=True, exist_ok=True)
    if module:
        shutil.copy(FIXTURES / module, target)
    written = tmp_path / "run.log"
    written.write_text(text)
    return written, target


@pytest.mark.parametrize(("log", "module", "top", "said"), SEEDS, ids=["seed000", "seed003", "seed004"])
def test_a_workdir_the_log_names_is_read_without_asking(tmp_path, log, module, top, said):
    written, target = workdir_log(tmp_path, log, module)
    analysis = explain_json(written)
    (read,) = analysis["artifacts"]
    assert read["path"] == str(target) and read["read"] and read["line"] is not None
    assert str(target) in written.read_text().splitlines()[read["line"] - 1]
    first = analysis["findings"][0]["hypotheses"][0]
    assert first["id"] == top and any(said in e["text"] for e in hlo_evidence(first))


def test_a_cache_entry_the_log_names_is_read(tmp_path):
    entry = tmp_path / "neuronxcc-2.15.141.0+d3cfc8ca" / "MODULE_5a17f9e2c04b8d316e92+4497a662"
    entry.mkdir(parents=True)
    shutil.copy(FIXTURES / "custom_kernel_twice.pb", entry / "model.hlo_module.pb")
    text = SEED000.read_text() + (
        "2024-11-04 16:20:31.000233:  88412  ERROR ||NEURON_CC_WRAPPER||: Got a cached failed neff at "
        f"{entry}/model.neff. Will skip compilation, please set --retry_failed_compilation for recompilation:\n")
    (tmp_path / "run.log").write_text(text)
    analysis = explain_json(tmp_path / "run.log")
    assert [a["path"] for a in analysis["artifacts"]] == [str(entry / "model.hlo_module.pb")]
    assert hlo_evidence(analysis["findings"][0]["hypotheses"][0])


def test_a_named_module_that_cannot_be_read_is_one_note(tmp_path):
    written, target = workdir_log(tmp_path, SEED000, None)
    target.write_bytes((FIXTURES / "custom_kernel_twice.pb").read_bytes()[:100])
    analysis = explain_json(written)
    (note,) = analysis["artifacts"]
    assert not note["read"] and note["note"].startswith("not read: ") and "proto" in note["note"]
    assert not hlo_evidence(analysis["findings"][0]["hypotheses"][0])  # no module read: the rules say nothing
    code, out, err = cli("explain", written, "--no-redact")
    assert code == 1 and err == "" and "Traceback" not in out
    assert f"HLO not read: {target} (named on line {note['line']}): not read:" in flat(out)


def test_a_huge_or_strange_named_module_is_not_read(tmp_path):
    written, target = workdir_log(tmp_path, SEED000, None)
    with target.open("wb") as huge:  # sparse: big on paper, nothing to read
        huge.truncate(64 * AUTO_MAX_BYTES)
    started = time.perf_counter()
    (note,) = explain_json(written)["artifacts"]
    assert time.perf_counter() - started < 5
    assert not note["read"] and "pass it with --hlo" in note["note"]
    target.unlink()
    os.mkfifo(target)  # a FIFO a log names is never opened: nothing would ever answer
    assert explain_json(written)["artifacts"] == []


def test_a_module_given_with_hlo_replaces_the_named_ones(tmp_path):
    written, _ = workdir_log(tmp_path, SEED000, "conv7x7.pb")
    given = FIXTURES / "custom_kernel_twice.hlo"
    analysis = explain_json(written, "--hlo", given)
    assert [a["path"] for a in analysis["artifacts"]] == [str(given)]


# ---------------------------------------------------------------- cache --failed


def test_cache_failed_shows_the_facts_of_each_failed_entry(tmp_path):
    entry = tmp_path / "neuronxcc-2.23.6484.0+3b612583" / "MODULE_198775565831884870+d41d8cd9"
    entry.mkdir(parents=True)
    shutil.copy(FIXTURES / "custom_kernel_twice.pb", entry / "model.hlo_module.pb")
    (entry / "model.log").write_text("[INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers to have name\n"
                                     "LocalSendRecv-0_476_sr_cb_begin, but core barrier 6 in subgraph 0\n"
                                     "on core 1 has name LocalSendRecv-0_176_sr_cb_begin\n")
    code, out, err = cli("cache", tmp_path, "--failed", "--format", "json")
    assert code == 0, err
    (failed,) = json.loads(out)["entries"]
    said = "the HLO calls kernel sendrecv_kernel 2 times (custom-call AwsNeuronCustomNativeKernel)"
    assert said in failed["hlo_facts"] and failed["hlo_note"] is None
    first = failed["diagnosis"]["findings"][0]["hypotheses"][0]
    assert first["id"] == "sendrecv-kernel-called-twice"
    assert [e["text"] for e in hlo_evidence(first)] == [said]
    code, out, err = cli("cache", tmp_path, "--failed")
    assert f"HLO of {entry.name}" in flat(out) and f"• {said}" in flat(out)

    (entry / "model.hlo_module.pb").write_bytes(b"\x08\x01hlo")
    (failed,) = json.loads(cli("cache", tmp_path, "--failed", "--format", "json").stdout)["entries"]
    assert failed["hlo_facts"] == [] and failed["hlo_note"].startswith("not read: ")


# ---------------------------------------------------------------- the facts and the rule kind


def test_named_facts_of_the_fixtures_in_text_and_proto():
    def facts(name: str) -> dict:
        text, proto = (observations(read_hlo(FIXTURES / f"{name}.{ext}")) for ext in ("hlo", "pb"))
        values = {key: [o.value for o in found] for key, found in text.items()}
        assert values == {key: [o.value for o in found] for key, found in proto.items()}
        return values

    kernel = facts("custom_kernel_twice")
    assert kernel["hlo.kernel_calls"] == [2, 1] and kernel["hlo.custom_calls"] == [3]
    grad = facts("conv7x7_grad")
    assert grad["hlo.gradient_conv_kernel"] == ["7x7", "7x7"] and grad["hlo.conv_window"] == ["7x7", "7x7", "16x16"]
    assert facts("conv7x7")["hlo.gradient_conv_kernel"] == []  # a forward convolution is no gradient
    bf16 = facts("bf16_islands")
    assert (bf16["hlo.bf16_ops"], bf16["hlo.bf16_f32_converts"], bf16["hlo.activation_kinds"]) == ([3], [4], [3])
    assert facts("allreduce")["hlo.collectives"] == [4] and facts("allreduce")["hlo.kernel_calls"] == []
    assert facts("dynamic")["hlo.dynamic_shapes"] == [3]


def test_the_rule_kind_names_a_known_fact_and_the_schema_documents_each():
    EvidenceRule(hlo="kernel_calls", min=2, weight=0.3, note="a kernel called twice")
    with pytest.raises(ValidationError):
        EvidenceRule(hlo="kernel_call_count", min=2, weight=0.3, note="a typo")
    with pytest.raises(ValidationError, match="exactly one"):
        EvidenceRule(hlo="kernel_calls", fact="nki.sendrecv_kernel_calls", weight=0.3, note="two selectors")
    doc = EvidenceRule.__doc__ or ""
    assert all(f"`{name}`" in doc for name in HLO_FACTS)
