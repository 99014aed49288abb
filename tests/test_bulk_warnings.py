"""Past a big log's ungated head, a warning is read only when it holds something a finding can be made of: the
bulk skip (nforensics/parse/gates.py skip_finder) passes over the others with the quiet chatter, by the
catalogue's own anchors (KnowledgeBase.anchors), so a log of a million distinct warnings costs one scan."""

from __future__ import annotations

import importlib

import pytest
from conftest import REPO, counting_reader
from test_grammars import CASES

from nforensics.ingest import read_lines
from nforensics.knowledge import load_kb
from nforensics.knowledge.matcher import catalogue_anchors
from nforensics.linear_regex.lines import LineFinder
from nforensics.parse.gates import CatalogueAnchors, candidate_test, is_quiet, skip_finder
from nforensics.pipeline import analyze_lines

assembler = importlib.import_module("nforensics.parse.assemble")
rewrap = importlib.import_module("nforensics.parse.rewrap")
KB = load_kb()
WARNING_HEAD = "2026-03-02T18:20:35Z WARNING 48240 [sg0000/Tensorizer/Simplifier]: "
PLAIN_WARNING = WARNING_HEAD + "mlp_gate of bias weight falls back to a row layout for rotary tensors"
CHATTER_INFO = "2026-03-02T18:20:35Z INFO 48240 [sg0000/Tensorizer/Simplifier]: finished after 1.5 seconds"


def _passed_over(line: str) -> bool:
    data = f"{CHATTER_INFO}\n{line}\n".encode()
    return skip_finder(CatalogueAnchors(*KB.anchors)).line_start(data, 0) < 0


def _claimed_lines() -> list[tuple[str, str]]:
    """(signature id, line) for every sample-log line a pattern of a signature that may claim warnings holds."""
    found = []
    for signature in KB.signatures:
        if not signature.match.claims_warnings or not signature.match.patterns:
            continue
        text = (REPO / "sample_logs" / signature.sample_log).read_text(encoding="utf-8", errors="replace")
        patterns = KB.pattern_index[0]
        own = {n for n, owner in enumerate(KB.pattern_index[1]) if KB.signatures[owner] is signature}
        found += [(signature.id, line) for line in text.splitlines() if own & set(patterns.matching(line))]
    return found


CLAIMED = _claimed_lines()


def test_every_signature_that_claims_warnings_has_a_line_to_check():
    claimed = {signature for signature, _ in CLAIMED}
    wanted = {s.id for s in KB.signatures if s.match.claims_warnings and s.match.patterns}
    assert len(claimed) >= 0.9 * len(wanted)  # (a few samples print the message inside a JSON string or wrapped)


@pytest.mark.parametrize("signature, line", CLAIMED, ids=[f"{s}-{n}" for n, (s, _) in enumerate(CLAIMED)])
def test_a_warning_a_signature_claims_is_never_passed_over(signature, line):
    """The anchors are what each pattern needs: the line, printed as a warning, stays in reach of the matcher."""
    assert not _passed_over(WARNING_HEAD + line.strip())


@pytest.mark.parametrize("line", [
    PLAIN_WARNING,
    "2024-06-26 07:48:56,123 - WARNING - tokenizer padding side is left; generation may differ",
    "[WARNING] deprecated argument `use_auth_token`, use `token` instead",
])
def test_a_warning_with_nothing_to_read_is_passed_over(line):
    assert _passed_over(line)


@pytest.mark.parametrize("line", [
    WARNING_HEAD + "allocation of the weight tensor failed, retrying on host",  # a failure word
    WARNING_HEAD + "[NCC_EVRF009] the graph is too big",  # a printed code
    WARNING_HEAD + "NEURON_CC_FLAGS is set twice",  # a setting a quiet line keeps
    WARNING_HEAD + "suspected hang in collectives operation after 600 s",  # a signature's anchor
    "2024-06-26 07:48:56,123 - WARNING - Estimated peak HBM usage (31.2 GB) exceeds 24 GB",
])
def test_a_warning_with_something_to_read_is_not_passed_over(line):
    assert not _passed_over(line)


def test_anchors_follow_the_catalogue():
    """A pattern that needs no word at all leaves no anchor to go by: no line (no warning) is passed over then."""
    assert all(KB.anchors)  # the built-in catalogue's patterns all need words
    match = KB.signatures[0].match.model_copy(update={"patterns": [r"\w+\d"], "claims_warnings": True})
    loose = KB.signatures[0].model_copy(update={"match": match})
    assert catalogue_anchors(type(KB)(signatures=(loose,), order=KB.order)) == (None, None)
    data = f"{CHATTER_INFO}\n{PLAIN_WARNING}\n".encode()
    assert skip_finder(CatalogueAnchors(frozenset(), frozenset())).line_start(data, 0) < 0
    assert not skip_finder(CatalogueAnchors(frozenset(), None)).line_start(data, 0) < 0
    assert not skip_finder(CatalogueAnchors(None, None)).line_start(data, 0) < 0
    assert candidate_test(CatalogueAnchors(None, None))("a line with no word of any parser x1")


