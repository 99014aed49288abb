"""`nforensics env`: runs cleanly without any Neuron software, and reads Neuron tools when present.

The "Neuron machine" here is a set of test doubles written by the tests: tiny shell scripts named
neuronx-cc, neuron-ls and dpkg-query on a private PATH, a fake DMI folder and fake pip distributions.
They print what the real tools print (formats from ../shared/reference/ci-and-reports.md §4).
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import cli
from nforensics import envprobe

COMPILER_VERSION = "NeuronX Compiler version 2.23.6484.0+3b612583\nPython version 3.10.12\nRunning in region use1-az6"
NEURON_LS = "+--------+--------+--------+-----------+\n| NEURON | NEURON | NEURON | PCI BDF   |\n| DEVICE | CORES  | MEMORY |           |\n+--------+--------+--------+-----------+\n| 0      | 2      | 32 GB  | 00:1e.0   |"
DPKG = (
    "aws-neuronx-runtime-lib\t2.21.41.0-fb1705f5f\tii \n"
    "aws-neuronx-dkms\t2.26.5.0\tii \n"
    "aws-neuronx-tools\t2.28.23.0\trc \n"  # removed, config files only: not installed
    "libc6\t2.36-9\tii \n"
)


def script(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def bare_machine(tmp_path, monkeypatch):
    """No Neuron tool anywhere, no DMI table, no Neuron pip package, no Neuron variable."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(envprobe, "NEURON_BIN_DIRS", (str(tmp_path / "opt-aws-neuron-bin"),))
    monkeypatch.setattr(envprobe, "DMI_DIR", tmp_path / "no-dmi")
    monkeypatch.setattr(envprobe, "metadata", SimpleNamespace(distributions=lambda: []))  # only the probe sees it
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)  # the venv active is nforensics's own: read in-process
    for name in [n for n in __import__("os").environ if envprobe.ENV_FILTER.match(n)]:
        monkeypatch.delenv(name)
    return tmp_path


@pytest.fixture
def neuron_machine(tmp_path, monkeypatch):
    tools = tmp_path / "bin"
    tools.mkdir()
    for name, text in (("compiler.txt", COMPILER_VERSION), ("dpkg.txt", DPKG), ("neuron-ls.txt", NEURON_LS)):
        (tmp_path / name).write_text(text + "\n")
    script(tools, "neuronx-cc", f'[ "$1" = --version ] && cat {tmp_path}/compiler.txt')
    script(tools, "dpkg-query", f"cat {tmp_path}/dpkg.txt")
    neuron_bin = tmp_path / "opt-aws-neuron-bin"  # neuron-ls lives off PATH, as on real hosts
    neuron_bin.mkdir()
    script(neuron_bin, "neuron-ls", f"cat {tmp_path}/neuron-ls.txt")
    dmi = tmp_path / "dmi"
    dmi.mkdir()
    (dmi / "product_name").write_text("trn1.32xlarge\n")
    monkeypatch.setenv("PATH", f"{tools}:/usr/bin:/bin")  # the doubles first; sh, cat, sleep from the system
    monkeypatch.setattr(envprobe, "NEURON_BIN_DIRS", (str(neuron_bin),))
    monkeypatch.setattr(envprobe, "DMI_DIR", dmi)
    dists = [
        SimpleNamespace(metadata={"Name": "torch_neuronx"}, version="2.9.0.2.12.22436+0f1dac25"),
        SimpleNamespace(metadata={"Name": "transformers"}, version="4.57.6"),
        SimpleNamespace(metadata={"Name": "requests"}, version="2.32.0"),
    ]
    monkeypatch.setattr(envprobe, "metadata", SimpleNamespace(distributions=lambda: dists))  # only the probe sees it
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)  # the venv active is nforensics's own: read in-process
    monkeypatch.setenv("NEURON_CC_FLAGS", "--lnc=1")
    monkeypatch.setenv("NEURON_COMPILE_CACHE_URL", "s3://acme-private-models/cache")
    monkeypatch.setenv("XLA_USE_BF16", "1")
    monkeypatch.setenv("HOME_SECRET_UNRELATED", "x")
    return tmp_path


