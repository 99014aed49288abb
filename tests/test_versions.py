"""Fixed-in: version comparison, the SDK release map, and the sentence a finding carries."""

from __future__ import annotations

import pytest

from conftest import SAMPLE_LOGS
from nforensics.pipeline import analyze_text
from nforensics.diagnose.versions import first_sdk_with, is_older, releases, resolve_fixed_in, version_key
from nforensics.knowledge.schema import FixedInSpec
from nforensics.records import Environment


@pytest.mark.parametrize(
    "seen, fixed, older",
    [
        ("2.23.6484.0+3b612583", "2.24.5133.0", True),
        ("2.24.5133.0+58f8de22", "2.24.5133.0", False),
        ("2.21.18209", "2.21.18209.0", False),  # release-note headings drop the trailing .0
        ("2.9.0.40", "2.10.0.34", True),  # numeric, not string, order
        ("2.30.51.0-faafe26f0", "2.30.59.0", True),  # apt build tag
        ("1.0.post1", "2.20.9961.0", True),  # PyPI placeholder wheel
    ],
)
def test_compiler_versions_compare_numerically(seen, fixed, older):
    assert is_older("neuronx-cc", seen, fixed) is older


def test_torch_neuronx_compares_the_neuron_build_not_the_torch_version():
    # The torch version in front (2.8 vs 2.7) does not count; the Neuron build (2.12 vs 2.13) does.
    assert is_older("torch-neuronx", "2.8.0.2.12.22436+0f1dac25", "2.7.0.2.13.1") is True
    assert version_key("torch_neuronx", "2.9.0.2.13.24727") == version_key("torch-neuronx", "2.8.0.2.13.24727")


def test_unreadable_versions_are_not_compared():
    assert is_older("aws-neuronx-gpsimd-tools", "14.09.x", "14.10") is True  # reads the numeric head
    assert is_older("neuronx-cc", "unknown", "2.24.5133.0") is None


def test_release_map_matches_the_compiler_release_notes():
    # Headings of release-notes/components/compiler.rst: "Neuron Compiler [X] (Neuron Y Release)".
    by_sdk = {sdk: packages for sdk, packages in releases()}
    assert by_sdk["2.32.0"]["neuronx-cc"] == ("2.27.5334.0",)
    assert by_sdk["2.29.0"]["neuronx-cc"] == ("2.24.5133.0",)
    assert by_sdk["2.27.0"]["neuronx-cc"] == ("2.22.12471.0",)
    assert by_sdk["2.25.0"]["neuronx-cc"] == ("2.20.9961.0",)
    assert by_sdk["2.16.0"]["neuronx-cc"] == ("2.12.54.0",)
    assert by_sdk["2.29.0"]["nki"] == ("0.3.0",)
    sdks = [version_key("", sdk) for sdk, _ in releases()]
    assert sdks == sorted(sdks), "releases() is oldest first"


@pytest.mark.parametrize(
    "package, version, sdk",
    [
        ("neuronx-cc", "2.24.5133.0", "2.29.0"),
        ("neuronx-cc", "2.24.6000.0", "2.29.1"),  # between releases: the first one at or past it
        ("neuronx-cc", "2.6.0.19", "2.10.0"),
        ("runtime", "2.30.51.0", "2.28.0"),
        ("nki", "0.4.0", "2.30.0"),
        ("neuronx-cc", "9.0.0.0", None),  # newer than anything released
    ],
)
def test_first_sdk_shipping_a_version(package, version, sdk):
    assert first_sdk_with(package, version) == sdk


def test_fixed_in_says_upgrade_when_the_input_shows_an_older_compiler():
    env = Environment(packages={"neuronx-cc": "2.23.6484.0+3b612583"})
    fixed = resolve_fixed_in(FixedInSpec(version="2.24.5133.0"), env)
    assert fixed.upgrade is True
    assert fixed.sdk == "2.29.0"
    assert fixed.seen_version == "2.23.6484.0+3b612583"
    assert fixed.summary.startswith("fixed in neuronx-cc 2.24.5133.0 (Neuron SDK 2.29.0): upgrade")


def test_fixed_in_without_a_version_in_the_input_only_names_the_release():
    fixed = resolve_fixed_in(FixedInSpec(component="runtime", version="2.30.51.0", sdk="2.28"), Environment())
    assert (fixed.component, fixed.upgrade, fixed.seen_version) == ("aws-neuronx-runtime-lib", False, None)
    assert fixed.summary == "fixed in aws-neuronx-runtime-lib 2.30.51.0 (Neuron SDK 2.28)"


def test_fixed_in_on_a_newer_compiler_says_the_fix_did_not_cover_it():
    env = Environment(packages={"neuronx_cc": "2.27.5334.0"})
    fixed = resolve_fixed_in(FixedInSpec(version="2.24.5133.0"), env)
    assert fixed.upgrade is False
    assert "did not cover" in fixed.summary


