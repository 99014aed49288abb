"""Hard-wrapped pastes (nforensics/parse/rewrap.py): a terminal's width is recognised and the lines it cut are
one line again; a log that was not wrapped, even one repeating a long message, passes through unchanged."""

from __future__ import annotations

import random

import pytest

from conftest import ALL_SAMPLE_LOGS
from nforensics.ingest import MAX_LINE_CHARS, text_lines
from nforensics.parse import assemble
from nforensics.parse.rewrap import margin, Rejoined, wrap_width
from nforensics.pipeline import analyze_text
from perturb import PERTURBATIONS

LOGICAL = [
    "2024-10-28T17:46:40Z ERROR 9958 [WalrusDriver]: The number of instructions generated (11843392) exceeds "
    "the maximum allowed per NEFF (5000000). Consider reducing the size of the graph.",
    '2025-03-14T09:21:37Z ERROR 40712 [neuronx-cc]:   File "neuronxcc/starfish/penguin/Compile.py", line 307, '
    "in neuronxcc.starfish.penguin.Compile.compile_cu",
    "short line",
    "2025-03-14T09:21:38Z ERROR 40712 [neuronx-cc]: a message long enough to be cut by the terminal at eighty "
    "columns, then once more",
]
WRAPPED = "".join(line[i:i + 80] + "\n" for line in LOGICAL for i in range(0, len(line), 80))


