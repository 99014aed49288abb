"""Redaction that holds: a log with 50+ kinds of planted secrets (tests/planted_secrets.py, synthetic) goes
through every output nforensics writes, and no planted value survives in any of them: the report
(Markdown, JSON, the prefilled URL), every bundle member in the folder and in the archive, each CI format
of `explain` and `run` (and GitHub's job summary), and `env`.

With `--no-redact` the same outputs do carry the values: the planted secrets reach those outputs, so the
absence above is redaction at work, not secrets that never got there.
"""

from __future__ import annotations

import json
import tarfile
import time
from pathlib import Path
from urllib.parse import unquote

import pytest

import nforensics.redact as redact_module
from conftest import cli, run_cli
from nforensics.redact import Redactor
from nforensics.redact.gitleaks import GITLEAKS_RULES, base_rules
from planted_secrets import EMAIL, SECRETS, leaks, planted_log

FORMATS = ("text", "json", "sarif", "github", "junit", "gitlab", "markdown")


@pytest.fixture
def planted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.log").write_text(planted_log())
    return tmp_path


def assert_clean(text: str, where: str) -> None:
    found = leaks(text) + leaks(unquote(text))
    assert not found, f"{where} leaks {sorted(set(found))}"


def test_the_planted_log_has_at_least_40_kinds_in_realistic_places():
    assert len(SECRETS) >= 40
    log = planted_log()
    assert all(any(v in log for v in values) for values in SECRETS.values())
    assert "-----BEGIN OPENSSH PRIVATE KEY-----" in log and "NCC_IXLV002" in log


def test_every_kind_is_masked_whole_text_and_streamed_in_small_blocks(monkeypatch):
    log = planted_log()
    whole = Redactor().redact(log)
    assert_clean(whole, "redact()")
    # Streamed with tiny blocks: secrets wrapped across lines and the key block still meet their block.
    monkeypatch.setattr(redact_module, "BLOCK_CHARS", 200)
    streamed = "\n".join(Redactor().redact_lines(log.split("\n")))
    assert_clean(streamed, "redact_lines()")
    assert streamed.count("\n") == log.count("\n")  # one line out per line in: line numbers hold
    assert streamed == whole


def test_wrapped_secrets_and_key_blocks_keep_their_structure():
    out = Redactor().redact(planted_log())
    assert "-----BEGIN OPENSSH PRIVATE KEY-----\n[redacted:private-key-1]\n" in out
    assert "-----END OPENSSH PRIVATE KEY-----" in out
    lines = out.splitlines()
    wrapped = next(i for i, line in enumerate(lines) if "export GITHUB_TOKEN=" in line)
    token = lines[wrapped].split("GITHUB_TOKEN=")[1]
    assert token.startswith("[redacted:") and lines[wrapped + 1] == token  # both pieces, one placeholder
    session = next(i for i, line in enumerate(lines) if line.endswith("export AWS_SESSION_TOKEN="))
    assert lines[session + 1].startswith("[redacted:")


