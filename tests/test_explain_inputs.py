"""What a user sees for every kind of input: the right analysis, or one clear line on stderr and exit 2."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from conftest import REPO, SAMPLE_LOGS, SEED000, assert_clean_error, run_cli, run_cli_text


def test_stdin_gives_the_same_answer_as_the_file():
    from_file = json.loads(run_cli("explain", str(SEED000), "--format", "json").stdout)
    piped = run_cli("explain", "-", "--format", "json", input=SEED000.read_bytes())
    assert piped.returncode == 1
    from_stdin = json.loads(piped.stdout)
    assert [f["fingerprint"] for f in from_stdin["findings"]] == [f["fingerprint"] for f in from_file["findings"]]
    assert [i["source"] for i in from_stdin["inputs"]] == ["<stdin>"]


def test_a_log_whose_only_finding_is_a_warning_failed_nowhere(tmp_path):
    """nrt_close's complaint at the exit of a compile-only run is noise its signature recognises: exit 0, and the
    headline says no failure; the same line after a failure still leaves the failure's exit status."""
    noise = (SAMPLE_LOGS / "nrt_close_unexpected_state.log").read_text()
    alone = run_cli_text("explain", "-", input=noise)
    assert alone.returncode == 0
    assert "no failure diagnosed, 1 warning" in alone.stdout.splitlines()[0]
    with_failure = run_cli_text("explain", "-", input=SEED000.read_text() + noise)
    assert with_failure.returncode == 1
    assert "1 failure diagnosed, 1 warning" in with_failure.stdout.splitlines()[0]


def test_gzip_log_is_read_transparently(tmp_path):
    packed = tmp_path / "compile.log.gz"
    packed.write_bytes(gzip.compress(SEED000.read_bytes()))
    document = json.loads(run_cli("explain", str(packed), "--format", "json").stdout)
    assert document["findings"][0]["code"] == "NCC_IXLV002"