def test_a_paste_wrapped_at_a_terminals_width_is_joined_again():
    lines = list(Rejoined(text_lines(WRAPPED)))
    assert [text for _, text in lines] == LOGICAL
    starts = [1]
    for line in LOGICAL[:-1]:
        starts.append(starts[-1] + -(-len(line) // 80))
    assert [n for n, _ in lines] == starts  # each joined line keeps its first line's number


def test_repeated_records_of_one_length_are_not_a_wrap():
    record = "2024-Jun-02 04:05:36.4289{}   273:478   ERROR   NRT:nrt_load   Unsupported topology: consider using inf2"
    text = "".join(record.format(i) + "\n" for i in range(10, 15))
    assert wrap_width([line for _, line in text_lines(text)]) is None
    assert list(Rejoined(text_lines(text))) == list(text_lines(text))


def test_a_log_with_a_line_longer_than_the_common_length_was_not_wrapped():
    assert wrap_width(["x" * 80, "continued here", "y" * 80, "and here", "z" * 80, "more"]) == 80
    assert wrap_width(["x" * 80, "continued here", "y" * 80, "and here", "z" * 80, "more", "w" * 81]) is None
    assert wrap_width(["x" * 80, "", "y" * 80, "", "z" * 80, ""]) is None  # a wrap never goes on in a blank line


@pytest.mark.parametrize("path", ALL_SAMPLE_LOGS, ids=lambda p: p.name)
def test_no_sample_log_is_changed_and_its_80_column_wrap_is_undone(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = list(text_lines(text))
    assert [line for _, line in Rejoined(lines)] == [line for _, line in lines]
    wrapped = PERTURBATIONS["hard_wrap_80"](text, random.Random(0))
    long_lines = [line.expandtabs(8) for _, line in lines if len(line.expandtabs(8)) >= 80]
    # A line of exactly a multiple of the width cannot be told from a wrapped one; a wrap cut at two spaces
    # reads as an indented line of its own.
    if len(long_lines) >= 3 and not any(len(line) % 80 == 0 or any(line[i:i + 2] == "  " for i in range(80, len(line), 80))
                                        for line in long_lines):
        assert [line for _, line in Rejoined(text_lines(wrapped))] == [line.expandtabs(8) for _, line in lines]


def test_a_join_is_never_longer_than_ingest_lets_a_line_be():
    # Lines of exactly the width that keep going on: linear work, and no joined line past the cap.
    lines = ["x" * 80, "a" * 80, "y" * 80, "a" * 80, "z" * 80, *["a" * 79 + " "] * 5000]
    joined = list(Rejoined(enumerate(lines, 1)))
    assert max(len(text) for _, text in joined) <= MAX_LINE_CHARS


def test_a_banner_padded_to_the_width_ends_its_line():
    banner = "=" * 30 + " short test summary info " + "=" * 25
    lines = [banner, "ERROR 70 a", "_" * 30 + " test_x " + "_" * 42, "E   x", "=" * 80, "FAILED t"]
    assert [text for _, text in Rejoined(enumerate(lines, 1))] == lines


def test_rows_of_a_box_drawn_to_the_width_end_at_its_border():
    # rich's traceback panel and the compiler's tables are drawn to the terminal's width, every row of it
    rows = ["╭" + "─" * 20 + " Traceback (most recent call last) " + "─" * 23 + "╮",
            "│ /home/ubuntu/run.py:12 in <module>" + " " * 43 + "│", "│" + " " * 78 + "│",
            "│ ❱  12 print(model.generate(**inputs))" + " " * 40 + "│", "╰" + "─" * 78 + "╯", "KeyError: 4096"]
    assert {len(row) for row in rows[:-1]} == {80}
    assert [text for _, text in Rejoined(enumerate(rows, 1))] == rows
    # (the same rows without their right border are a wrapped paste, joined)
    assert len(list(Rejoined(enumerate([r[:-1] + "x" for r in rows[:-1]] + rows[-1:], 1)))) < len(rows)


def test_a_paste_indented_as_a_whole_is_set_back_to_its_own_margin():
    """A Markdown code block indents every line by four spaces; the log's own indentation comes after it."""
    log = ("2024-Jan-01 10:00:00.000100 77:77 ERROR  TDRV:tdrv_init_mla_phase1  Could not open the nd0\n"
           "Traceback (most recent call last):\n"
           '  File "/home/u/train.py", line 12, in <module>\n'
           "    device = xm.xla_device()\n"
           "RuntimeError: Bad StatusOr access: INTERNAL: nrt_init failed. Status = 1\n")
    indented = "".join("    " + line if line.strip() else line for line in log.splitlines(True))
    plain, shifted = analyze_text(log), analyze_text(indented)
    assert [f.signature for f in shifted.findings] == [f.signature for f in plain.findings]
    assert [line.text for line in (assemble("<paste>", text_lines(indented))[1])] == [line.text for line in assemble("<paste>", text_lines(log))[1]]
    # One line at the first column: no shared margin, nothing is taken off.
    assert margin(["x", "    y"]) == "" and margin(["\tx", "\t  y", ""]) == "\t"


def test_a_paste_commented_out_in_a_script_is_read_behind_its_comment_marker():
    """A log kept as a comment block (`# ` on every line, hard-wrapped at 80 by the editor) reads like the log;
    gdb's `#0 `, `#1 ` frames are no comment marker."""
    message = ("2025-09-11 12:23:08.000052:  9058  ERROR ||NEURON_CC_WRAPPER||: Failed compilation with ['neuronx-cc', "
               "'compile', '--framework=XLA', 'model.hlo_module.pb', '--target=trn1']: [DVR002]  Internal transformation "
               "failed - Please open a support ticket at https://github.com/aws-neuron/aws-neuron-sdk/issues/new.")
    commented = "".join(f"# {message[i:i + 78]}\n" for i in range(0, len(message), 78))
    assert [f.family for f in analyze_text(commented).findings] == [f.family for f in analyze_text(message + "\n").findings]
    assert margin(["# a", "# b"]) == "# " and margin(["// a", "//   b"]) == "// "
    assert margin(["#0  0x01 in raise ()", "#1  0x02 in abort ()"]) == ""


def test_a_wrap_inside_a_records_padding_goes_on_in_the_indented_next_line():
    records = [("2025-Mar-11 09:41:07.118204 40211:40388 ERROR  TDRV:v2_cc_execute" + " " * 20
                + f"[nec_dev 4, gid 4] MPMD execution detected: {what}") for what in
               ("this rank runs a graph its peers did not load", "peers loaded a different NEFF than this rank",
                "collective ids of this rank and its peers differ")]
    wrapped = [record[i:i + 80] for record in records for i in range(0, len(record), 80)]
    joined = [text for _, text in Rejoined(enumerate(wrapped, 1))]
    assert joined == records
    # A full line that ends in a word, followed by an indented line: that line is a frame of its own.
    frame = ["x" * 79 + "y", '  File "a.py", line 1, in <module>'] * 3
    assert [text for _, text in Rejoined(enumerate(frame, 1))] == frame


def test_one_message_repeated_at_the_longest_length_is_no_terminal_width():
    """A log whose longest line is one warning printed again and again (numbers aside), each followed by a
    record of another shape, was not wrapped: one message is one piece of evidence, not one per copy."""
    warning = "2026-03-02T18:20:{:02d}Z WARNING 48240 [StaticProfiler]: matmul-based transposes take up {:.1f} percent"
    lines = []
    for n in range(6):
        lines += [warning.format(n, 10 + n), f"2026-03-02 18:20:0{n},123 - train - step {n} loss 2.{n}"]
    assert wrap_width(lines) is None
    assert [text for _, text in Rejoined(enumerate(lines, 1))] == lines


SHORT_PASTE = """\
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/site-packages/neuronx_distributed/parallel_layers/utils.py", line 62, in range_fn
    assert vocab_size % tp == 0
AssertionError: vocab size 50257 is not divisible by the tensor parallel degree 8
"""


def _wrapped_at(text: str, width: int) -> str:
    return "".join(line[i:i + width] + "\n" for line in text.splitlines() for i in range(0, max(len(line), 1), width))


def test_a_short_paste_with_a_frame_cut_inside_its_path_is_joined_again():
    """Two lines of the wrap width are too few to show a terminal's width; a frame whose file path goes on in
    the next line is one by itself (a path holds no line break)."""
    wrapped = _wrapped_at(SHORT_PASTE, 80)
    assert wrap_width(wrapped.splitlines()) == 80
    log, _ = assemble("x", text_lines(wrapped))
    assert log.tracebacks[0].frames[0].file.endswith("parallel_layers/utils.py")
    assert log.tracebacks[0].frames[0].lineno == 62


def test_a_frame_head_without_its_path_closed_after_it_is_no_wrap():
    lines = ['  File "/usr/local/lib/python3.10/site-packages/neuronx_distributed/parallel_layers/uti',
             "ls.py was not found", "AssertionError: vocab size 50257 is not divisible by 8"]
    assert wrap_width(lines) is None


def test_a_short_paste_with_a_frame_cut_inside_its_function_name_is_joined_again():
    lines = ['  File "/python3.9/site-packages/torch_neuron/__init__.py", line 60, in _registe', "r_extension",
             "    torch.ops.load_library(neuron_op_filename)",
             "OSError: /python3.9/site-packages/torch_neuron/lib/libtorchneuron.so: undefined ",
             "symbol: _ZN5torch6detail10class_baseC2ERKSsS3_SsRKSt9type_infoS6_"]
    assert wrap_width(lines) == 80
    log, _ = assemble("x", text_lines("Traceback (most recent call last):\n" + "\n".join(lines) + "\n"))
    assert log.tracebacks[0].frames[0].function == "_register_extension"
    assert log.tracebacks[0].message.endswith("undefined symbol: _ZN5torch6detail10class_baseC2ERKSsS3_SsRKSt9type_infoS6_")


@pytest.mark.parametrize("after", ["KeyboardInterrupt", "    main()", "Model.forward", "raise", "return"])
def test_a_frame_at_the_longest_length_followed_by_a_line_of_its_own_is_no_wrap(after):
    lines = ['  File "/home/user/projects/neuron/inference/run_llama_generation.py", line 212, in main', after]
    assert wrap_width(lines) is None


def test_a_short_paste_with_a_frame_cut_inside_its_line_number_is_joined_again():
    lines = ["Traceback (most recent call last):",
             'File "/home/ubuntu/anaconda3/envs/aws_neuron_tensorflow_p36/bin/tensorboard", li', "ne 7, in <module>",
             "   from tensorflow.tensorboard.tensorboard import main"]
    assert wrap_width(lines) == 80