def test_a_coarse_version_cannot_tell():
    assert is_older("neuronx-cc", "2.24", "2.24.5133.0") is None
    assert is_older("neuronx-cc", "2.23", "2.24.5133.0") is True
    fixed = resolve_fixed_in(FixedInSpec(version="2.24.5133.0"), Environment(packages={"neuronx-cc": "2.24"}))
    assert (fixed.upgrade, fixed.summary) == (False, "fixed in neuronx-cc 2.24.5133.0 (Neuron SDK 2.29.0)")


def test_an_sdk_release_named_in_the_input_stands_for_its_compiler():
    env = Environment(packages={"neuron-sdk": "2.28"})
    fixed = resolve_fixed_in(FixedInSpec(version="2.24.5133.0"), env)
    assert (fixed.upgrade, fixed.seen_version) == (True, "2.23.6484.0")
    assert fixed.summary.endswith("upgrade (the input shows Neuron SDK 2.28, i.e. neuronx-cc 2.23.6484.0)")
    both = Environment(packages={"neuron-sdk": "2.23", "neuronx-cc": "2.23.6484.0+3b612583"})
    assert resolve_fixed_in(FixedInSpec(version="2.24.5133.0"), both).seen_version == "2.23.6484.0+3b612583"


@pytest.mark.parametrize(
    "text, package, version",
    [
        ("Using a cached neff at /var/tmp/neuron-compile-cache/neuronxcc-2.23.6484.0+3b612583/MODULE_7c055c4ac6e2851a63bb+7d89256e/model.neff",
         "neuronx-cc", "2.23.6484.0+3b612583"),
        ("- SDK Version: Neuron SDK 2.29 (neuronx-cc 2.24.5133.0, torch-neuronx 2.9.0.2.13, NKI 0.3.0)", "nki", "0.3.0"),
        ("- SDK Version: Neuron SDK 2.29 (neuronx-cc 2.24.5133.0, torch-neuronx 2.9.0.2.13, NKI 0.3.0)", "neuron-sdk", "2.29"),
        ("  NeuronX Compiler version 2.6.0.19+3d819e565", "neuronx-cc", "2.6.0.19+3d819e565"),
        ("aws-neuronx-runtime-lib/unknown,now 2.30.51.0-faafe26f0 amd64 [installed]", "aws-neuronx-runtime-lib", "2.30.51.0-faafe26f0"),
        ("neuronx-cc==2.21.18209.0+043b1bf7", "neuronx-cc", "2.21.18209.0+043b1bf7"),
        ("torch-neuronx             2.9.0.2.12.22436+0f1dac25", "torch-neuronx", "2.9.0.2.12.22436+0f1dac25"),
    ],
)
def test_versions_are_read_from_anywhere_in_the_input(text, package, version):
    assert analyze_text(text + "\n").environment.packages.get(package) == version


def test_an_old_compiler_in_the_log_turns_a_fixed_signature_into_an_upgrade():
    # Every signature with [fixed_in] is checked the same way: its sample log plus an older compiler banner.
    from nforensics.knowledge import builtin_kb

    fixed = [s for s in builtin_kb().signatures if s.fixed_in and s.fixed_in.component == "neuronx-cc"]
    assert fixed, "the catalogue has compiler fixes"
    signature = fixed[0]
    log = (SAMPLE_LOGS / signature.sample_log).read_text()
    banner = "NeuronX Compiler version 2.1.0.76+abcdef12\n"
    finding = next(f for f in analyze_text(banner + log).findings if f.signature == signature.id)
    assert finding.fixed_in.upgrade is True
    assert finding.fixed_in.summary.startswith(f"fixed in neuronx-cc {signature.fixed_in.version}")
    assert finding.fixed_in.summary.endswith("upgrade (the input shows neuronx-cc 2.1.0.76+abcdef12)")


def test_every_fixed_in_of_the_catalogue_agrees_with_the_release_map():
    from nforensics.diagnose.versions import normalise_package
    from nforensics.knowledge import builtin_kb

    for signature in builtin_kb().signatures:
        spec = signature.fixed_in
        if spec is None:
            continue
        shipped = {sdk: packages for sdk, packages in releases()}
        package = normalise_package(spec.component)
        assert first_sdk_with(package, spec.version), f"{signature.id}: {package} {spec.version} is in no release"
        if spec.sdk:
            sdk = spec.sdk if spec.sdk in shipped else f"{spec.sdk}.0"
            assert spec.version in shipped[sdk].get(package, ()), f"{signature.id}: SDK {spec.sdk} did not ship {spec.version}"
