"""A failing Neuron training job's log with secrets planted where real logs carry them: SYNTHETIC test data.

Every value is made up here (a seeded generator in the alphabets the real formats use, so the rules that
check shape and entropy see realistic tokens); none is a real credential. `SECRETS` maps each kind to the
values that must not survive in any output; `planted_log()` is the log. Used by tests/test_redact_outputs.py.
"""

from __future__ import annotations

import base64
import json
import random
import string

_rng = random.Random(20260312)
ALNUM = string.ascii_letters + string.digits


def _pick(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _b64url(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


ACCESS_KEY = "AKIA" + _pick(string.ascii_uppercase + "234567", 16)
STS_KEY = "ASIA" + _pick(string.ascii_uppercase + "234567", 16)
SECRET_KEY = _pick(ALNUM + "/+", 38) + "q7"
BARE_SECRET_KEY = "Wd" + _pick(ALNUM + "/+", 36) + "K9"
SESSION_TOKEN = "IQoJb3JpZ2luX2Vj" + _pick(ALNUM + "/+", 300) + "=="
ACCOUNT = "482913570164"
ARN_ACCOUNT = "739104628351"
ECR_ACCOUNT = "615283940127"
INSTANCE = "i-0" + _pick("0123456789abcdef", 16)
IPV4 = "10.42.17.201"
IPV4_PUBLIC = "52.39.114.86"
IPV6 = "2600:1f14:9ab:7c00:41d2:8e3f:aa12:5b90"
EC2_HOST = "ip-10-42-17-201"
CORP_HOST = "trn-build-07.corp.acme-ml.net"
INTERNAL_HOST = "neuron-cache.prod.internal"
AZ = "usw2-az3"
HOME_USER = "dkowalski"
FSX_USER = "mtanaka"
TMP_USER = "rsingh"
BUCKET = "acme-llm-checkpoints"
PATH_BUCKET = "acme-neff-artifacts"
HOSTED_BUCKET = "acme-eval-results"
SIGNATURE = _pick("0123456789abcdef", 64)
SECURITY_TOKEN = "FwoGZXIvYXdzE" + _pick(ALNUM, 80)
HF_TOKEN = "hf_" + _pick(ALNUM, 34)
GITHUB_PAT = "ghp_" + _pick(ALNUM, 36)
GITHUB_FINE = "github_pat_" + _pick(ALNUM + "_", 82)
GITHUB_OAUTH = "gho_" + _pick(ALNUM, 36)
PIP_TOKEN = "eyJ2ZXIiOjEsImlzdSI6MTcw" + _pick(ALNUM, 60)
DB_PASSWORD = "Tr41n!ng-" + _pick(ALNUM, 6)
JWT = f"{_b64url({'alg': 'HS256', 'typ': 'JWT'})}.{_b64url({'sub': 'neuron-ci-' + _pick(ALNUM, 12), 'iat': 1767225600})}.{_pick(ALNUM + '-_', 43)}"
BEARER = _pick(ALNUM, 48)
SLACK_WEBHOOK = f"https://hooks.slack.com/services/T{_pick(string.ascii_uppercase + string.digits, 8)}/B{_pick(string.ascii_uppercase + string.digits, 10)}/{_pick(ALNUM, 24)}"
PEM_LINES = [_pick(ALNUM + "/+", 64) for _ in range(6)]
DOCKER_PASSWORD = "eyJwYXlsb2FkIjoi" + _pick(ALNUM + "+/", 90)
GOOGLE_KEY = "AIza" + _pick(ALNUM + "_-", 35)
STRIPE_KEY = "sk_live_" + _pick(ALNUM, 32)
YAML_PASSWORD = "Ch3ckp0int!"
SHORT_PASSWORD = "x9Q"
SECRET_KEY_ENV = _pick(ALNUM + "!@#%^*-_", 50)
EMAIL = "priya.raman@acme-ml.com"
WRAPPED_TOKEN = "ghp_" + _pick(ALNUM, 36)
WRAPPED_SESSION = _pick(ALNUM + "/+", 120)
CACHE_PASSWORD = "C4che-" + _pick(ALNUM, 10)
NPM_TOKEN = "npm_" + _pick(string.ascii_lowercase + string.digits, 36)
GITLAB_PAT = "glpat-" + _pick(ALNUM, 20)
SLACK_BOT = f"xoxb-{_pick(string.digits, 12)}-{_pick(string.digits, 13)}-{_pick(ALNUM, 24)}"
SENDGRID = "SG." + _pick(ALNUM, 22) + "." + _pick(ALNUM, 43)
PYPI_TOKEN = "pypi-AgEIcHlwaS5vcmc" + _pick(ALNUM, 70)
CLUSTER_ID = "nrt-cluster-" + _pick("0123456789abcdef", 12)
BASIC_AUTH = base64.b64encode(f"svc-neuron:{_pick(ALNUM, 14)}".encode()).decode()
API_KEY_HEADER = _pick(ALNUM, 32)
NODENAME = "ip-10-42-17-202"
ROLE_ID = "AROA" + _pick(string.ascii_uppercase + string.digits, 17)

# kind -> values that must appear nowhere in any output (fragments of wrapped values included)
SECRETS: dict[str, list[str]] = {
    "aws access key id": [ACCESS_KEY],
    "aws sts key id": [STS_KEY],
    "aws secret key (key=value)": [SECRET_KEY],
    "aws secret key (bare, credentials listing)": [BARE_SECRET_KEY],
    "aws session token": [SESSION_TOKEN, SESSION_TOKEN[:60]],
    "AWS_ACCOUNT_ID=": [ACCOUNT],
    "account id in an ARN": [ARN_ACCOUNT],
    "account id in an ECR registry": [ECR_ACCOUNT],
    "instance id": [INSTANCE],
    "private ipv4": [IPV4],
    "public ipv4": [IPV4_PUBLIC],
    "ipv6": [IPV6],
    "EC2 host name": [EC2_HOST],
    "corporate host name": [CORP_HOST, "trn-build-07"],
    "internal host name": [INTERNAL_HOST],
    "availability zone id": [AZ],
    "user in /home": [f"/home/{HOME_USER}", f"{HOME_USER}@"],
    "user in /fsx": [f"/fsx/{FSX_USER}"],
    "user in /tmp workdir": [f"/tmp/{TMP_USER}/"],
    "s3:// bucket": [BUCKET],
    "path-style S3 bucket": [PATH_BUCKET],
    "virtual-hosted S3 bucket": [HOSTED_BUCKET],
    "presigned URL signature": [SIGNATURE],
    "presigned URL security token": [SECURITY_TOKEN],
    "Hugging Face token": [HF_TOKEN],
    "GitHub PAT": [GITHUB_PAT],
    "GitHub fine-grained PAT": [GITHUB_FINE],
    "GitHub OAuth token in Authorization: token": [GITHUB_OAUTH],
    "pip index URL credential": [PIP_TOKEN],
    "database URL password": [DB_PASSWORD],
    "JWT": [JWT],
    "opaque bearer token": [BEARER],
    "Slack webhook": [SLACK_WEBHOOK.rsplit("/", 1)[1]],
    "PEM private key block": PEM_LINES,
    "docker login -p": [DOCKER_PASSWORD],
    "Google API key": [GOOGLE_KEY],
    "Stripe key": [STRIPE_KEY],
    "YAML password": [YAML_PASSWORD],
    "short password": [f"PGPASSWORD={SHORT_PASSWORD}"],
    "*_SECRET_KEY=": [SECRET_KEY_ENV],
    "email": [EMAIL],
    "secret wrapped onto the next line": [WRAPPED_TOKEN, WRAPPED_TOKEN[:30], WRAPPED_TOKEN[30:]],
    "key at a line end, value on the next": [WRAPPED_SESSION],
    "NEURON_COMPILE_CACHE_URL password": [CACHE_PASSWORD],
    "npm token": [NPM_TOKEN],
    "GitLab PAT": [GITLAB_PAT],
    "Slack bot token": [SLACK_BOT],
    "SendGrid key": [SENDGRID],
    "PyPI upload token": [PYPI_TOKEN],
    "NRT cluster id": [CLUSTER_ID],
    "NRT node name": [NODENAME],
    "IAM role id": [ROLE_ID],
    "HTTP basic auth header": [BASIC_AUTH],
    "X-Api-Key header": [API_KEY_HEADER],
}

_WRAP = 80


def _wrapped(prefix: str, value: str) -> list[str]:
    """`prefix + value` as an 80-column terminal shows it: cut into lines, no break characters."""
    text = prefix + value
    return [text[i : i + _WRAP] for i in range(0, len(text), _WRAP)]


def planted_log() -> str:
    ts = "2026-Mar-12 09:41:{:02d}.{:06d} 48121:48121"
    nrt = [
        f"{ts.format(7, 120931)} ERROR   NRT:nrt_infodump                            Instance ID: {INSTANCE}",
        f"{ts.format(7, 121004)} ERROR   NRT:nrt_infodump                            Cluster ID: {CLUSTER_ID}",
        f"{ts.format(7, 121077)} ERROR   NRT:nrt_infodump                            Nodename: {NODENAME}",
        f"{ts.format(7, 121150)} ERROR   NRT:nrt_infodump                            Driver version: 2.16.7.0",
    ]
    workdir = f"/tmp/{TMP_USER}/neuroncc_compile_workdir/5f1c2e9a-7b3d-4c1e-9a2f-0d8e6b4c3a21"
    lines = [
        f"{HOME_USER}@{EC2_HOST}:~/llama$ export AWS_ACCESS_KEY_ID={ACCESS_KEY}",
        f"{HOME_USER}@{EC2_HOST}:~/llama$ export AWS_SECRET_ACCESS_KEY={SECRET_KEY}",
        f"{HOME_USER}@{EC2_HOST}:~/llama$ export AWS_ACCOUNT_ID={ACCOUNT}",
        *_wrapped(f"{HOME_USER}@{EC2_HOST}:~/llama$ export GITHUB_TOKEN=", WRAPPED_TOKEN),
        f"{HOME_USER}@{EC2_HOST}:~/llama$ export AWS_SESSION_TOKEN=",
        WRAPPED_SESSION,
        f"export NEURON_COMPILE_CACHE_URL=https://neuron-cache:{CACHE_PASSWORD}@{INTERNAL_HOST}/cache/",
        f"export NEURON_CC_FLAGS=\"--model-type=transformer -O1 --cache_dir=s3://{BUCKET}/neuron-cache\"",
        f"export HF_TOKEN={HF_TOKEN}",
        f"export DJANGO_SECRET_KEY='{SECRET_KEY_ENV}'",
        f"export PGPASSWORD={SHORT_PASSWORD}",
        "$ aws sts get-caller-identity",
        "{",
        f'    "UserId": "{ROLE_ID}:{EMAIL}",',
        f'    "Account": "{ARN_ACCOUNT}",',
        f'    "Arn": "arn:aws:sts::{ARN_ACCOUNT}:assumed-role/NeuronTrainer/{EMAIL}"',
        "}",
        "$ aws configure export-credentials --format process",
        f'{{"Version": 1, "AccessKeyId": "{STS_KEY}", "SecretAccessKey": "{BARE_SECRET_KEY}", "SessionToken": "{SESSION_TOKEN}"}}',
        f"$ docker login -u AWS -p {DOCKER_PASSWORD} {ECR_ACCOUNT}.dkr.ecr.us-west-2.amazonaws.com",
        "Login Succeeded",
        f"$ pip install --extra-index-url https://aws:{PIP_TOKEN}@acme-{ECR_ACCOUNT}.d.codeartifact.us-west-2.amazonaws.com/pypi/ml/simple/ neuronx-cc==2.*",
        f"$ twine upload -u __token__ -p {PYPI_TOKEN} dist/*",
        f"$ git clone https://{GITHUB_PAT}@github.com/acme-ml/llama-neuron.git",
        f"$ curl -s -H 'Authorization: token {GITHUB_OAUTH}' https://api.github.com/repos/acme-ml/llama-neuron/issues",
        f"$ curl -s -H \"Authorization: Bearer {BEARER}\" -H \"X-Api-Key: {API_KEY_HEADER}\" https://{CORP_HOST}:8443/v1/jobs",
        f"$ curl -s -H \"Authorization: Basic {BASIC_AUTH}\" https://{CORP_HOST}/health",
        f"GET https://s3.us-west-2.amazonaws.com/{PATH_BUCKET}/neffs/model.neff?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        f"&X-Amz-Credential={ACCESS_KEY}%2F20260312%2Fus-west-2%2Fs3%2Faws4_request&X-Amz-Date=20260312T094107Z"
        f"&X-Amz-Expires=3600&X-Amz-Security-Token={SECURITY_TOKEN}&X-Amz-SignedHeaders=host&X-Amz-Signature={SIGNATURE}",
        f"uploading results to https://{HOSTED_BUCKET}.s3.us-west-2.amazonaws.com/run-0312/",
        "config.yaml:",
        "  database:",
        f"    url: postgresql://trainer:{DB_PASSWORD}@{CORP_HOST}:5432/runs",
        "    user: trainer",
        f"    password: {YAML_PASSWORD}",
        f"  notify: {SLACK_WEBHOOK}",
        f"  github_token: {GITHUB_FINE}",
        f"  google_api_key: {GOOGLE_KEY}",
        f"  stripe: {STRIPE_KEY}",
        f"  npm_token: {NPM_TOKEN}",
        f"  gitlab: {GITLAB_PAT}",
        f"  slack_bot: {SLACK_BOT}",
        f"  sendgrid: {SENDGRID}",
        f"  session_jwt: {JWT}",
        "deploy key:",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        *PEM_LINES,
        "-----END OPENSSH PRIVATE KEY-----",
        f"Running in region {AZ} on {EC2_HOST}.us-west-2.compute.internal",
        f"ray::_RayTrainWorker__execute.get_next() (pid=48121, ip={IPV4}, actor_id=5712cc6b027323366a2b484b06000000)",
        f"connecting to master at {IPV4_PUBLIC}:62182 via [{IPV6}]:8080",
        f"  File \"/home/{HOME_USER}/llama/train.py\", line 88, in <module>",
        f"  File \"/fsx/{FSX_USER}/envs/neuron/lib/python3.10/site-packages/torch_neuronx/xla_impl/ops.py\", line 12, in run",
        f"questions: ask {EMAIL}",
        "2026-03-12 09:41:06.000941:  48121  ERROR ||NEURON_CC_WRAPPER||: Failed compilation with ['neuronx-cc', 'compile',"
        f" '--target=trn2', '--framework=XLA', '{workdir}/model.MODULE_9450abe5705d16fa70fb+2c2d7077.hlo_module.pb', '--output',"
        f" '{workdir}/model.neff', '--model-type=transformer', '-O1']: 2026-03-12T09:41:06Z [INTERNAL_ERROR] [NCC_IXLV002]"
        " Expected core barriers to have name",
        f"LocalSendRecv-0_476_sr_cb_begin, but core barrier 6 in subgraph 0 on core 1 has name LocalSendRecv-0_176_sr_cb_begin (instance {INSTANCE}, host {EC2_HOST})",
        f"2026-03-12 09:41:07.000012:  48121  INFO ||NEURON_CACHE||: cache miss for s3://{BUCKET}/neuron-cache/neuronxcc-2.23.6484.0+3b612583/MODULE_9450abe5705d16fa70fb+2c2d7077",
        *nrt,
        "RuntimeError: neuronx-cc failed with 70",
    ]
    return "\n".join(lines) + "\n"


def leaks(text: str) -> list[str]:
    """The planted kinds whose values survive in `text`."""
    return [kind for kind, values in SECRETS.items() if any(v in text for v in values)]
