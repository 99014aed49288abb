"""Redaction: every planted secret kind is masked, placeholders are stable, and the Neuron tokens a
maintainer needs (codes, barrier names, instruction ids, shapes, versions, MODULE hashes) survive.

PLANTED_LOG is a synthetic failing run written for these tests (test_report.py reuses it): a compiler
wrapper failure with an NRT crash block, in the shapes real logs have, with fake credentials that use the
real alphabets (access key suffix A-Z2-7, 40-char secret keys with / and +).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ALL_SAMPLE_LOGS, SHARED
from nforensics.redact import Redactor

ACCESS_KEY = "AKIAQ3EGRE7XJ2MLPZ4W"
STS_KEY = "ASIAZ4XQ2W7EJ3KLMN5P"
SECRET_KEY = "Zq8r/3bVt+Yw1LmN0pQs7uXc9De2Fg4Hj6Kl8Mn0"
SECRET_KEY_2 = "t7Hk2+Lm9PqR4sVw8XyZ1aBc5dEf/Gh3iJk6LmN0"
SESSION_TOKEN = (
    "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDx7Y3kq9vF2mP8w1nR0sT4uV6xY8zA2bC4dE6fG8hJ0Ig"
    "Kl1mN3oP5qR7sT9uV1wX3yZ5aB7cD9eF1gH3iJ5kL7mN9oPqRsTuVwXyZaBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789+/AbC=="
)
ACCOUNT = "123456789012"
ACCOUNT_2 = "210987654321"
ARN = f"arn:aws:iam::{ACCOUNT}:role/NeuronJobRole"
INSTANCE = "i-0975663b229a10fd1"
INSTANCE_2 = "i-0a1b2c3d4e5f60718"
IPV4 = "10.0.12.34"
IPV4_PUBLIC = "54.201.3.7"
IPV6 = "2600:1f14:abc:de00:1234:5678:9abc:def0"
IPV6_SHORT = "fe80::1ff:fe23:4567:890a"
HOSTNAME = "ip-172-31-33-90"
HOSTNAME_FQDN = "ip-10-0-1-5.us-west-2.compute.internal"
USER_HOME = "alice"
USER_TMP = "bob"
BUCKET = "acme-private-models"
HF_TOKEN = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
AZ = "use1-az6"

SECRETS = {
    "aws-access-key-id": [ACCESS_KEY, STS_KEY],
    "aws-secret-key": [SECRET_KEY, SECRET_KEY_2],
    "aws-session-token": [SESSION_TOKEN],
    "aws-account-id": [ACCOUNT, ACCOUNT_2],
    "arn": [ARN],
    "instance-id": [INSTANCE, INSTANCE_2],
    "ipv4": [IPV4, IPV4_PUBLIC],
    "ipv6": [IPV6, IPV6_SHORT],
    "hostname": [HOSTNAME, HOSTNAME_FQDN],
    "user": [USER_HOME, USER_TMP],
    "s3-bucket": [BUCKET],
    "hf-token": [HF_TOKEN],
    "availability-zone": [AZ],
}

PLANTED_LOG = f"""\
ubuntu@{HOSTNAME}:~$ export AWS_ACCESS_KEY_ID={ACCESS_KEY}
ubuntu@{HOSTNAME}:~$ export AWS_SECRET_ACCESS_KEY={SECRET_KEY}
ubuntu@{HOSTNAME}:~$ export AWS_SESSION_TOKEN={SESSION_TOKEN}
export NEURON_COMPILE_CACHE_URL=s3://{BUCKET}/neuron-cache/
export NEURON_CC_FLAGS="--model-type=transformer -O1"
export HF_TOKEN={HF_TOKEN}
Assumed role {ARN} for account {ACCOUNT_2}
temporary credentials {STS_KEY} {SECRET_KEY_2}
aws-neuronx-runtime-lib/unknown,now 2.21.41.0-fb1705f5f amd64 [installed]
aws-neuronx-collectives/unknown,now 2.30.59.0-f5cdefb39 amd64 [installed]
neuronx-cc 2.23.6484.0+3b612583
torch-neuronx 2.9.0.2.12.22436+0f1dac25
NeuronX Compiler version 2.23.6484.0+3b612583
Running on AMI ami-0123456789abcdef0
Running in region {AZ}
ray::_RayTrainWorker__execute.get_next() (pid=12769, ip={IPV4}, actor_id=5712cc6b027323366a2b484b06000000)
connecting to master at {IPV4_PUBLIC}:62182 via {IPV6} and [{IPV6_SHORT}]:8080 on {HOSTNAME_FQDN}
  File "/home/{USER_HOME}/proj/model.py", line 3, in <module>
