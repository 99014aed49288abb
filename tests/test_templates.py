"""Message templates (knowledge/wording.py, knowledge/templates.toml): the catalogue's templates are
current, and a known message printed without its code, re-numbered, is still recognised by its wording."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO
from nforensics.knowledge import build, builtin_kb
from nforensics.pipeline import analyze_lines, analyze_text


def test_templates_file_is_current():
    result = subprocess.run([sys.executable, str(REPO / "tools/derive_templates.py"), "--check"],
                            capture_output=True, text=True, cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stderr


def test_a_coded_message_printed_without_its_code_is_recognised_by_its_template():
    # NCC_EOOM001's message with other numbers and no code: only the template can recognise it.
    line = ("2025-01-01T00:00:00Z ERROR 7 [neuronx-cc]: Maximum peak HBM usage of 41.2GB exceeds HBM limit of 24.0GB "
            "for trn2. This consists of 3.1GB I/O tensors, 30.0GB intermediate tensors, and 8.1GB internal "
            "(scratchpad) allocations - You may need to reduce batch/tensor size or utilize pipeline/tensor "
            "parallelism via neuronx-distributed.\n")
    top = analyze_text(line).findings[0]
    assert (top.signature, top.tier) == ("ncc-eoom001-hbm-limit-exceeded", "exact")
    assert 0.5 < top.confidence < 0.95, "a template match is less certain than a printed code"


def test_a_signature_whose_field_holds_its_whole_message_is_recognised_without_its_code():
    # NCC_IBIR605's extract keeps the whole message as a field; the template must not mask it all away,
    # and must not carry the compiler's shared "open a support ticket" request, which the paste here lacks.
    line = "2025-01-01T00:00:00Z ERROR 7 [neuronx-cc]: InstActivation with function Ln does not support scalar immediate bias\n"
    top = analyze_text(line).findings[0]
    assert (top.signature, top.tier) == ("ncc-ibir605-activation-ln-scalar-bias", "exact")
    # Only the shared request, with another failure's words: no template of an internal error reaches it.
    request = ("2025-01-01T00:00:00Z ERROR 7 [neuronx-cc]: Activation table load failed - Please open a support ticket at "
               "https://github.com/aws-neuron/aws-neuron-sdk/issues/new.\n")
    assert all(f.signature != "ncc-ibir605-activation-ln-scalar-bias" for f in analyze_text(request).findings)


def test_a_near_miss_wording_does_not_reach_the_template():
    line = "2025-01-01T00:00:00Z ERROR 7 [neuronx-cc]: peak usage report failed to write\n"
    assert all(f.signature != "ncc-eoom001-hbm-limit-exceeded" for f in analyze_text(line).findings)


def test_a_line_that_could_reach_a_template_is_always_scored_against_it():
    # Templates are held by their heaviest tokens until what is left cannot reach THRESHOLD: a line made of
    # every token they are not held by must score below it (exactly at THRESHOLD it must be held).
    from nforensics.knowledge import load_kb
    from nforensics.knowledge.wording import THRESHOLD, resemblance, template_tokens

    templated, holders = load_kb().template_index
    for number, (signature, templates) in enumerate(templated):
        for template in templates:
            unheld = {t: w for t, w in template_tokens(template) if number not in holders.get(t, ())}
            assert resemblance(template, unheld) < THRESHOLD, (signature.id, template)


def test_a_wording_pattern_keeps_the_case_it_was_written_in():
    """Other tools print the same words in lower case: a pattern is case-sensitive unless it says (?i)."""
    numba = "numba.core.errors.LoweringError: Failed in nopython mode pipeline: unsupported instruction 'setitem'\n"
    assert all(f.signature != "nrt-load-unsupported-instruction" for f in analyze_text(numba).findings)
    runtime = "2024-May-21 16:08:34.244955 58100:58100 ERROR  NRT:nrt_load   Unsupported instruction in NEFF\n"
    assert analyze_text(runtime).findings[0].signature == "nrt-load-unsupported-instruction"


def test_a_coded_message_without_its_hint_is_recognised_by_its_template():
    """The compiler ends a diagnostic with a hint after " - "; a paste or a wrapper often gives the message
    alone: the template's message part stands on its own. A different instruction and shape, no code."""
    line = ("Dynamic shape is not supported: instruction 'dot.17' has shape 'bf16[<=512,4096]'. The Neuron compiler "
            "requires all tensor dimensions to be statically sized.\n")
    top = analyze_text(line).findings[0]
    assert (top.signature, top.tier) == ("ncc-emod025-dynamic-shape", "exact")
    # The hint alone says nothing about which failure it follows.
    hint = "Recompile the model with fully static input shapes. It failed.\n"
    assert all(f.signature != "ncc-emod025-dynamic-shape" for f in analyze_text(hint).findings)


