"""Credentials a reproducer prints never reach a record, the JSON document or the terminal.

The credentials are made up at test time (random, in the formats real ones take) and
written into the fixture's ``credentials.txt``; its reproducer prints them, and its
signature line holds the first. Real signatures and ordinary ML output stay as they were.
"""

from __future__ import annotations

import base64
import json
import secrets
import string
from pathlib import Path

import pytest
from failpedia.catalog.validate import load_catalog
from failpedia.signatures.redaction import REDACTED, redact
from helpers import REPO_ROOT
from verify_helpers import HOSTILE_FIXTURE, copy_project, verify

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER = string.ascii_uppercase + string.digits
BASE64 = ALNUM + "+/"


def _random(alphabet: str, length: int) -> str:
    """Random text from ``alphabet``, with a digit and a letter where it has them: real
    credentials do, and the test must not depend on the luck of the draw."""
    required = [
        secrets.choice(kind)
        for kind in ([c for c in alphabet if c.isdigit()], [c for c in alphabet if c.isalpha()])
        if kind
    ]
    return "".join(required + [secrets.choice(alphabet) for _ in range(length - len(required))])


def fake_credentials() -> list[tuple[str, str]]:
    """``(line printed, the secret part of it)`` for every format the runner scrubs."""
    basic = base64.b64encode(f"x-access-token:ghs_{_random(ALNUM, 36)}".encode()).decode()
    items = [
        ("GITHUB_TOKEN {}", "ghp_", _random(ALNUM, 36)),
        ("oauth {}", "gho_", _random(ALNUM, 36)),
        ("fine-grained {}", "github_pat_", f"{_random(ALNUM, 22)}_{_random(ALNUM, 59)}"),
        ("HF_TOKEN={}", "hf_", _random(string.ascii_letters, 34)),
        ("aws_access_key_id {}", "AKIA", _random(UPPER, 16)),
        ("slack {}", "xoxb-", f"{_random(string.digits, 12)}-{_random(ALNUM, 24)}"),
        ("slack {}", "xoxp-", f"{_random(string.digits, 12)}-{_random(HEX, 32)}"),
        ("openai {}", "sk-", _random(ALNUM, 48)),
        ("project {}", "sk-proj-", _random(ALNUM, 48)),
        ("url?token={}", "", _random(HEX, 40)),
        ("api_key={}", "", _random(BASE64, 40)),
        ("aws_secret_access_key = {}", "", _random(BASE64, 40)),
        ("client secret={}", "", _random(HEX, 32)),
        ('{{"password": "{}"}}', "", _random(ALNUM, 12)),
        ("curl -H 'Authorization: Bearer {}'", "", _random(ALNUM, 40)),
        ("http.extraheader AUTHORIZATION: basic {}", "", basic),
        ("git clone https://oauth2:{}@git.example.invalid/repo.git", "", _random(ALNUM, 20)),
    ]
    return [(line.format(prefix + secret), secret) for line, prefix, secret in items]


@pytest.mark.slow
def test_printed_credentials_are_redacted_everywhere(tmp_path: Path) -> None:
    root = copy_project(tmp_path, HOSTILE_FIXTURE)
    credentials = fake_credentials()
    folder = root / "entries" / "secrets" / "prints-tokens"
    (folder / "credentials.txt").write_text("\n".join(line for line, _ in credentials) + "\n")
    run = verify(root, "prints-tokens", "--json")
    assert run.returncode == 0, run.stderr
    record_text = (root / "verification" / "prints-tokens.json").read_text(encoding="utf-8")
    outputs = {"--json": run.stdout, "stderr": run.stderr, "record": record_text}
    for _, secret in credentials:
        for where, text in outputs.items():
            assert secret not in text, f"{secret} reached the {where}"
    result = json.loads(run.stdout)["results"][0]
    assert result["verdict"] == "proved"
    assert result["broken"]["matched_lines"] == [
        {"line": f"LeakError: credential {REDACTED} rejected", "signature": 0}
    ]
    excerpt = result["output_excerpt"]
    assert excerpt.count(REDACTED) >= len(credentials)
    # What surrounds a credential stays readable: the header and scheme, the URL's host.
    assert f"Authorization: Bearer {REDACTED}" in excerpt
    assert f"https://{REDACTED}@git.example.invalid/repo.git" in excerpt
    assert "line 0: GITHUB_TOKEN " in excerpt


ORDINARY_OUTPUT = [
    "KeyError: 'model.layers.12.self_attn.q_proj.weight'",
    "RuntimeError: Error(s) in loading state_dict for Net: Missing key(s) in state_dict: "
    '"fc.weight", "fc.bias".',
    "TypeError: forward() got an unexpected keyword argument 'attention_mask'",
    "hf_device_map = {'': 0}; hf_hub_download(repo_id='gpt2', filename='config.json')",
    "task-1234567890abcdefghijkl finished; disk-0123456789abcdefghijkl mounted",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
    "sha256=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 checked",
    "Bearer of bad news: the loss is NaN",
    "https://huggingface.co/gpt2/resolve/main/config.json",
]


@pytest.mark.parametrize("line", ORDINARY_OUTPUT)
def test_ordinary_output_is_left_alone(line: str) -> None:
    assert redact(line) == line


def test_real_signatures_are_left_alone() -> None:
    catalog, problems = load_catalog(REPO_ROOT / "entries", REPO_ROOT)
    assert not problems, problems.report()
    changed = [
        f"{item.entry.id}: {signature.text!r}"
        for item in catalog.entries
        for signature in item.entry.signatures
        if redact(signature.text) != signature.text
    ]
    assert not changed, changed
