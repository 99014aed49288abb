"""`nforensics selftest` against the stand-ins (tests/fakes/selftest_bin: neuronx-cc and neuron-profile doubles;
tests/fakes/bin: neuron-ls): every check passes on a working toolchain, each one fails or is skipped on a
toolchain broken in its way, and without neuronx-cc there is one line and exit 2."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import REPO, assert_clean_error, run_cli_text

FAKES = REPO / "tests" / "fakes"
# No Neuron tool there; the doubles' `python3` is this interpreter's (its bin folder).
SYSTEM_PATH = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])


def _selftest(*bins: str, mode: str = "") -> tuple[int, dict[str, tuple[str, str]]]:
    path = os.pathsep.join([*(str(FAKES / b) for b in bins), SYSTEM_PATH])
    done = run_cli_text("selftest", "--format", "json", env={"PATH": path, "NEURON_DOUBLE_SELFTEST": mode})
    return done.returncode, {c["name"]: (c["status"], c["detail"]) for c in json.loads(done.stdout)}


def test_a_working_toolchain_passes_every_check():
    code, checks = _selftest("selftest_bin", "bin")
    assert code == 0 and list(checks) == ["compile", "neff", "refusal", "device", "runtime", "journal"]
    assert all(status == "pass" for status, _ in checks.values()), checks
    assert "NCC_EARG002" in checks["refusal"][1] and "3 runs" in checks["journal"][1]


@pytest.mark.parametrize("mode, failing", [
    ("accept-anything", "refusal"),  # a compiler that takes an option it does not know: nothing would be caught
    ("no-neff", "neff"),  # a compile that "passes" without writing the NEFF
])
def test_a_broken_toolchain_fails_the_check_it_breaks(mode, failing):
    code, checks = _selftest("selftest_bin", "bin", mode=mode)
    assert code == 1 and checks[failing][0] == "fail"
    assert [name for name, (status, _) in checks.items() if status == "fail"] == [failing]


def test_a_host_without_a_device_skips_the_device_checks():
    code, checks = _selftest("selftest_bin")  # no neuron-ls
    assert code == 0 and checks["device"][0] == checks["runtime"][0] == "skip"
    assert checks["compile"][0] == checks["refusal"][0] == "pass"


def test_without_neuronx_cc_it_says_so_in_one_line():
    done = run_cli_text("selftest", env={"PATH": SYSTEM_PATH})
    assert_clean_error(done.returncode, done.stderr, "selftest needs the Neuron toolchain, and neuronx-cc is not on PATH")


def test_the_text_report_names_each_check_and_the_verdict():
    path = os.pathsep.join([str(FAKES / "selftest_bin"), SYSTEM_PATH])
    done = run_cli_text("selftest", env={"PATH": path, "NEURON_DOUBLE_SELFTEST": "accept-anything"})
    assert done.returncode == 1 and "FAILED: refusal" in done.stdout
    assert all(name in done.stdout for name in ("compile", "neff", "refusal", "device", "runtime", "journal"))