@pytest.mark.parametrize("planted", [[1, 2], {"hbm": [99999]}, {"holders": {"hbm": [99999]}}, {"holders": {"hbm": [-1]}},
                                     {"holders": {"hbm": "x"}}, {"holders": [], "tokens": {}}])
def test_a_damaged_template_index_in_the_cache_is_a_miss(planted, monkeypatch):
    """The holders kept in the disk cache are checked: a file of another shape recomputes them, never names
    a wrong signature or stops the run."""
    from nforensics.knowledge import matcher

    kb = build(builtin_kb().signatures, families=builtin_kb().families)  # a catalogue whose index is not built yet
    monkeypatch.setattr(matcher, "remember", lambda kind, inputs, compute: planted)
    templated, holders = kb.template_index
    assert holders == matcher._template_holders(templated)


def test_template_tokens_read_from_the_cache_are_those_the_tokeniser_makes(monkeypatch):
    """A run that reads the templates' tokens from the disk cache resembles lines to them exactly as one that
    tokenised them; tokens of another shape in the file are tokenised again."""
    from nforensics.knowledge import matcher, wording

    kb = build(builtin_kb().signatures, families=builtin_kb().families)
    kept = matcher._template_index_file(matcher.templates_of(kb))
    first = next(iter(kept["tokens"]))
    kept["tokens"][first] = "damaged"
    monkeypatch.setattr(wording, "_TEMPLATE_TOKENS", {})
    monkeypatch.setattr(matcher, "remember", lambda kind, inputs, compute: kept)
    templated, _ = kb.template_index
    every = [t for _, templates in templated for t in templates]
    assert set(wording._TEMPLATE_TOKENS) == set(every) - {first}  # read from the file, the damaged one left out
    assert all(wording.template_tokens(t) == tuple(wording.tokens(t).items()) for t in every)


def test_a_last_line_cut_inside_a_message_is_its_head_but_one_that_goes_on_in_other_words_is_not():
    exact = "RuntimeError: nrt_execute status=1002, error message=\"Invalid input submitted to exec()\""
    signatures = lambda log: {f.signature for f in analyze_text(log).findings}  # noqa: E731
    assert "nrt-exec-bad-input" in signatures(exact + "\n")
    # the paste stops inside the message (mid-word too): the head it shows is the template's
    assert "nrt-exec-bad-input" in signatures(exact[:exact.index("submitted") + 6])
    assert "nrt-exec-bad-input" in signatures(exact[:exact.index(" to exec") + 2])  # inside a short word, "to"
    # a message that shares the head's common words and goes on in words of its own is another message
    other = ('RuntimeError: NRT Execution error occurred on Neuron for operation=k\n'
             'error message="NRT EXECUTION FAILED: Failed to load model, Invalid NEFF, instruction, or input"\n'
             "Note: Neuron errors are reported ")
    assert "nrt-exec-bad-input" not in signatures(other)


def test_another_message_of_the_same_runtime_function_does_not_reach_its_template():
    # The level and the MODULE:function head are shared by every record of that function: the message says which.
    other = ("2026-Apr-18 20:18:50.199855 19779:19779 ERROR  TDRV:tdrv_get_dev_info     unable to retrieve device "
             "architecture\n")
    assert "nrt-no-neuron-device-available" not in [f.signature for f in analyze_text(other).findings]
    same = "2026-Apr-18 20:18:50.199855 19779:19779 ERROR  TDRV:tdrv_get_dev_info     No neuron devices available\n"
    assert analyze_text(same).findings[0].signature == "nrt-no-neuron-device-available"


def test_a_template_is_reached_only_by_a_line_with_the_words_that_make_it_that_signature():
    # Every template of nrt_allocate_neuron_cores names that function and its cores: "not contiguous" is what
    # makes one of them its own, and a line about busy cores does not have it.
    kb = builtin_kb()
    without_busy = build([s for s in kb.signatures if s.id != "nrt-neuroncores-not-available"], families=kb.families)
    busy = "ERROR NRT:nrt_allocate_neuron_cores  Logical Neuron Core(s) not available ... (cores busy, ret=-16)\n"
    found = analyze_lines("x", enumerate(busy.splitlines(), 1), kb=without_busy).findings
    assert "nrt-neuroncores-not-contiguous" not in [f.signature for f in found]
    moved = "ERROR NRT:nrt_allocate_neuron_cores  the neuron cores given are not contiguous\n"
    assert analyze_text(moved).findings[0].signature == "nrt-neuroncores-not-contiguous"


def test_templates_are_free_of_a_dates_leftovers_and_placeholders_are_no_words():
    import re
    from nforensics.knowledge.wording import tokens

    text = (REPO / "nforensics/knowledge/templates.toml").read_text()
    # A field value masked inside the log's date left its month behind ("<n>-Feb-<*>"): a false anchor.
    assert not re.search(r"-(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-", text)
    assert set(tokens("failed to copy <path> at <hex> on <ip>")) == {"failed", "copy"}
