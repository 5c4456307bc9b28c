"""One redaction policy, and every path that shares log text applies it alike.

``failpedia report`` (``Redactor``), the verification records (``verify.capture``, which
scrubs a reproducer's output before it is matched, stored or printed) and the log page's
issue link (the worker's ``redactor``, run here in Node on the rules ``signatures.json``
publishes) all take the rules from ``signatures.redaction``. Every case below goes through
every path, so a path that removes less, or mangles more, than the others fails here.

Credentials are assembled at run time from a prefix and a made-up body: no string in this
file has the shape of a real one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from failpedia.signatures.dialect import PatternError, compile_pattern
from failpedia.signatures.line_rules import published_rules
from failpedia.signatures.redaction import REDACTED, REDACTIONS, Redactor, redact
from failpedia.verify.capture import clean_text
from helpers import REPO_ROOT

HARNESS = Path(__file__).with_name("worker_engine.js")
LOGS = sorted([*(REPO_ROOT / "tests" / "healthy_logs").glob("*.log")]) + sorted(
    (REPO_ROOT / "tests" / "diagnose_corpus").glob("*.log")
)
R = REDACTED


def body(length: int, alphabet: str = "A1b2C3d4E5f6G7h8J9k0") -> str:
    """A made-up credential body of ``length`` characters."""
    return (alphabet * (length // len(alphabet) + 1))[:length]


HEX40 = body(40, "0123456789abcdef")
JWT = "eyJ" + body(20) + ".eyJ" + body(30) + "." + body(43, "aB3_x-Z9")
PEM_BODY = "\n".join(body(64, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC+/") for _ in range(3))

# (name, line as printed, the line every path must make of it).
SECRETS: list[tuple[str, str, str]] = [
    ("jwt", f"session {JWT} accepted", f"session {R} accepted"),
    ("bearer header", "Authorization: Bearer " + body(40), f"Authorization: Bearer {R}"),
    ("basic header", "authorization: Basic dXNlcjpwYXNzd29yZA==", f"authorization: Basic {R}"),
    ("token header", "AUTHORIZATION: token " + body(40), f"AUTHORIZATION: token {R}"),
    ("custom scheme", "Authorization: SSWS 00" + body(30), f"Authorization: SSWS {R}"),
    (
        "bare header",
        "curl -H 'Authorization: " + body(24) + "' url",
        f"curl -H 'Authorization: {R}' url",
    ),
    (
        "header in a dict",
        "headers={'Authorization': 'Bearer " + body(30) + "', 'Accept': '*/*'}",
        f"headers={{'Authorization': 'Bearer {R}', 'Accept': '*/*'}}",
    ),
    ("lone bearer", "sending Bearer " + body(32) + " upstream", f"sending Bearer {R} upstream"),
    ("api_key=", "api_key=" + body(32), f"api_key={R}"),
    ("apikey:", "apikey: " + body(32), f"apikey: {R}"),
    ("x-api-key header", "X-Api-Key: " + body(32), f"X-Api-Key: {R}"),
    ("password=", "connect(password=hunter2)", f"connect(password={R})"),
    ("passwd:", "passwd: Tr0ub4dor", f"passwd: {R}"),
    ("secret =", "secret = s3cr3t-sauce", f"secret = {R}"),
    ("client_secret=", "client_secret=" + body(24), f"client_secret={R}"),
    ("token=", "url?token=" + HEX40 + "&page=2", f"url?token={R}&page=2"),
    ("access_token:", "access_token: 'ya29." + body(30) + "'", f"access_token: '{R}'"),
    ("auth_token=", 'auth_token="' + body(20) + '"', f'auth_token="{R}"'),
    (
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SECRET_ACCESS_KEY=" + body(40, "wJalrXUtnFEMI/K7MDENG+bPxRfiCY"),
        f"AWS_SECRET_ACCESS_KEY={R}",
    ),
    (
        "AWS_ACCESS_KEY_ID",
        "AWS_ACCESS_KEY_ID=AKIA" + body(16, "Q7W3E9RT"),
        f"AWS_ACCESS_KEY_ID={R}",
    ),
    (
        "aws_session_token",
        "aws_session_token = FwoGZXIvYXdzE" + body(40),
        f"aws_session_token = {R}",
    ),
    ("WANDB_API_KEY", "export WANDB_API_KEY=" + HEX40, f"export WANDB_API_KEY={R}"),
    ("HF_TOKEN", "HF_TOKEN=hf_" + body(34), f"HF_TOKEN={R}"),
    (
        "HUGGING_FACE_HUB_TOKEN",
        "HUGGING_FACE_HUB_TOKEN='" + body(20) + "'",
        f"HUGGING_FACE_HUB_TOKEN='{R}'",
    ),
    ("OPENAI_API_KEY", "OPENAI_API_KEY: " + body(30), f"OPENAI_API_KEY: {R}"),
    ("longer name", "MY_SERVICE_TOKEN=abc-123-xyz-789", f"MY_SERVICE_TOKEN={R}"),
    ("json password", '{"password": "correct horse battery"}', f'{{"password": "{R}"}}'),
    ("yaml secret", "  db_password: p4ssw0rd", f"  db_password: {R}"),
    ("prose with a value", "Password: letmein!", f"Password: {R}"),
    (
        "pem rsa",
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----",
        R + "\n" * 4,
    ),
    (
        "pem plain",
        f"key:\n-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----\nok",
        f"key:\n{R}" + "\n" * 4 + "\nok",
    ),
    (
        "pem ec",
        f"-----BEGIN EC PRIVATE KEY-----\n{PEM_BODY}\n-----END EC PRIVATE KEY-----",
        R + "\n" * 4,
    ),
    (
        "pem openssh",
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----",
        R + "\n" * 4,
    ),
    ("pem cut off", f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}", R + "\n" * 3),
    ("url credentials", "https://user:p4ss@host.example/x", f"https://{R}@host.example/x"),
    (
        "url password with @ and /",
        "pip install --index-url https://oauth2:pa@ss/w0rd@pypi.example.org/simple pkg",
        f"pip install --index-url https://{R}@pypi.example.org/simple pkg",
    ),
    ("url password only", "redis://:s3cret@cache:6379/0", f"redis://{R}@cache:6379/0"),
    ("wandb login", "$ wandb login " + HEX40, f"$ wandb login {R}"),
    ("wandb relogin", "wandb login --relogin " + HEX40, f"wandb login --relogin {R}"),
    (
        "--password X",
        "mlflow --password hunter2x --port 5000",
        f"mlflow --password {R} --port 5000",
    ),
    ("--password=X", "run.sh --password=hunter2x", f"run.sh --password={R}"),
    ("--token X", "upload --token " + body(24), f"upload --token {R}"),
    ("--api-key X", "cli --api-key " + body(24) + " go", f"cli --api-key {R} go"),
    ("--hf_token X", "train.py --hf_token hf_" + body(34), f"train.py --hf_token {R}"),
    ("github classic", "push with ghp_" + body(36), f"push with {R}"),
    ("github oauth", "gho_" + body(36) + " expired", f"{R} expired"),
    ("github user-to-server", "ghu_" + body(36), R),
    ("github server-to-server", "x ghs_" + body(36), f"x {R}"),
    ("github refresh", "ghr_" + body(36), R),
    ("github fine-grained", "github_pat_" + body(22) + "_" + body(59), R),
    ("hugging face", "login hf_" + body(34) + " ok", f"login {R} ok"),
    ("openai", "key sk-" + body(48), f"key {R}"),
    ("openai project", "key sk-proj-" + body(40, "a1B2-c3_D4"), f"key {R}"),
    ("google", "maps AIza" + body(35, "Sy9_x-Q2"), f"maps {R}"),
    ("gitlab", "glpat-" + body(20), R),
    (
        "azure storage",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
        + body(86, "q7+W/e3R")
        + "==;EndpointSuffix=core.windows.net",
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={R};EndpointSuffix=core.windows.net",
    ),
    ("aws access key id", "key AKIA" + body(16, "IOSFODNN7") + " used", f"key {R} used"),
    ("aws temporary key id", "ASIA" + body(16, "Q2W3E4R5"), R),
    ("email", "contact alice.smith+ml@example.co.uk for access", f"contact {R} for access"),
    ("home", "/home/alice/proj/train.py", "~/proj/train.py"),
    ("macOS home", 'File "/Users/bob/proj/train.py", line 3', 'File "~/proj/train.py", line 3'),
    ("lower-case home", "cd /users/carol/runs", "cd ~/runs"),
    ("windows home", r"C:\Users\dave\proj\train.py", r"~\proj\train.py"),
    ("windows home, slashes", "c:/users/dave/proj/train.py", "~/proj/train.py"),
    ("home alone", "for /home/alice", "for ~"),
    ("root's home", "/root/.cache/huggingface/hub", "~/.cache/huggingface/hub"),
    ("root after -I", "gcc -I/root/include x.c", "gcc -I~/include x.c"),
    ("a home below a mount", "/gpfs/home/alice/runs/a.log", "/gpfs/home/<user>/runs/a.log"),
    ("someone's ~", "cache in ~carol/models/base", "cache in ~/models/base"),
]

# Lines of ordinary ML output: every path leaves them as they are.
ORDINARY: list[str] = [
    "Loading tokenizer from gpt2; tokenizers parallelism is off",
    "generate(max_tokens=512, max_new_tokens=20, skip_special_tokens=True)",
    "num_tokens: 100, tokens_per_second=1234.5",
    "return_token_type_ids=False eos_token_id=2 pad_token_id=50256",
    "    tokenizer.pad_token = tokenizer.eos_token",
    "pad_token: <pad>",
    '{"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}',
    "llm_load_print_meta: EOT token        = 128009 '<|eot_id|>'",
    "llm_load_print_meta: BOS token = 1 '<s>'",
    "hf_hub_download(repo_id='gpt2', filename='config.json', token=None)",
    "from_pretrained(path, use_auth_token=True)",
    "train.py --use_auth_token --output_dir out",
    "Password reset is not supported here",
    "Enter your password:",
    "password: ********",
    "secret: ",
    "step 100 loss=0.3 lr=3e-4 grad_norm=1.02",
    "commit 3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345",
    "sha256=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 checked",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "CUDA kernel errors might be asynchronously reported at some other API call",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
    "KeyError: 'model.layers.12.self_attn.q_proj.weight'",
    "task-1234567890abcdefghijkl finished; disk-0123456789abcdefghijkl mounted",
    "Bearer of bad news: the loss is NaN",
    "https://huggingface.co/gpt2/resolve/main/config.json",
    "git@github.com: Permission denied (publickey).",
    "wandb: Currently logged in as: alice (use `wandb login --relogin` to force relogin)",
    "Successfully installed torch-2.2.1+cu121 lodash@4.17.21",
    "[W socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500",
    "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB/SHARP [RO]; OOB ib0:10.0.0.1<0>",
    "ls /mnt/root/data /data/rootfs; @torch.no_grad()",
    "connecting to http://localhost:8080/v1/models",
    "registry.example:5000/v2/image@sha256:abcd",
    "~/proj/train.py and .../site-packages/torch/nn/modules/module.py",
    "Cross-entropy over every token: flatten the logits; no pad token: GPT-2 has none",
    'from_pretrained(name, token=os.environ["HF_TOKEN"])',
    'curl -H "Authorization: Bearer $HF_TOKEN" https://huggingface.co/api/whoami-v2',
]

CASES = [*SECRETS, *((line[:40], line, line) for line in ORDINARY)]


class LogPage:
    """The log page's worker in Node, asked to redact texts with the published rules."""

    def __init__(self) -> None:
        node = shutil.which("node")
        if node is None:
            pytest.fail("node is missing: install Node.js (scripts/test.sh does)")
        self.node = node

    def redact(self, texts: list[str]) -> list[str]:
        request = {"rules": published_rules(), "redact": texts}
        done = subprocess.run(
            [self.node, str(HARNESS)],
            input=json.dumps(request) + "\n",  # ASCII: surrogates escaped
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        reply = json.loads(done.stdout)
        assert "error" not in reply, reply["error"]
        redacted: list[str] = reply["redacted"]
        return redacted


@pytest.fixture(scope="module")
def log_page() -> Iterator[LogPage]:
    yield LogPage()


def paths(browser_results: dict[str, str]) -> dict[str, Callable[[str], str]]:
    """Every way log text is scrubbed before it is shared, by who uses it."""
    return {
        "failpedia report": Redactor(),
        "verification records": lambda text: clean_text(text.encode()),
        "the log page": lambda text: browser_results[text],
    }


@pytest.fixture(scope="module")
def scrubbed(log_page: LogPage) -> dict[str, dict[str, str]]:
    texts = [line for _, line, _ in CASES]
    from_browser = dict(zip(texts, log_page.redact(texts), strict=True))
    return {
        path: {text: scrub(text) for text in texts} for path, scrub in paths(from_browser).items()
    }


@pytest.mark.parametrize(
    ("line", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_every_path_scrubs_alike(
    scrubbed: dict[str, dict[str, str]], line: str, expected: str
) -> None:
    wrong = {path: results[line] for path, results in scrubbed.items() if results[line] != expected}
    assert not wrong, f"expected {expected!r}, got {wrong}"


def test_real_logs_change_only_where_a_home_folder_is(log_page: LogPage) -> None:
    """The healthy logs and the diagnosis corpus hold no credential: the policy changes
    only their home folders there, and the log page agrees with Python on every line."""
    lines = [line for log in LOGS for line in log.read_text(encoding="utf-8").split("\n")]
    python = [redact(line) for line in lines]
    assert log_page.redact(lines) == python
    changed = [(line, after) for line, after in zip(lines, python, strict=True) if line != after]
    assert changed, "the logs name home folders; the test would prove nothing"
    secrets = [(line, after) for line, after in changed if REDACTED in after]
    assert not secrets, secrets[:5]
    homes = ("/home/", "/Users/", "/root/")
    unexplained = [line for line, _ in changed if not any(home in line for home in homes)]
    assert not unexplained, unexplained[:5]


def test_every_rule_is_in_the_portable_dialect() -> None:
    """Each part of each rule reads alike in Python and JavaScript and cannot backtrack
    catastrophically: the signature dialect's validator accepts it."""
    refused = []
    for rule in REDACTIONS:
        for part in (f"({rule.keep})(?:{rule.secret})", rule.unless):
            if part:
                try:
                    compile_pattern(part, min_literal=0)
                except PatternError as error:
                    refused.append(f"{rule.name}: {error}")
    assert not refused, refused