def test_env_on_a_machine_without_neuron_says_so_cleanly(bare_machine):
    result = cli("env")
    assert result.returncode == 0 and result.stderr == ""
    assert "Neuron software: none found" in result.stdout
    assert "neuronx-cc --version: could not collect: neuronx-cc not found on PATH" in result.stdout
    assert "neuron-ls: could not collect: neuron-ls not found" in result.stdout
    assert "Instance type: could not collect:" in result.stdout
    assert "OS: " in result.stdout and "Python: 3." in result.stdout
    assert "NEURON_*/XLA_* environment variables:\n  none set" in result.stdout


def test_env_on_this_machine_never_crashes():
    """Whatever this machine has: exit 0, every line either a value or 'could not collect'."""
    result = cli("env", "--format", "json")
    assert result.returncode == 0
    payload = json.loads(result.stdout)
    assert payload["python"] and payload["os"]
    assert all(v.startswith("could not collect: ") for v in payload["not_collected"].values())


def test_env_reads_the_neuron_tools_packages_and_instance_type(neuron_machine):
    probe = envprobe.probe()
    assert probe.neuron_software
    assert probe.compiler_version.startswith("NeuronX Compiler version 2.23.6484.0+3b612583")
    assert "| 0      | 2      | 32 GB  | 00:1e.0   |" in probe.neuron_ls
    assert probe.instance_type == "trn1.32xlarge"
    assert probe.apt_packages == {"aws-neuronx-runtime-lib": "2.21.41.0-fb1705f5f", "aws-neuronx-dkms": "2.26.5.0"}
    assert probe.pip_packages == {"torch-neuronx": "2.9.0.2.12.22436+0f1dac25", "transformers": "4.57.6"}
    assert set(probe.env_vars) == {"NEURON_CC_FLAGS", "NEURON_COMPILE_CACHE_URL", "XLA_USE_BF16"}
    assert probe.not_collected == {}


def test_env_output_is_redacted(neuron_machine):
    result = cli("env")
    assert "acme-private-models" not in result.stdout and "use1-az6" not in result.stdout
    assert "NEURON_COMPILE_CACHE_URL=s3://[redacted:s3-bucket-1]/cache" in result.stdout
    assert "Instance type: trn1.32xlarge" in result.stdout and "Neuron software: found" in result.stdout


@pytest.mark.parametrize(
    "body, reason",
    [
        ("echo 'Traceback: ImportError' >&2; exit 1", "exited with 1: Traceback: ImportError"),
        ("exec sleep 5", "did not answer within"),  # exec: the timeout kills sleep itself
    ],
)
def test_a_failing_probe_is_could_not_collect(neuron_machine, monkeypatch, body, reason):
    script(neuron_machine / "bin", "neuronx-cc", body)
    monkeypatch.setattr(envprobe, "SUBPROCESS_TIMEOUT", 0.5)
    probe = envprobe.probe()
    assert probe.compiler_version is None
    assert probe.not_collected["compiler_version"].startswith("could not collect: ")
    assert reason in probe.not_collected["compiler_version"]
    assert probe.neuron_ls  # the other probes carry on


def test_a_probe_that_raises_unexpectedly_is_contained(bare_machine, monkeypatch):
    def broken(_probed: object) -> str:
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad byte")

    monkeypatch.setitem(envprobe._PROBES, "os", broken)
    probe = envprobe.probe()
    assert probe.os is None and probe.not_collected["os"].startswith("could not collect: UnicodeDecodeError")


def test_pypi_placeholder_wheels_do_not_count_as_neuron_software(bare_machine, monkeypatch):
    dists = [SimpleNamespace(metadata={"Name": "neuronx-cc"}, version="1.0.post1")]
    monkeypatch.setattr(envprobe, "metadata", SimpleNamespace(distributions=lambda: dists))  # only the probe sees it
    result = cli("env")
    assert "Neuron software: none found" in result.stdout
    assert "neuronx-cc 1.0.post1  (PyPI placeholder, not the real package)" in result.stdout


