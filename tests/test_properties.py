"""Properties that hold for any input (hypothesis), over ingest, parse, the whole explain path and redaction:
nforensics always answers (bad input is one InputError, never a traceback), what it cites points inside the
input, its JSON always serialises, and a planted secret never survives redaction whatever shares its line.
CI runs a fixed, derandomised budget (a failure reproduces); bench/fuzz.py runs the same properties longer
and reports the slowest input per megabyte."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nforensics.errors import InputError
from nforensics.ingest import read_lines
from nforensics.line_numbers import physical_lines
from nforensics.parse import assemble
from nforensics.pipeline import analyze_lines
from nforensics.records import TIER_RANK
from nforensics.redact import Redactor
from properties import line_with_secret, log_lines

BUDGET = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@BUDGET
@given(log_lines)
def test_explain_answers_any_log_and_cites_only_its_lines(lines):
    analysis = analyze_lines("<fuzz>", enumerate(lines, 1))
    for finding in analysis.findings:
        assert finding.tier in TIER_RANK
        assert all(1 <= e.line <= max(len(lines), 1) for e in finding.evidence if e.line), finding.evidence
    analysis.model_dump_json()  # every finding serialises, whatever text it quotes


@BUDGET
@given(log_lines)
def test_parse_keeps_its_records_inside_the_input(lines):
    log, retained = assemble("<fuzz>", enumerate(lines, 1))
    physical = physical_lines(log)
    # (a physical line that decodes to several, '0\\n1' escaped, numbers each on from it: back, its own number)
    numbers = [physical(line.line) for line in retained]
    assert numbers == sorted(numbers) and all(1 <= n <= len(lines) for n in numbers)
    assert len({(line.line, line.text) for line in retained}) == len(retained)
    for record in [*log.diagnostics, *log.nrt_statuses, *log.tracebacks, *log.events, *log.outcomes]:
        assert 1 <= physical(record.line) <= len(lines)


@BUDGET
@given(st.binary(max_size=2000), st.booleans())
def test_any_bytes_are_read_or_refused_with_one_clear_error(data, compressed):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("input.log.gz" if compressed else "input.log")
        path.write_bytes(gzip.compress(data) if compressed and data[:1] != b"x" else data)
        try:
            _, lines = read_lines(str(path))
            numbered = list(lines)
        except InputError as error:
            assert str(error) and "\n" not in str(error)
            return
        assert [n for n, _ in numbered] == list(range(1, len(numbered) + 1))


@BUDGET
@given(line_with_secret(), st.lists(st.sampled_from(["", "after a wrap", "  continued"]), max_size=2))
def test_a_planted_secret_never_survives_redaction_whatever_shares_its_line(planted, following):
    secret, line = planted
    redacted = Redactor().redact("\n".join([line, *following]))
    assert secret not in redacted


@BUDGET
@given(log_lines)
def test_redacting_twice_changes_nothing_more(lines):
    redactor = Redactor()
    once = redactor.redact("\n".join(lines))
    assert redactor.redact(once) == once