def test_a_line_only_a_signature_reads_stays_in_reach_past_the_head():
    """The per-line gate takes the catalogue's anchors too: a plain line a pattern needs is not only counted."""
    line = "One or more engines are running on nd0 nc1"  # no failure word, no parser's word: a signature's anchor
    assert not candidate_test(None)(line)
    assert candidate_test(CatalogueAnchors(*KB.anchors))(line)


def test_a_run_of_quiet_lines_stops_only_at_a_kept_line_that_holds_a_match():
    finder = LineFinder(["WARN", "NRT"], quiet=[" INFO ", " WARN "], head=40, unless=["rror"])
    lines = [
        "2024 INFO  NRT:nrt_load loaded",
        "2024 WARN  slow start",
        "2024 INFO  an rror in a line with no match",  # kept word, but nothing the finder looks for: passed over
        "2024 INFO  NRT:nrt_init rror",  # kept word and a match: found
        "2024 WARN  again",
    ]
    data = ("\n".join(lines) + "\n").encode()
    assert finder.line_start(data, 0) == data.index(b"2024 INFO  NRT:nrt_init")
    assert finder.line_start(data, data.index(b"2024 WARN  again")) == -1


@pytest.fixture
def gate_from_the_start(monkeypatch):
    monkeypatch.setattr(assembler, "UNGATED_LINES", 0)
    monkeypatch.setattr(rewrap, "SAMPLE_LINES", 3)


def _findings(analysis) -> list[tuple]:
    return [(f.signature, f.code, tuple(e.line for e in f.evidence), tuple(h.id for h in f.hypotheses))
            for f in analysis.findings]


@pytest.mark.parametrize("path", sorted((REPO / "sample_logs").glob("*.log")), ids=lambda p: p.stem)
def test_the_gate_on_from_the_first_line_keeps_every_finding(path, monkeypatch):
    """The gate's words are read off the parsers and the catalogue (nforensics/parse/gates.py): with it on
    from the first line, line by line and in bulk (warnings passed over included), a log gives the findings
    and the ranked hypotheses of reading every line."""
    every_line = _findings(analyze_lines(str(path), list(read_lines(str(path))[1]), kb=KB))
    monkeypatch.setattr(assembler, "UNGATED_LINES", 0)
    monkeypatch.setattr(rewrap, "SAMPLE_LINES", 3)
    assert _findings(analyze_lines(str(path), list(read_lines(str(path))[1]), kb=KB)) == every_line
    assert _findings(analyze_lines(str(path), read_lines(str(path))[1], kb=KB)) == every_line


JVM_STACK = ("INFO  PyProcess W-125-model-stdout: Start loading the model using NeuronAutoModel.\n"
             "Caused by: java.util.concurrent.TimeoutException\n"
             "\tat java.base/java.util.concurrent.CompletableFuture.timedGet(CompletableFuture.java:1960) ~[?:?]\n"
             "\tat ai.djl.python.engine.PyProcess.startPythonProcess(PyProcess.java:195) ~[python-0.29.0.jar:?]\n"
             "\tat ai.djl.python.engine.PyModel.newPredictor(PyModel.java:272) ~[python-0.29.0.jar:?]\n"
             "\tat java.base/java.lang.Thread.run(Unknown Source)\n")


def test_a_jvm_stack_under_its_exception_stays_in_reach_past_the_head(tmp_path, monkeypatch):
    """A Java stack follows its exception line, which closes every block: its frames, whose only word is
    "at", pass the gate by their shape (`(PyProcess.java:195)`), line by line and in bulk."""
    path = tmp_path / "serving.log"
    path.write_text(JVM_STACK)
    every_line = _findings(analyze_lines(str(path), list(read_lines(str(path))[1]), kb=KB))
    assert every_line[0][0] == "serving-timeout" and len(every_line[0][2]) >= 3  # the DJL frames are its evidence
    monkeypatch.setattr(assembler, "UNGATED_LINES", 0)
    monkeypatch.setattr(rewrap, "SAMPLE_LINES", 3)
    assert _findings(analyze_lines(str(path), list(read_lines(str(path))[1]), kb=KB)) == every_line
    assert _findings(analyze_lines(str(path), read_lines(str(path))[1], kb=KB)) == every_line


