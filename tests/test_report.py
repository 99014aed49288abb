"""`nforensics report`: the aws-neuron-sdk bug form filled from a log, its prefilled URL, the bundle.

Runs the CLI in-process (argv in, stdout/stderr/exit code/files out). The logs are synthetic, written
here or in test_redact.py (PLANTED_LOG, every secret kind), plus the seed sample logs in sample_logs/
whose reports are compared with tests/golden/ (regenerate with NFORENSICS_UPDATE_GOLDEN=1 after a
deliberate change, and review the diff).
"""

from __future__ import annotations

import difflib
import gzip
import json
import os
import re
import tarfile
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import REPO, SAMPLE_LOGS, assert_clean_error, cli, run_cli
from nforensics.records import Analysis, Environment, Finding, Hypothesis, Workaround
from nforensics.redact import Redactor
from nforensics.render.report import FIELDS, LEGACY_FIELDS, issue_form
from nforensics.render.report_outputs import URL_LIMIT, URL_POINTER
from nforensics.report.build import build_report
from nforensics.report.inputs import ReportInput
from nforensics.report.workarounds import already_applied
from test_redact import PLANTED_LOG, SECRETS, assert_no_secret

GOLDEN = Path(__file__).resolve().parent / "golden"
SEEDS = sorted(SAMPLE_LOGS.glob("seed*.log"))
_FINGERPRINT = re.compile(r"fingerprint `[0-9a-f]+` \(v\d+\)")

ERROR_LINES = """\
[INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers to have name
LocalSendRecv-0_476_sr_cb_begin, but core barrier 6 in subgraph 0
on core 1 has name LocalSendRecv-0_176_sr_cb_begin
"""


def headings(markdown: str) -> list[str]:
    return re.findall(r"^### (.+)$", markdown, re.M)


@pytest.fixture
def planted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.log").write_text(PLANTED_LOG)
    (tmp_path / "repro.py").write_text(f"# run as /home/alice with {SECRETS['aws-access-key-id'][0]}\nimport torch\n")
    (tmp_path / "model.hlo").write_text('HloModule m\n  %p = f32[2,2048] parameter(0), metadata={source_file="/home/alice/m.py"}\n')
    return tmp_path


# ------------------------------------------------------------------ no secret leaves

def test_planted_secrets_reach_no_report_url_or_bundle_file(planted):
    result = cli(
        "report", "job.log", "--repro", "repro.py", "--bundle", "share",
        "--hlo", "model.hlo", "--url", "-o", "report.md",
    )
    assert result.returncode == 0, result.stderr
    report = (planted / "report.md").read_text()
    assert_no_secret(report, "report.md")
    assert "[redacted:" in report and "Redacted before sharing" in report.splitlines()[-1]
    # The URL printed (the full report is over 8 KB: long fields point at report.md) and every value in it.
    url = result.stdout.strip()
    assert url.startswith("https://github.com/aws-neuron/aws-neuron-sdk/issues/new?template=bug-report.yml")
    assert len(url) <= URL_LIMIT
    query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    assert_no_secret(" ".join(query.values()), "URL")
    assert query["context"] == URL_POINTER and query["instancetype"].startswith("Not stated in the log")
    assert "leaves out context" in result.stderr and "paste those from report.md" in result.stderr
    # Every file of the folder and of the archive beside it.
    folder, archive = planted / "share", planted / "share.tar.gz"
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted(["MANIFEST.md", "report.md", "env.json", "flags.txt", "job.log", "repro.py", "model.hlo"])
    for path in folder.iterdir():
        assert_no_secret(path.read_text(), f"bundle file {path.name}")
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile()]
        assert sorted(Path(m.name).name for m in members) == names
        for member in members:
            assert_no_secret(tar.extractfile(member).read().decode(), f"archive member {member.name}")
    # One redactor for everything: the log and the report use the same placeholder for the same host.
    host = re.search(r"Nodename: (\[redacted:hostname-\d+\])", report).group(1)
    assert f"Nodename: {host}" in (folder / "job.log").read_text()


