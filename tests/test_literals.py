"""The quick tests before a parser are read off the grammar: necessary (never skip a line the parser would
read), selective (they do skip chatter), and they follow the grammar when it changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from lark import Lark
from lark.exceptions import LarkError

from nforensics.parse.grammars import _START_RULES, build, grammar_dir, parse
from nforensics.linear_regex.necessary import Words, regex_words
from nforensics.parse.literals import _GrammarWords, first_words, may_parse, start_words

SAMPLES = Path(__file__).resolve().parents[1] / "sample_logs"


@pytest.mark.parametrize("pattern,text,admitted", [
    (r"Segmentation fault", "Segmentation fault (core dumped)", True),
    (r"Segmentation fault", "segmentation fault", False),  # case matters unless the pattern says otherwise
    (r"(?i)segmentation fault", "SEGMENTATION FAULT", True),
    (r"[Kk]illed by signal", "Killed by signal 9", True),
    (r"[Kk]illed by signal", "killed by SIGKILL", False),
    (r"(?:by|with) signal", "terminated with signal 9", True),
    (r"(?:by|with) signal", "terminated via sig", False),
    (r"exit(?=code=\d)", "exitcode=70", True),  # a lookahead's text is required too
    (r"\.py(?= in )", "model.py in forward(x)", True),  # ... right after the run before it: one word
    (r"\.py(?= in )", "model.py is in the folder", False),
    (r"a+bc", "xabcx", True),
])
def test_regex_words_admit_what_matches_and_reject_a_near_miss(pattern, text, admitted):
    words = regex_words(pattern)
    assert words is not None
    assert words.found_in(text) is admitted


@pytest.mark.parametrize("pattern", [r"\d+", r"(?:foo)?\s*b?", r"[A-Z]{3}\d{3}", r"(?:foo|\d+)", r"(?!foo).+"])
def test_a_pattern_that_needs_no_word_gates_nothing(pattern):
    assert regex_words(pattern) is None


def test_a_lookahead_right_after_a_literal_run_extends_that_word():
    assert regex_words(r"[^\s]+\.py(?= in )") == Words(exact=frozenset({".py in "}))
    assert regex_words(r"[^\s]+\.go(?=:\d)") == Words(exact=frozenset({".go:"}))


def test_no_line_of_the_sample_logs_and_corpora_that_the_traceback_grammar_reads_is_gated_away():
    from nforensics.parse.gates import maybe_traceback

    shared = SAMPLES.parents[1] / "shared" / "corpus"
    paths = [*SAMPLES.glob("*.log"), *shared.glob("*/*.log")]
    lines = {line.strip() for path in sorted(paths) for line in path.read_text(errors="replace").splitlines() if line.strip()}
    read = [line for line in lines if parse("traceback", line) is not None]
    assert len(read) > (400 if shared.is_dir() else 300)  # the property was tried on lines the grammar reads
    assert [line for line in read if not maybe_traceback(line)] == []
    chatter = "2026-03-02T18:20:31Z INFO 48240 [sg0000/Tensorizer/BirCodeGenLoop]: Running BirCodeGenLoop"
    assert not maybe_traceback(chatter)  # and chatter is spared the parser


def test_the_longest_necessary_word_is_chosen_and_subsumed_words_dropped():
    assert regex_words(r"x\d+ Compile command returned: -?\d") == Words(exact=frozenset({" Compile command returned: "}))
    assert regex_words(r"failed with|failed with -\d") == Words(exact=frozenset({"failed with"}))


def test_the_gate_follows_the_grammar_it_is_read_from():
    before = Lark('start: "Killed" REST\nREST: /.+/', parser="lalr")
    after = Lark('start: ("Killed" | "Terminated") REST\nREST: /.+/', parser="lalr")
    assert _GrammarWords(before).symbol("start", False) == Words(exact=frozenset({"Killed"}))
    assert _GrammarWords(after).symbol("start", False) == Words(exact=frozenset({"Killed", "Terminated"}))
    anything = Lark('start: "Killed" REST | REST\nREST: /.+/', parser="lalr")
    assert _GrammarWords(anything).symbol("start", False) is None  # one alternative needs no word


def test_every_message_shape_is_gated_and_chatter_skips_the_parsers():
    chatter = "2026-03-02T18:20:31Z INFO 48240 [sg0000/Tensorizer/BirCodeGenLoop]: Running BirCodeGenLoop"
    for start in _START_RULES["messages"]:
        assert start_words("messages", start) is not None, start
    skipped = [start for start in _START_RULES["messages"] if not may_parse("messages", start, chatter)]
    assert len(skipped) >= len(_START_RULES["messages"]) - 2, skipped


def test_no_line_of_the_sample_logs_that_a_shape_reads_is_gated_away():
    lines = {line for path in sorted(SAMPLES.glob("*.log")) for line in path.read_text(errors="replace").splitlines()
             if line.strip()}
    read = 0
    for start in _START_RULES["messages"]:
        for line in lines:
            if parse("messages", line, start) is not None:
                read += 1
                assert may_parse("messages", start, line), (start, line)
    assert read > 300  # the property was tried on lines the shapes do read


BLOCKS = {"compiler": ("ice_border", "ice_title", "ice_field", "bir_header", "bir_field", "bir_instruction", "sg_error"),
          "environment": ("apt_line", "pip_line", "freeze_line", "cc_version", "env_assign", "setenv_call")}


def test_the_words_lines_start_with_are_read_off_the_grammar():
    starts = first_words("compiler", BLOCKS["compiler"])
    assert starts is not None and {"*", "SG-ERROR:", "An Internal Compiler Error has occurred"} <= set(starts)
    assert first_words("compiler", ("driver_line",)) is None  # a timestamp can start with any digit
    grammar = Lark('start: a | b\na: _SP? "Error class:" REST\nb: /(?:os\\.environ|ENV) /\n_SP: " "+\nREST: /.+/',
                   parser="lalr")
    words = _GrammarWords(grammar)
    assert words.prefixes("a", False, frozenset({"_SP"})) == frozenset({"Error class:"})
    assert words.prefixes("start", False, frozenset({"_SP"})) == frozenset({"Error class:", "os.environ", "ENV"})


@pytest.mark.parametrize("grammar", sorted(BLOCKS))
def test_no_sample_line_of_those_alternatives_starts_with_another_word(grammar):
    starts = first_words(grammar, BLOCKS[grammar])
    assert starts is not None
    tree_parser = build(grammar, (grammar_dir() / f"{grammar}.lark").read_text(encoding="utf-8"))
    seen = 0
    for path in sorted(SAMPLES.glob("*.log")):
        for line in path.read_text(errors="replace").splitlines():
            try:
                tree = tree_parser.parse(line)
            except LarkError:
                continue
            if {str(node.data) for node in tree.iter_subtrees()} & set(BLOCKS[grammar]):
                seen += 1
                assert line.lstrip().startswith(starts), (path.name, line)
    assert seen > 20


@pytest.mark.parametrize("grammar", ["messages", "compiler", "environment"])
def test_the_words_shipped_with_the_tables_are_the_words_the_grammar_gives(grammar):
    from nforensics.parse.grammars import shipped
    from nforensics.parse.literals import rule_tables

    fresh = rule_tables(build(grammar, (grammar_dir() / f"{grammar}.lark").read_text(encoding="utf-8")))
    assert shipped(grammar, "words") == fresh["words"] and shipped(grammar, "prefixes") == fresh["prefixes"]