def test_empty_file_is_clean_and_says_so(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    result = run_cli("explain", str(empty))
    assert result.returncode == 0
    assert "no known Neuron failure" in result.stdout.decode()


def test_invalid_utf8_is_still_analysed(tmp_path):
    broken = tmp_path / "latin1.log"
    broken.write_bytes(b"caf\xe9 \xff\xfe\n" + SEED000.read_bytes())
    result = run_cli("explain", str(broken), "--format", "json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["findings"][0]["fields"]["barrier_index"] == 6


def test_binary_file_is_refused(tmp_path):
    blob = tmp_path / "model.neff"
    blob.write_bytes(b"\x02\x00\x00\x00\x00\x00\x00\x00" + bytes(range(256)) * 8)
    result = run_cli_text("explain", str(blob))
    assert_clean_error(result.returncode, result.stderr, "binary")


def test_missing_file(tmp_path):
    result = run_cli_text("explain", str(tmp_path / "nope.log"))
    assert_clean_error(result.returncode, result.stderr, "no such file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable_file(tmp_path):
    locked = tmp_path / "locked.log"
    locked.write_text("x")
    locked.chmod(0)
    result = run_cli_text("explain", str(locked))
    assert_clean_error(result.returncode, result.stderr, "permission denied")


def test_corrupt_gzip_is_one_line(tmp_path):
    bad = tmp_path / "bad.log.gz"
    bad.write_bytes(gzip.compress(SEED000.read_bytes())[:40])
    result = run_cli_text("explain", str(bad))
    assert_clean_error(result.returncode, result.stderr, "not a readable gzip")


def test_unknown_option_and_format_are_usage_errors():
    result = run_cli_text("explain", str(SEED000), "--no-such-option")
    assert_clean_error(result.returncode, result.stderr, "no-such-option")
    result = run_cli_text("explain", str(SEED000), "--format", "yaml")
    assert_clean_error(result.returncode, result.stderr, "yaml")


def test_version_and_help_on_every_command():
    version = run_cli("--version")
    assert version.returncode == 0 and version.stdout.decode().startswith("nforensics ")
    top = run_cli("--help")
    assert top.returncode == 0
    commands = [line.split()[1] for line in top.stdout.decode().splitlines()
                if line.startswith("│ ") and line[2] != " " and line.split()[1].isidentifier()]
    assert "explain" in commands
    for command in commands:
        result = run_cli(command, "--help")
        assert result.returncode == 0, command
        assert "Usage" in result.stdout.decode(), command
        # A flag takes no value and a repeatable option names its element: no `--verbose <bool>`, no `<list[str]>`.
        assert "<bool>" not in result.stdout.decode() and "<list[" not in result.stdout.decode(), command


def test_unknown_coded_diagnostic_is_never_dropped(tmp_path):
    log = tmp_path / "new.log"
    log.write_text("2026-01-01T00:00:00Z ERROR 1 [neuronx-cc]: [INTERNAL_ERROR] [NCC_IZZZ123] Something new broke\n")
    finding = json.loads(run_cli("explain", str(log), "--format", "json").stdout)["findings"][0]
    # No catalogue entry knows the code, but its class letter says the compiler itself failed: the family.
    assert finding["code"] == "NCC_IZZZ123" and finding["generic"] is False and finding["tier"] == "family"
    assert finding["family"] == "compiler-internal-crash" and finding["hypotheses"] and finding["workarounds"]


def test_runtime_records_run_together_on_one_line(tmp_path):
    """Multi-process NRT output interleaves records on one physical line; each is still read."""
    log = tmp_path / "interleaved.log"
    log.write_text(
        "2024-Jun-26 00:32:47.943821 30294:32381 ERROR  TDRV:generate_custom_notification_msg        nd0:nc0:h_model.id1001: "
        "Received notification generated at runtime: failed to run scatter/gather (indirect memory copy via scalar DGE), "
        "due to out-of-bound access.2024-Jun-26 00:32:47.948678 30294:32381 ERROR  NMGR:dlr_infer   Inference completed with err: 1006.\n")
    finding = json.loads(run_cli("explain", str(log), "--format", "json").stdout)["findings"][0]
    assert finding["code"] == "NRT_EXEC_OOB"
    assert finding["fields"] == {"dge_kind": "scalar", "status": 1006}


def test_explain_path_imports_no_heavy_modules():
    """`explain` must start fast: pandas, Ray, matplotlib, drain3 and jsonschema stay off its import path."""
    probe = (
        "import sys\n"
        "from nforensics.cli import main\n"
        f"sys.argv = ['nforensics', 'explain', {str(SEED000)!r}, '--format', 'json']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('pandas', 'ray', 'matplotlib', 'drain3', 'jsonschema', 'pyarrow') if m in sys.modules)\n"
        "sys.stderr.write('HEAVY=' + ','.join(heavy))\n"
    )
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert "HEAVY=" in result.stderr
    assert result.stderr.rsplit("HEAVY=", 1)[1].strip() == "", result.stderr


def test_a_notebook_stream_on_one_line_is_read_line_by_line(tmp_path):
    """A saved notebook's stderr stream (or a JSON log record) holds a whole log in one physical line: the
    lines it decodes to are read one by one, so the words of two of them never meet as if printed together
    (the cache's "Using a cached neff" and a rank's failure are no cache replay)."""
    text = (SAMPLE_LOGS / "family_mpmd-graph-mismatch.log").read_text()
    stream = tmp_path / "cell.json"
    stream.write_text(json.dumps({"name": "stderr", "output_type": "stream", "text": text}) + "\n")
    plain, cell = (json.loads(run_cli("explain", str(path), "--format", "json").stdout) for path in
                   (SAMPLE_LOGS / "family_mpmd-graph-mismatch.log", stream))
    assert [f["family"] for f in cell["findings"]] == [f["family"] for f in plain["findings"]]
    evidence = cell["findings"][0]["evidence"]
    assert evidence and all(e["line"] == 1 and "output_type" not in e["text"] for e in evidence)


ROOT_CHAIN = ("2024-04-12 07:13:08.000246:  271334  INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: neuronx-cc compile "
              "--target=trn1 --framework=XLA /tmp/w/model.hlo_module.pb --output /tmp/w/model.neff\n"
              ".root = /usr/lib/python3.8/multiprocessing/process.py\nroot = /usr/lib/python3.8/multiprocessing\n"
              "root = /usr/lib/python3.8\nroot = /usr/\n")


@pytest.mark.parametrize("before", [0, 3])
def test_a_structure_spread_over_the_lines_of_a_decoded_line_is_read_as_in_the_plain_log(before):
    """neuronx-cc's `root = ` chain (the compile died in that file) is a structure of several lines: decoded
    from one physical line (a notebook stream, a JSON log record), its lines are still one after another,
    and the finding points at the physical line they came from, wherever that line is in the input."""
    from nforensics.pipeline import analyze_text

    head = "".join(f"epoch {n}: loss 0.1{n}\n" for n in range(before))
    stream = json.dumps({"name": "stderr", "output_type": "stream", "text": ROOT_CHAIN})
    plain, cell = analyze_text(head + ROOT_CHAIN), analyze_text(head + stream + "\nepoch 9: done\n")
    assert [f.family for f in cell.findings] == [f.family for f in plain.findings] == ["compiler-internal-crash"]
    assert {e.line for f in cell.findings for e in f.evidence} == {before + 1}
    assert cell.total_lines == before + 2


def test_lines_after_a_decoded_line_keep_their_physical_numbers():
    from nforensics.pipeline import analyze_text

    stream = json.dumps({"name": "stdout", "output_type": "stream", "text": "step 1\nstep 2\nstep 3\n"})
    log = f"{stream}\nstarting\nRuntimeError: NRT_EXEC_OOB: DGE out of bounds access on queue 3\n"
    finding = analyze_text(log).failures()[0]
    assert [e.line for e in finding.evidence] == [3]


def test_every_line_an_analysis_names_after_a_decoded_line_is_the_physical_one():
    """Evidence, a hypothesis's evidence and the environment's lines all point at the input's own lines."""
    from nforensics.pipeline import analyze_text

    stream = json.dumps({"name": "stdout", "output_type": "stream", "text": "a\nb\nc\n"})
    analysis = analyze_text(f"{stream}\n$ torchrun --nproc_per_node=32 train.py\nneuronx-cc==2.14.213.0\nKilled\n")
    top = analysis.findings[0]
    assert (top.family, [e.line for e in top.evidence]) == ("host-oom-kill", [4])
    assert {h.id: [e.line for e in h.evidence] for h in top.hypotheses}["parallel-compile-workers"] == [2]
    assert analysis.environment.lines == {"pkg:neuronx-cc": 3}


def test_the_physical_line_of_each_decoded_line():
    from nforensics.line_numbers import physical_lines
    from nforensics.parse import assemble

    # physical 1 holds 3 lines, 2 is plain, 3 holds 2, 4 is plain
    raw = [json.dumps("a\nb\nc"), "d", json.dumps("e\nf"), "g"]
    log, _ = assemble("x", enumerate(raw, start=1))
    physical = physical_lines(log)
    assert [physical(n) for n in range(1, 8)] == [1, 1, 1, 2, 3, 3, 4]
    assert log.total_lines == 4


def test_shell_completion_is_offered_and_completes_commands():
    # (typer detects the shell from the process tree, which a test runner's workers may not show: name it.)
    script = run_cli_text("--show-completion", "bash", env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"})
    assert script.returncode == 0 and "_nforensics_completion" in script.stdout
    done = run_cli_text(env={"_NFORENSICS_COMPLETE": "complete_bash", "COMP_WORDS": "nforensics exp", "COMP_CWORD": "1"})
    assert done.stdout.split() == ["explain"]


def test_a_neff_and_a_kernel_source_given_to_explain_always_say_what_they_told(tmp_path):
    """--neff and --source facts are shown with the file, in the terminal and in JSON, whether or not a
    hypothesis used them: the user sees that the file was read and what it said."""
    from fakes.neff import write_neff

    neff = write_neff(tmp_path)
    source = REPO / "tests" / "nki_kernels" / "seed000_lnc2_sendrecv.py"
    args = ("explain", str(SEED000), "--neff", str(neff), "--source", str(source))
    terminal = run_cli_text(*args).stdout
    assert f"NEFF read: {neff}: " in terminal
    assert f"NKI source read: {source}: " in terminal and "more with --verbose" in terminal
    verbose = run_cli_text(*args, "--verbose").stdout
    assert "nki.uses_sendrecv=True" in verbose and "more with --verbose" not in verbose
    (analysis,) = json.loads(run_cli_text(*args, "--format", "json").stdout)["inputs"]
    by_kind = {a["kind"]: a for a in analysis["artifacts"]}
    assert by_kind["neff"]["facts"]["neff.lnc_size"] == 2 and by_kind["source"]["facts"]["nki.uses_sendrecv"] is True