def test_a_big_log_of_distinct_warnings_is_skipped_and_its_failure_found(tmp_path):
    words = ("layer", "attention", "mlp", "proj", "query", "key", "value", "norm", "embed", "rotary", "gate")
    body = "".join(f"{WARNING_HEAD}{words[n % 11]}_{words[n // 11 % 11]} of {words[n // 121 % 11]} falls back "
                   f"to a {words[n // 7 % 11]} layout\n{CHATTER_INFO}\n" for n in range(20_000))
    seed = (REPO / "sample_logs" / "seed000_ncc_ixlv002_sendrecv_twice.log").read_text()
    anchored = WARNING_HEAD + "Estimated peak HBM usage (31.2 GB) exceeds 24 GB"
    path = tmp_path / "big.log"
    path.write_text(body + anchored + "\n" + body + seed)
    reader, decoded = counting_reader(path)
    analysis = analyze_lines("big.log", reader, kb=KB)
    assert analysis.findings[0].code == "NCC_IXLV002"
    assert 40_001 in decoded  # the warning that holds an anchor was read
    assert len(decoded) < 25_000  # the ungated head, that warning and the failure; not 40,000 more warnings


def test_a_big_file_reads_a_shorter_head_whatever_its_words(tmp_path, monkeypatch):
    """A paste's first lines are all read, a line that lacks every gate word too; a file as big as the tools
    write (BIG_FILE, made small here) reads only BIG_FILE_UNGATED_LINES so."""
    monkeypatch.setattr(assembler, "BIG_FILE_UNGATED_LINES", 100)
    quiet = "".join(f"step {n} loss 2.{n} lr 0.0003\n" for n in range(300))
    path = tmp_path / "train.log"
    path.write_text(quiet + "the run stopped: out of disk\n" + quiet)  # a line no gate word lets through
    kept = lambda: [line.line for line in assembler.assemble("train.log", read_lines(str(path))[1])[1]]  # noqa: E731
    assert 301 in kept()
    monkeypatch.setattr(assembler, "BIG_FILE", path.stat().st_size)
    assert 301 not in kept()


# Lines the grammars' own tests say their record rules parse (tests/test_grammars.py): every rule of the
# messages and environment grammars, and a traceback's header, exception, native frame and the frames that
# open a block of their own.
_RECORD_SHAPES = {"python_header", "ipython_header", "faulthandler_header", "exception", "native_frame", "root_frame",
                  "live_thread", "assert_frame", "check_frame", "ipython_legacy_frame", "pytest_frame"}
RECORD_LINES = [(grammar, line) for grammar, _start, line, alternative, *_ in CASES
                if grammar in ("messages", "environment") or grammar == "traceback" and alternative in _RECORD_SHAPES]


@pytest.mark.parametrize(("grammar", "line"), RECORD_LINES, ids=[f"{g}-{n}" for n, (g, _) in enumerate(RECORD_LINES)])
def test_a_line_a_record_rule_parses_passes_the_gate(grammar, line):
    """Whatever words the gate is read off, a line a record rule parses reaches it past the head, and a
    levelled one is not passed over as chatter (a traceback's excepted: no logger prints one at INFO)."""
    assert candidate_test(None)(line)
    assert grammar == "traceback" or not is_quiet(f"2026-03-02 18:20:25 INFO {line}")


def test_chatter_with_no_word_of_any_reader_is_gated_out():
    line = "2026-03-02 18:20:25,940 - train - step 1 loss 3.35 lr 0.0001 grad_norm 1.4 throughput 237.5 seq/s"
    assert not candidate_test(CatalogueAnchors(*KB.anchors))(line)
    assert is_quiet("2026-03-02T18:20:35Z INFO 48240 [sg0000/Tensorizer/Simplifier]: Simplifier finished after 1.5 s")
    assert not is_quiet("2026-03-02T18:20:35Z INFO 48240 [root]: Subcommand returned with exitcode=70")
    assert not is_quiet("2026-03-02 18:20:35 INFO Compiling model with neuronx-cc")  # a compile opens: the tracker's


def test_a_block_that_could_start_anywhere_opens_the_gate(monkeypatch):
    """Where the grammars cannot say which words a block's lines start with, the gate lets every line by
    rather than guess (a grammar change must not make it skip lines silently)."""
    import nforensics.parse.gates as gates

    monkeypatch.setattr(gates, "compiler_block_starts", lambda: ("",))
    for cached in (gates._shapes, gates.candidate_test, gates._kept_chatter):
        cached.cache_clear()
    try:
        assert gates.candidate_test(None)("2026-03-02 18:20:25,940 - train - step 1 loss 3.35")
    finally:
        monkeypatch.undo()
        for cached in (gates._shapes, gates.candidate_test, gates._kept_chatter):
            cached.cache_clear()
    assert not gates.candidate_test(None)("2026-03-02 18:20:25,940 - train - step 1 loss 3.35")