2024-06-01 03:27:57.000941:  7571  ERROR ||NEURON_CC_WRAPPER||: Failed compilation with ['neuronx-cc', 'compile', '--target=trn2', '--framework=XLA', '/tmp/{USER_TMP}/neuroncc_compile_workdir/476cf8e5-17ac-4b1e-9e9c-05e34e9ddda2/model.MODULE_9450abe5705d16fa70fb+2c2d7077.hlo_module.pb', '--output', '/tmp/{USER_TMP}/neuroncc_compile_workdir/476cf8e5/model.neff', '--model-type=transformer', '-O1']: 2024-06-01T03:27:56Z [INTERNAL_ERROR] [NCC_IXLV002] Expected core barriers to have name
LocalSendRecv-0_476_sr_cb_begin, but core barrier 6 in subgraph 0
on core 1 has name LocalSendRecv-0_176_sr_cb_begin (instance {INSTANCE_2}, host {HOSTNAME})
2024-06-01 03:27:58.000012:  7571  INFO ||NEURON_CACHE||: cache miss for s3://{BUCKET}/neuron-cache/neuronxcc-2.23.6484.0+3b612583/MODULE_9450abe5705d16fa70fb+2c2d7077
2024-May-21 16:08:34.360930 58098:58098 ERROR   NRT:nrt_infodump                            Instance ID: {INSTANCE}
2024-May-21 16:08:34.375127 58098:58098 ERROR   NRT:nrt_infodump                            Cluster ID: N/A
2024-May-21 16:08:34.392177 58098:58098 ERROR   NRT:nrt_infodump                            Kernel: Linux 5.15.0-1058-aws #64~20.04.1-Ubuntu SMP
2024-May-21 16:08:34.406910 58098:58098 ERROR   NRT:nrt_infodump                            Nodename: {HOSTNAME}
2024-May-21 16:08:34.419577 58098:58098 ERROR   NRT:nrt_infodump                            Driver version: 2.16.7.0
ubuntu@{HOSTNAME}:~$ ls /tmp/{USER_TMP}/logs
"""

# Tokens maintainers need; redaction must leave each one intact.
KEEP = [
    "NCC_IXLV002",
    "LocalSendRecv-0_476_sr_cb_begin",
    "LocalSendRecv-0_176_sr_cb_begin",
    "MODULE_9450abe5705d16fa70fb+2c2d7077",
    "2.23.6484.0+3b612583",
    "2.9.0.2.12.22436+0f1dac25",
    "2.21.41.0-fb1705f5f",
    "2.30.59.0-f5cdefb39",
    "2.16.7.0",
    "5.15.0-1058-aws",
    "--target=trn2",
    "476cf8e5-17ac-4b1e-9e9c-05e34e9ddda2",
    "16:08:34.360930 58098:58098",
    "Cluster ID: N/A",
]


def all_secrets() -> list[str]:
    return [value for values in SECRETS.values() for value in values]


def assert_no_secret(text: str, where: str) -> None:
    leaked = [s for s in all_secrets() if s in text]
    assert not leaked, f"{where} leaks {leaked}"
    assert "/home/alice" not in text and "/tmp/bob/" not in text, where


def test_every_planted_secret_kind_is_masked_and_counted():
    redactor = Redactor()
    out = redactor.redact(PLANTED_LOG)
    assert_no_secret(out, "redacted log")
    summary = redactor.summary()
    for kind in SECRETS:
        assert summary.get(kind, 0) >= 1, f"no {kind} counted: {summary}"
    # Keys stay readable: the key name survives, the value does not.
    assert "AWS_SECRET_ACCESS_KEY=[redacted:aws-secret-key-" in out
    assert "Instance ID: [redacted:instance-id-" in out
    assert "Nodename: [redacted:hostname-" in out
    assert "s3://[redacted:s3-bucket-1]/neuron-cache/" in out


def test_the_same_secret_gets_the_same_placeholder_everywhere():
    redactor = Redactor()
    first = redactor.redact(f"Nodename: {HOSTNAME}\nubuntu@{HOSTNAME}:~$")
    second = redactor.redact(f"host {HOSTNAME} and {HOSTNAME_FQDN}")
    placeholder = redactor.placeholders[HOSTNAME]
    assert first.count(placeholder) == 2 and placeholder in second
    assert redactor.placeholders[HOSTNAME_FQDN] != placeholder
    assert redactor.summary()["hostname"] == 4  # occurrences
    assert len(set(re.findall(r"\[redacted:hostname-\d+\]", first + second))) == 2  # values


def test_user_names_seen_in_home_are_masked_in_tmp_even_when_tmp_comes_first():
    redactor = Redactor()
    redactor.learn("File /home/carol/x.py")
    assert redactor.redact("ls /tmp/carol/cache") == "ls /tmp/[redacted:user-1]/cache"
    assert Redactor().redact("/tmp/neuronxcc-abcd1234/model.neff") == "/tmp/neuronxcc-abcd1234/model.neff"


def test_redaction_is_idempotent_and_can_be_turned_off():
    redactor = Redactor()
    once = redactor.redact(PLANTED_LOG)
    assert redactor.redact(once) == once
    off = Redactor(enabled=False)
    assert off.redact(PLANTED_LOG) == PLANTED_LOG and off.summary() == {}


def test_neuron_tokens_survive_redaction():
    out = Redactor().redact(PLANTED_LOG)
    for token in KEEP:
        assert token in out, token


@pytest.mark.parametrize(
    "text",
    [
        "Driver version: 2.16.7.0",
        "aws-neuronx-dkms/unknown,now 2.26.5.0 all [installed,upgradable to: 2.26.10.0]",
        "NRT version 2.21.41.0",
        # Versions in a wheel's file name (its `+` URL-encoded) and in a pip pin are dotted quads too.
        "Downloading https://pip.repos.neuron.amazonaws.com/neuronx-cc/neuronx_cc-2.10.0.34%2B3817a0c8c-cp310-cp310-linux_x86_64.whl",
        "pip install neuronx-cc==2.14.227.6 torch-neuronx==2.1.2.2.2.0",
        "I-14774-0-PWP I-50114-4-PWP I-1347-2_sg0000 CoreBarrier-0_480",
        "Access Pattern: [[1,8],[1,128]] shape [1, 1, 2048] tensor<2x2048xbf16>",
        "0x00007FE726068C3C nd0:nc0:h_model.id1001 [ND 1][NC 4] aten__add_add.31237",
        "commit=3b612583a1b2c3d4e5f60718293a4b5c6d7e8f90",  # a SHA-1 is not a secret key
        "std::vector abc::def 16:08:34 30294:32381",
        "max_new_tokens=128 pad_token=<|endoftext|> loopback 127.0.0.1",
        "contact aws-neuron-support@amazon.com",
        # A shell variable's reference shows no value; PWD and OLDPWD are working folders.
        "docker run --rm -it -v $PWD:/workspace -e HF_TOKEN=${HF_TOKEN} img",
        "OLDPWD=/tmp",
    ],
)
def test_lookalikes_are_left_alone(text):
    assert Redactor().redact(text) == text


def test_a_password_named_like_the_shells_working_folder_is_still_masked():
    assert Redactor().redact("PWD=hunter22 pwd: s3cr3tvalue") == "PWD=[redacted:secret-1] pwd: [redacted:secret-2]"


def test_binary_masking_keeps_the_length():
    data = b"\x08\x01\x12\x1b/home/alice/proj/model.py\x00" + SECRET_KEY.encode() + b"\x00"
    masked = Redactor().redact_bytes(b"key=" + data)
    assert len(masked) == len(data) + 4
    assert b"alice" not in masked and SECRET_KEY.encode() not in masked
    assert masked.startswith(b"key=\x08\x01\x12\x1b/home/")


# ------------------------------------------------------------------ real logs lose no maintainer token

_TOKENS = re.compile(
    r"\b(?:NCC_[A-Z]+\d+|[A-Z]{2,5}\d{3}|NRT_[A-Z_]+)\b"  # error codes
    r"|\b\w*Barrier-\d+_\d+\w*|\bLocalSendRecv-\w+"  # barrier names
    r"|\bI-\d+(?:-\d+)*(?:-PWP|_sg\d+)?\b"  # instruction ids
    r"|\[\d+(?:,\s*\d+)+\]|\btensor<[\dx]+\w+>"  # shapes
    r"|\b\d+\.\d+\.\d+(?:\.\d+)*(?:[+-][0-9a-f]{6,})?\b"  # versions
    r"|\bMODULE_[0-9a-f]+\+[0-9a-f]+"
)
# Addresses, rightly masked: Ray's `ip=` worker prefix and `host:port` / `[host]:port` peers.
_ADDRESS = re.compile(r"\bip=(\d+(?:\.\d+){3})|(\d+(?:\.\d+){3})\]?:\d")


def _real_logs() -> list[Path]:
    logs = list(ALL_SAMPLE_LOGS)
    if SHARED.is_dir():
        logs += sorted((SHARED / "corpus/dev").glob("*.log")) + sorted((SHARED / "seeds").glob("*.txt"))
    return logs


@pytest.mark.parametrize("path", _real_logs(), ids=lambda p: p.name)
def test_real_logs_keep_codes_barriers_shapes_and_versions(path):
    text = path.read_text(errors="replace")
    out = Redactor().redact(text)
    kept = set(_TOKENS.findall(out))
    addresses = {address for pair in _ADDRESS.findall(text) for address in pair if address}
    lost = [t for t in _TOKENS.findall(text) if t not in kept and t not in addresses]
    assert not lost, f"redaction removed {lost[:5]}"


@pytest.mark.parametrize("after", [",", ")", "]", "}", ">", "&next=1", "| grep x", ""])
def test_a_provider_token_ends_where_a_log_ends_it(after):
    # gitleaks' rules end a token at a quote, whitespace or `;` (source code); a log also prints one in a repr,
    # a dict or a query string.
    token = "SG." + "cDCpa9ie54vBAVXrybKNft.BNQCNWuLKC6KRh25UdrVy0ZpVF8wkayIdM6zZFhumdyQ"[:66]
    assert token not in Redactor().redact(f"mail_key=({token}{after}")