def test_report_url_and_every_bundle_member(planted):
    result = cli("report", "job.log", "--bundle", "share", "--url", "-o", "report.md")
    assert result.returncode == 0, result.stderr
    assert_clean(result.stdout, "the prefilled URL")
    assert_clean(result.stderr, "report's notes")
    assert_clean((planted / "report.md").read_text(), "report.md")
    for path in (planted / "share").iterdir():
        assert_clean(path.read_text(), f"bundle file {path.name}")
    with tarfile.open(planted / "share.tar.gz") as tar:
        for member in tar.getmembers():
            assert_clean(member.name, "archive member names")
            if member.isfile():
                assert_clean(tar.extractfile(member).read().decode(), f"archive member {member.name}")
    as_json = cli("report", "job.log", "--format", "json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["redacted"]
    assert_clean(as_json.stdout, "report --format json")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_explain_format_and_the_job_summary(planted, fmt, monkeypatch):
    summary = planted / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = cli("explain", "job.log", "--format", f"{fmt}=out.{fmt}")
    assert result.returncode == 1, result.stderr
    assert_clean((planted / f"out.{fmt}").read_text(), f"explain --format {fmt}")
    if fmt == "github":
        assert_clean(summary.read_text(), "the job summary")


def test_without_redaction_the_planted_values_do_reach_the_ci_outputs(planted):
    for fmt in ("json", "markdown", "sarif"):
        assert cli("explain", "job.log", "--no-redact", "--format", f"{fmt}=raw.{fmt}").returncode == 1
        assert len(leaks((planted / f"raw.{fmt}").read_text())) >= 2, fmt


def test_run_explains_its_output_redacted(planted):
    formats = [x for fmt in ("json", "markdown", "sarif", "junit") for x in ("--format", f"{fmt}=run.{fmt}")]
    result = run_cli("run", *formats, "--", "sh", "-c", "cat job.log; exit 3", cwd=planted)
    assert result.returncode == 3
    assert_clean(result.stderr.decode(), "run's text explanation")
    for fmt in ("json", "markdown", "sarif", "junit"):
        assert_clean((planted / f"run.{fmt}").read_text(), f"run --format {fmt}")
    # the passthrough is the command's own output, byte for byte
    assert result.stdout.decode() == planted_log()


def test_env_masks_the_cache_url_password(monkeypatch):
    password = SECRETS["NEURON_COMPILE_CACHE_URL password"][0]
    monkeypatch.setenv("NEURON_COMPILE_CACHE_URL", f"https://neuron-cache:{password}@cache.build.internal/neuron/")
    for fmt in ("text", "json"):
        result = cli("env", "--format", fmt)
        assert result.returncode == 0
        assert password not in result.stdout and "cache.build.internal" not in result.stdout
        assert ":[redacted:url-credential-1]@[redacted:hostname-1]/neuron/" in result.stdout


def test_kept_lookalikes_of_the_new_rules():
    for text in (
        "pad_token=<|endoftext|> max_new_tokens=128 TOKENIZERS_PARALLELISM=false use_auth_token=True",
        "secret_name: neuron-ci token: required password: ${DB_PASSWORD} api_key=<your key>",
        "git@github.com:aws-neuron/aws-neuron-sdk.git https://github.com/aws-neuron/aws-neuron-sdk/issues/1298",
        "pass: Tensorizer pass_name=BirCodeGenLoop --pass-through x /fsx/datasets/c4/ /fsx/checkpoints/run1/",
        "MODULE_9450abe5705d16fa70fb+2c2d7077 cache key: MODULE_9450abe5705d16fa70fb+2c2d7077",
        "contact aws-neuron-support@amazon.com or noreply@github.com",
        "https://pip.repos.neuron.amazonaws.com https://s3.amazonaws.com/ --index-url https://pypi.org/simple",
    ):
        assert Redactor().redact(text) == text


def test_a_secret_seen_once_is_masked_where_no_rule_would_see_it():
    redactor = Redactor()
    redactor.redact("export DB_PASSWORD=Zk4!mQ9pLx2v")
    assert redactor.redact("auth failed for Zk4!mQ9pLx2v") == "auth failed for [redacted:secret-1]"


def test_every_rule_is_fast_on_adversarial_text():
    """No rule, ours or gitleaks', backtracks into a blow-up: each rule's cue words repeated over 8 KB with
    separators between (0.02-0.07 s each when measured), and the slowest shapes over 64 KB (about 0.2 s)."""
    rules, _ = base_rules()
    words = sorted({w for rule in rules if isinstance(rule.cue, tuple) for w in rule.cue})

    def seconds(word: str, filler: str, size: int, bound: float) -> float:
        text = (word + filler * 3) * (size // (len(word) + 3))
        best = bound + 1
        for _ in range(2):  # the best of two: a loaded CI machine must not fail a linear rule
            started = time.perf_counter()
            Redactor().redact(text)
            best = min(best, time.perf_counter() - started)
            if best <= bound:
                break
        return best

    slow = [(w, f) for w in words for f in ("-", "/", " ") if seconds(w, f, 8192, 1.0) > 1.0]
    assert not slow, slow
    heavy = (("pwd", "-"), ("api", "-"), ("token", "-"), ("curl", " "), ("@", "."))
    slow = [(w, f) for w, f in heavy if seconds(w, f, 65536, 5.0) > 5.0]
    assert not slow, slow


def test_gitleaks_rules_load_and_compile():
    rules, allow = base_rules()
    gitleaks = [r for r in rules if r.gitleaks]
    assert len(gitleaks) > 200 and allow["regexes"]
    for rule in gitleaks:
        rule.compiled()
    assert EMAIL  # the planted module is importable on its own
    assert Path(GITLEAKS_RULES).is_file()