def test_full_prefilled_url_carries_every_field_and_no_secret(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    secret_lines = (
        f"export NEURON_COMPILE_CACHE_URL=s3://{SECRETS['s3-bucket'][0]}/cache\n"
        f"ubuntu@{SECRETS['hostname'][0]}:~$ AWS_SECRET_ACCESS_KEY={SECRETS['aws-secret-key'][0]} python /home/alice/run.py\n"
    )
    (tmp_path / "short.log").write_text(secret_lines + ERROR_LINES)
    result = cli("report", "short.log", "--url", "--instance", "trn2.48xlarge")
    assert result.returncode == 0 and not _notes_other_than_duplicates(result.stderr)
    url = result.stdout.strip()
    assert len(url) <= URL_LIMIT
    query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    assert query["template"] == "bug-report.yml" and query["title"].startswith("[Bug] NCC_IXLV002")
    assert set(query) == {"template", "title"} | {i for i, _ in FIELDS if i != "regression"}
    assert query["instancetype"] == "trn2.48xlarge"
    assert "LocalSendRecv-0_476_sr_cb_begin" in query["description"]
    assert_no_secret(" ".join(query.values()), "full URL")


def test_no_redact_keeps_secrets_and_says_so(planted):
    result = cli("report", "job.log", "--no-redact")
    assert result.returncode == 0
    assert "/tmp/bob/neuroncc_compile_workdir" in result.stdout
    assert "Redaction was turned off (--no-redact)" in result.stdout


# ------------------------------------------------------------------ decided and redacted, then written

def test_catalogue_advice_is_not_taken_for_a_user_name():
    """The report is redacted before it is written as Markdown: the `/tmp/<user>/` of a hypothesis's advice
    (escaped to `\\<user>` in Markdown) is a placeholder of the catalogue, not a user name to mask."""
    check = "Open log-neuron-cc.txt in /tmp/<user>/neuroncc_compile_workdir/<uuid>/."
    finding = Finding(code=None, signature="crash", title="Crash", component="compiler", summary="It crashed.",
                      fingerprint="0", hypotheses=[Hypothesis(id="bug", title="A bug", score=0.5, check=check)])
    form = issue_form(build_report(ReportInput(analysis=Analysis(source="x.log", findings=[finding])), Redactor()))
    assert "/tmp/\\<user>/neuroncc_compile_workdir" in form.fields["solution"]
    assert form.redaction == {} and "nothing to mask was found" in form.fields["context"]


def test_redaction_counts_what_the_report_shows():
    """A value the report shows in two fields (the compiler flags: workload and reproduction) is masked, and
    counted, twice."""
    environment = Environment(compiler_flags=["--logfile=/home/alice/compile.log"])
    report = build_report(ReportInput(analysis=Analysis(source="x.log", environment=environment)), Redactor())
    form = issue_form(report)
    assert "alice" not in json.dumps(form.fields) and "alice" not in report.model_dump_json()
    assert form.redaction == {"user": 2}


# ------------------------------------------------------------------ the form's shape and words

def test_markdown_follows_the_form_ids_and_labels_in_order(tmp_path):
    (tmp_path / "e.log").write_text(ERROR_LINES)
    result = cli("report", str(tmp_path / "e.log"))
    assert result.returncode == 0
    assert result.stdout.startswith("# [Bug] NCC_IXLV002: ")
    assert headings(result.stdout) == [label for _, label in FIELDS]
    assert re.findall(r"<!-- form field id: (\S+) -->", result.stdout) == [i for i, _ in FIELDS]
    assert "- [ ] Select this option if this issue appears to be a regression." in result.stdout
    assert "```text\n1 | [INTERNAL_ERROR] [NCC_IXLV002]" in result.stdout  # numbered excerpt


def test_json_has_every_field_id_of_both_form_versions(tmp_path):
    (tmp_path / "e.log").write_text("neuronx-cc 2.23.6484.0+3b612583\ntorch 2.9.0\n" + ERROR_LINES)
    result = cli("report", str(tmp_path / "e.log"), "--format", "json")
    payload = json.loads(result.stdout)
    assert list(payload["fields"]) == [i for i, _ in FIELDS + LEGACY_FIELDS]
    assert payload["template"] == "bug-report.yml" and payload["repository"] == "aws-neuron/aws-neuron-sdk"
    assert payload["fields"]["neuronx-cc-version"] == "NeuronX Compiler version 2.23.6484.0+3b612583"
    assert "torch 2.9.0" in payload["fields"]["frameworks-used"]
    assert "neuronx-cc 2.23.6484.0+3b612583" in payload["fields"]["release"]


# The repository's auto-label workflow (aws-neuron-sdk .github/workflows/auto-label-issues.yml) matches
# lower-cased substrings and a few regexes. This is a reduced test double of its use-case and hardware rules.
_USE_CASE_WORDS = {
    "Inference": ("infer", "predict", "serve", "endpoint", "deploy", "real-time", "realtime"),
    "Training": ("train", "learn", "loss", "gradient", "backward", "backprop", "epoch", "checkpoint", "fine-tun"),
}
_HARDWARE = {"Trn1": r"trn1|trainium(?!\s*2)", "Trn2": r"trn2|trainium\s*2", "Inf1": r"inf1", "Inf2": r"inf2"}


def auto_labels(text: str) -> set[str]:
    lower = text.lower()
    labels = {label for label, words in _USE_CASE_WORDS.items() if any(w in lower for w in words)}
    return labels | {label for label, rx in _HARDWARE.items() if re.search(rx, lower)}


def test_workload_and_instance_words_drive_the_repository_labels(tmp_path):
    log = "model = torch_neuronx.trace(model, example)\n" + ERROR_LINES
    (tmp_path / "e.log").write_text(log)
    result = cli("report", str(tmp_path / "e.log"), "--instance", "trn2.48xlarge", "-f", "json")
    fields = json.loads(result.stdout)["fields"]
    assert fields["workloadtype"].startswith("Inference")
    assert auto_labels(fields["workloadtype"] + fields["instancetype"]) == {"Inference", "Trn2"}
    assert {"Inference", "Trn2"} <= auto_labels(json.dumps(fields))


def test_own_wording_triggers_no_use_case_label(tmp_path):
    """A log with nothing recognisable: every word in the report is ours, so no label may fire by accident."""
    (tmp_path / "quiet.log").write_text("hello\n")
    result = cli("report", str(tmp_path / "quiet.log"))
    assert result.returncode == 0
    assert auto_labels(result.stdout.replace("quiet.log", "")) == set()


def test_training_signs_win_for_a_training_script(tmp_path):
    (tmp_path / "e.log").write_text("$ python train_resnet.py\nloss.backward()\n" + ERROR_LINES)
    fields = json.loads(cli("report", str(tmp_path / "e.log"), "-f", "json").stdout)["fields"]
    assert fields["workloadtype"].startswith("Training")


# ------------------------------------------------------------------ reproducer, workarounds, journal

def test_small_reproducer_is_embedded_and_a_large_one_referenced(tmp_path):
    (tmp_path / "e.log").write_text(ERROR_LINES)
    (tmp_path / "small.py").write_text("import torch\nprint('repro')\n")
    (tmp_path / "large.py").write_text("x = 1  # padding\n" * 2000)
    small = cli("report", str(tmp_path / "e.log"), "--repro", str(tmp_path / "small.py"))
    assert "```python\nimport torch\nprint('repro')\n```" in small.stdout
    large = cli("report", str(tmp_path / "e.log"), "--repro", str(tmp_path / "large.py"))
    assert "`large.py` (2001 lines" in large.stdout and "attached" in large.stdout
    assert "padding" not in large.stdout


def test_a_shell_workaround_the_log_already_applied_is_listed_as_tried():
    env = Environment(compiler_flags=["--target=trn2", "-O1"], env_vars={"NEURON_CC_FLAGS": "--lnc=1 -O1"})
    lnc = Workaround(title="LNC=1", code='export NEURON_CC_FLAGS="$NEURON_CC_FLAGS --lnc=1"', language="shell")
    o2 = Workaround(title="O2", code='export NEURON_CC_FLAGS="-O2"', language="shell")
    python = Workaround(title="py", code='os.environ["NEURON_CC_FLAGS"] = "-O1"', language="python")
    assert already_applied(lnc, env)
    assert not already_applied(o2, env)
    assert not already_applied(python, env)  # Python edits cannot be checked against a log


def test_workarounds_already_in_the_failing_run_are_reported_as_tried(tmp_path):
    (tmp_path / "e.log").write_text('export NEURON_CC_FLAGS="--lnc=1"\n' + ERROR_LINES)
    result = cli("report", str(tmp_path / "e.log"))
    solution = result.stdout.split("### Possible Solution", 1)[1].split("### ", 1)[0]
    if "--lnc=1" not in solution:
        pytest.skip("the NCC_IXLV002 signature no longer suggests --lnc=1")
    assert "**Already tried**" in solution
    tried = solution.split("**Already tried**", 1)[1]
    assert "--lnc=1" in tried


def test_journal_table_goes_under_reproduction_steps(tmp_path):
    from nforensics.experiments.journal import Journal
    from nforensics.experiments.runner import Outcome, Variant

    journal = Journal(tmp_path / "runs.sqlite")
    session = journal.open_session("sweep", "NCC_IXLV002", {"knob": ["-O1", "-O2"]}, resume=False)
    variant = Variant(argv=("neuronx-cc", "compile", "-O1"), knobs=(("opt", "-O1"),))
    outcome = Outcome(verdict="REPRODUCES", code="NCC_IXLV002", exit_code=70, seconds=1.5, note="", stdout="", stderr="")
    journal.record(session, "k1", SimpleNamespace(variant=variant, attempt=1), outcome)
    journal.close()
    (tmp_path / "e.log").write_text(ERROR_LINES)
    result = cli("report", str(tmp_path / "e.log"), "--journal", str(tmp_path / "runs.sqlite"))
    reproduction = result.stdout.split("### Reproduction Steps", 1)[1].split("### ", 1)[0]
    assert "REPRODUCES" in reproduction and "| " in reproduction


# ------------------------------------------------------------------ bundle

def test_bundle_manifest_says_what_each_file_reveals(planted):
    (planted / "model.pb").write_bytes(b"\x0a\x04main\x12\x1a/home/alice/proj/model.py\x00\x01")
    result = cli("report", "job.log", "--bundle", "b", "--hlo", "model.pb")
    assert result.returncode == 0, result.stderr
    manifest = (planted / "b" / "MANIFEST.md").read_text()
    for name in ("report.md", "env.json", "job.log", "model.pb", "flags.txt"):
        assert f"`{name}`" in manifest
    assert "model structure" in manifest and "weights are never included" in manifest.lower()
    hlo = (planted / "b" / "model.pb").read_bytes()
    assert len(hlo) == len((planted / "model.pb").read_bytes()) and b"alice" not in hlo
    env = json.loads((planted / "b" / "env.json").read_text())
    assert env["this_machine"] is None and "neuronx-cc" in env["from_log"]["packages"]
    assert result.stdout.startswith("# [Bug]")  # the report still goes to stdout


def test_bundle_refuses_a_folder_that_is_not_empty(planted):
    (planted / "busy").mkdir()
    (planted / "busy" / "keep.txt").write_text("mine")
    result = cli("report", "job.log", "--bundle", "busy")
    assert result.returncode == 2 and result.stderr.startswith("nforensics: bundle folder busy already exists")
    assert (planted / "busy" / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.log"], "missing.log: no such file"),
        (["job.log", "--hlo", "model.hlo"], "--hlo goes into a bundle"),
        (["job.log", "--format", "yaml"], "unknown report format"),
        (["job.log", "--repro", "nope.py"], "nope.py: no such file"),
        (["job.log", "--journal", "nope.sqlite"], "nope.sqlite"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(planted, args, message):
    result = cli("report", *args)
    assert_clean_error(result.returncode, result.stderr, message)


def test_report_reads_standard_input():
    result = cli("report", "-", input=ERROR_LINES)
    assert result.returncode == 0 and "NCC_IXLV002" in result.stdout and "`<stdin>`" in result.stdout


# ------------------------------------------------------------------ golden report per seed

@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.stem)
def test_seed_report_matches_golden(seed, monkeypatch):
    monkeypatch.chdir(REPO)
    result = cli("report", f"sample_logs/{seed.name}")
    assert result.returncode == 0, result.stderr
    assert headings(result.stdout) == [label for _, label in FIELDS]
    golden = GOLDEN / f"{seed.stem}.md"
    if os.environ.get("NFORENSICS_UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(result.stdout)
    assert golden.exists(), f"no golden report {golden.name}: run with NFORENSICS_UPDATE_GOLDEN=1"
    # Fingerprints follow their own versioned algorithm (tested with diagnose): not part of the report's shape.
    expected, now = (_FINGERPRINT.sub("fingerprint <fp>", text) for text in (golden.read_text(), result.stdout))
    diff = "".join(difflib.unified_diff(expected.splitlines(True), now.splitlines(True), "golden", "now", n=1))
    assert now == expected, f"report changed (NFORENSICS_UPDATE_GOLDEN=1 to accept):\n{diff[:4000]}"


def test_every_seed_has_a_golden_report():
    if not SEEDS:
        pytest.skip("no seed sample logs in sample_logs/")
    assert sorted(p.stem for p in GOLDEN.glob("seed*.md")) == [p.stem for p in SEEDS]


def test_report_env_and_bundle_make_no_network_call(planted, monkeypatch):
    import socket

    def refuse(*_args, **_kwargs):
        raise AssertionError("network call attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    result = cli("report", "job.log", "--env-here", "--bundle", "b", "--url", "-o", "r.md")
    assert result.returncode == 0, result.stderr
    assert cli("env").returncode == 0


def test_inputs_are_checked_before_anything_is_written(planted):
    result = cli("report", "job.log", "--bundle", "b", "--hlo", "absent.pb")
    assert result.returncode == 2 and "HLO absent.pb: cannot read" in result.stderr
    assert not (planted / "b").exists()


def test_gzipped_stdin_is_reported_like_explain_reads_it():
    """report reads standard input through the same ingest as explain: gzip included."""
    packed = gzip.compress((SAMPLE_LOGS / "seed000_ncc_ixlv002_sendrecv_twice.log").read_bytes())
    result = run_cli("report", "-", input=packed)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().startswith("# [Bug] NCC_IXLV002: ")


def test_output_file_in_a_new_folder_is_created(tmp_path):
    target = tmp_path / "reports" / "today" / "bug.md"
    result = run_cli("report", str(SAMPLE_LOGS / "seed003_ncc_inla001_xla_use_bf16.log"), "-o", str(target))
    assert result.returncode == 0, result.stderr
    assert target.read_text().startswith("# [Bug] NCC_INLA001: ")


def test_legacy_code_is_named_once_in_the_title():
    result = run_cli("report", str(SAMPLE_LOGS / "xtp002_instructions_over_threshold.log"))
    title = result.stdout.decode().splitlines()[0]
    assert title.count("XTP002") == 1, title


def _notes_other_than_duplicates(stderr: str) -> list[str]:
    """stderr lines other than the note naming a public report this one may duplicate (the seeds' own
    threads are in the case base, so their reports rightly name them)."""
    return [line for line in stderr.splitlines() if not line.startswith("nforensics: before filing: this looks like")]


def test_report_names_the_public_thread_it_may_duplicate(tmp_path, monkeypatch):
    """seed000 is aws-neuron-sdk#1298, which is in the case base: `report` says so before the user files it
    again, and the report's context lists it under related issues."""
    monkeypatch.chdir(tmp_path)
    result = cli("report", str(SAMPLE_LOGS / "seed000_ncc_ixlv002_sendrecv_twice.log"))
    assert result.returncode == 0
    assert "before filing: this looks like aws-neuron/aws-neuron-sdk#1298 (closed)" in result.stderr
    assert "Related issues" in result.stdout and "https://github.com/aws-neuron/aws-neuron-sdk/issues/1298" in result.stdout
