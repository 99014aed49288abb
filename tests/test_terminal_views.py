"""The terminal views (issue 15): one screen per finding by default, everything under `--verbose`, one line per
finding under `--brief`, totals for folder runs; a note several lines support is said once; the log's own
escape sequences never reach the output."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

from conftest import SAMPLE_LOGS, cli, run_cli_text
from nforensics.pipeline import analyze_path
from nforensics.render.terminal import render_text

SEED003 = "sample_logs/seed003_ncc_inla001_xla_use_bf16.log"
CCOM = "sample_logs/ccom_bootstrap_no_interface.log"
NEGATIVE = Path(__file__).parent / "negative"


def test_the_median_finding_fits_in_twenty_lines_by_default():
    per_finding = []
    for log in sorted(SAMPLE_LOGS.glob("*.log")):
        analysis = analyze_path(str(log))
        if analysis.findings:
            text = render_text([analysis], color=False, level="default")
            per_finding.append(len(text.splitlines()) / len(analysis.findings))
    assert len(per_finding) > 100
    assert statistics.median(per_finding) <= 20, statistics.median(per_finding)


def test_the_default_view_answers_and_names_what_verbose_adds():
    code, out, _ = cli("explain", SEED003)
    assert code == 1
    for shown in ("[NCC_INLA001] More than 8 activation tables", "where:    line 8",
                  "cause:    Global bf16 cast (XLA_USE_BF16=1) combined with --auto-cast=none",
                  "+ XLA_USE_BF16=1 casts the whole graph to bf16  [line 1: XLA_USE_BF16=1]",
                  "try:      Cast the model instead of setting XLA_USE_BF16",
                  "--verbose: what it means, fields, 3 more causes"):
        assert shown in out, shown
    for hidden in ("What it means", "Extracted fields", "References", "activation-set grouping",
                   "github.com/aws-neuron/aws-neuron-sdk/issues/1314"):
        assert hidden not in out, hidden
    assert len(out.splitlines()) <= 20


def test_verbose_shows_every_section():
    code, out, _ = cli("explain", "--verbose", SEED003)
    assert code == 1
    for section in ("What failed", "Where", "Extracted fields", "What it means", "Why it may happen",
                    "What to try", "References", "activation-set grouping",
                    "https://github.com/aws-neuron/aws-neuron-sdk/issues/1314"):
        assert section in out, section


def test_fixed_in_is_part_of_the_default_view():
    for log in sorted(SAMPLE_LOGS.glob("*.log")):
        analysis = analyze_path(str(log))
        fixed = [f for f in analysis.findings if f.fixed_in]
        if fixed:
            out = render_text([analysis], color=False, level="default")
            assert "fixed in:" in out and fixed[0].fixed_in.version in out
            return
    pytest.skip("no sample log has a finding fixed in a release")


def test_a_note_several_lines_support_is_said_once():
    for level in ("default", "verbose"):
        out = render_text([analyze_path(CCOM)], color=False, level=level)
        assert out.count("+ collectives messages appear in the log") == 1, level
        assert "[lines 2, 3: " in out, level


BRIEF = re.compile(r"^(?P<path>\S+):(?P<line>\d+): (?P<code>\S+) (?P<title>.+?)(?: -> (?P<cause>.+))?$")


def test_brief_is_one_line_per_finding_and_a_totals_line():
    code, out, _ = cli("explain", "--brief", SEED003, CCOM)
    lines = out.splitlines()
    assert code == 1 and len(lines) == 3 + 1
    first = BRIEF.match(lines[0])
    assert first and first["path"] == SEED003 and first["line"] == "8" and first["code"] == "NCC_INLA001"
    assert first["cause"] == "Global bf16 cast (XLA_USE_BF16=1) combined with --auto-cast=none"
    assert all(BRIEF.match(line) for line in lines[:3]), lines
    assert lines[-1] == "3 failures in 2 inputs: 2 diagnosed, 0 unrecognised, 0 with nothing"


def test_a_folder_run_ends_with_its_totals(tmp_path):
    (tmp_path / "a_known.log").write_text(Path(SEED003).read_text())
    (tmp_path / "b_benign.log").write_text(next(NEGATIVE.glob("benign_*.log")).read_text())
    (tmp_path / "c_unknown.log").write_text("ERROR: frobnicator quux overflowed badly\n")
    json_out = run_cli_text("explain", tmp_path, "--format", "json").stdout
    assert '"tier": "generic"' in json_out  # the third is a failure no catalogue entry knows
    for args in ((), ("--brief",)):
        code, out, _ = cli("explain", *args, tmp_path)
        assert code == 1
        assert out.splitlines()[-1] == "2 failures in 3 inputs: 1 diagnosed, 1 unrecognised, 1 with nothing", args
    single = cli("explain", SEED003).stdout
    assert "diagnosed," not in single  # one input, default view: its header says it all


def test_brief_and_verbose_together_are_a_usage_error():
    code, _, err = cli("explain", "--brief", "--verbose", SEED003)
    assert code == 2 and "--verbose and --brief" in err


def _escaped(tmp_path: Path) -> Path:
    """seed003 with every line wrapped in colour, a clipboard write, a screen clear, a hyperlink, 8-bit CSI."""
    lines = Path(SEED003).read_text().splitlines()
    log = tmp_path / "escapes.log"
    log.write_text("".join(f"\x1b[31m\x1b]52;c;cGF5bG9hZA==\x07{line}\x1b[0m\x1b[2J"
                           f"\x1b]8;;https://evil.example/\x1b\\x\x1b]8;;\x1b\\\x9b1m\n" for line in lines))
    return log


OURS = re.compile(r"\x1b\[[0-9;]*m|\x1b\]8;[^\x1b\x07]*(?:\x1b\\|\x07)")  # rich's colours and its hyperlinks


@pytest.mark.parametrize("args", [(), ("--verbose",), ("--brief",)])
def test_escapes_in_the_log_never_reach_the_output(tmp_path, args):
    log = _escaped(tmp_path)
    plain = run_cli_text("explain", *args, log)
    assert plain.returncode == 1 and "NCC_INLA001" in plain.stdout
    assert "\x1b" not in plain.stdout and "\x9b" not in plain.stdout
    coloured = run_cli_text("--color", "always", "explain", *args, log).stdout
    left = OURS.sub("", coloured)
    assert "\x1b" not in left and "\x9b" not in left and "\x07" not in left
    assert "evil.example" not in coloured and "cGF5bG9hZA" not in coloured


def test_a_log_that_stops_at_the_compilers_command_line_gets_a_note_and_exit_0(tmp_path):
    log = tmp_path / "paste.log"
    log.write_text("2025-01-30 22:02:45.000040:  209  INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: neuronx-cc "
                   "compile --framework=XLA /tmp/w/model.MODULE_1+d41d.hlo_module.pb --target=trn1\n")
    code, out, _ = cli("explain", log)
    assert code == 0  # nothing failed that the log shows
    said = " ".join(out.split())  # (the headline wraps where the temporary folder's path is long)
    assert "paste.log: no failure diagnosed, 1 note " in said
    assert "The log ends at the compiler's command line" in said
    # One line more, the compiler's progress dot: the compile ran and the log stops inside it, a failure.
    log.write_text(log.read_text() + ".\n")
    assert cli("explain", log)[0] == 1


@pytest.mark.parametrize("fmt", ["github", "sarif", "junit", "gitlab", "markdown"])
def test_a_note_alone_fails_no_ci_format(tmp_path, fmt):
    """The note says where the log stops; a CI job that runs explain in any format must not fail on it."""
    log = tmp_path / "paste.log"
    log.write_text("INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: neuronx-cc compile --target=trn1 model.pb\n")
    assert cli("explain", log, "--format", fmt)[0] == 0
    assert cli("explain", log, "--format", "github", "--format", f"sarif={tmp_path / 'out.sarif'}")[0] == 0
    # The same log with an error after the command fails every format.
    log.write_text(log.read_text() + "RuntimeError: neuronx-cc failed with 70\n")
    assert cli("explain", log, "--format", fmt)[0] == 1