def test_a_dmi_name_that_is_not_an_instance_type_is_not_reported(bare_machine, monkeypatch):
    dmi = bare_machine / "dmi"
    dmi.mkdir()
    (dmi / "product_name").write_text("Standard PC (Q35 + ICH9, 2009)\n")
    monkeypatch.setattr(envprobe, "DMI_DIR", dmi)
    probe = envprobe.probe()
    assert probe.instance_type is None and "not an EC2 instance type" in probe.not_collected["instance_type"]


def test_report_env_here_adds_the_machine(neuron_machine):
    log = neuron_machine / "e.log"
    log.write_text("[INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers to have name\n")
    _, out, err = cli("report", log, "--env-here", "-f", "json")
    assert not _notes_other_than_duplicates(err)
    fields = json.loads(out)["fields"]
    assert fields["instancetype"] == "trn1.32xlarge (probed on the failing machine)"
    assert "aws-neuronx-runtime-lib 2.21.41.0-fb1705f5f" in fields["release"]
    assert fields["neuronx-cc-version"] == "NeuronX Compiler version 2.23.6484.0+3b612583"
    assert "acme-private-models" not in json.dumps(fields)


def _notes_other_than_duplicates(stderr: str) -> list[str]:
    """stderr lines other than the note naming a public report this one may duplicate (the seeds' own
    threads are in the case base, so their reports rightly name them)."""
    return [line for line in stderr.splitlines() if not line.startswith("nforensics: before filing: this looks like")]


def fake_python(folder: Path, packages: dict[str, str]) -> Path:
    """A stand-in interpreter (a shell script, said so here): it answers the listing nforensics asks any
    other Python for, with these packages."""
    folder.mkdir(parents=True, exist_ok=True)
    listing = {"version": "3.10.12", "implementation": "CPython", "executable": str(folder / "python"), "packages": packages}
    (folder / "listing.json").write_text(json.dumps(listing))
    script(folder, "python", f"/bin/cat {folder / 'listing.json'}")  # PATH may hold nothing
    return folder / "python"


NEURON_VENV = {"torch-neuronx": "2.9.0.2.13", "neuronx-cc": "2.24.5133.0", "numpy": "1.26.4"}


def test_env_lists_the_packages_of_the_python_it_is_pointed_at(bare_machine):
    python = fake_python(bare_machine / "neuron-venv" / "bin", NEURON_VENV)
    probe = envprobe.probe(envprobe.interpreter(str(python)))
    assert probe.pip_packages == {"torch-neuronx": "2.9.0.2.13", "neuronx-cc": "2.24.5133.0"}  # filtered like the form
    assert probe.python.startswith("3.10.12 (CPython, ") and probe.python.endswith("probed: --python)")
    assert probe.neuron_software


def test_env_probes_the_active_venv_then_python3_on_path_and_says_which(bare_machine, monkeypatch):
    venv = bare_machine / "active"
    fake_python(venv / "bin", NEURON_VENV)
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    assert envprobe.interpreter() == envprobe.Interpreter(str(venv / "bin" / "python"), "the active venv ($VIRTUAL_ENV)")
    monkeypatch.delenv("VIRTUAL_ENV")
    on_path = fake_python(bare_machine / "bin", {"torch-neuronx": "2.1.2.2.1.0"})
    script(bare_machine / "bin", "python3", f"exec {on_path} \"$@\"")
    assert envprobe.probe().pip_packages == {"torch-neuronx": "2.1.2.2.1.0"}
    assert envprobe.probe().python.endswith("probed: the first python3 on PATH)")


def test_env_with_a_python_that_does_not_exist_is_one_line_and_exit_2(bare_machine):
    result = cli("env", "--python", str(bare_machine / "no-such-python"))
    assert result.returncode == 2 and "no such interpreter" in result.stderr and result.stderr.count("\n") == 1
