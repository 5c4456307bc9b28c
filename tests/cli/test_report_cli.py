"""``failpedia report``: a Markdown issue body for a failure, with nothing private left in
it and nothing in it that can break out of its Markdown."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from diagnose_helpers import downstream_only_log
from sitebuild import REPO

CLI = [sys.executable, "-m", "failpedia.cli"]
CORPUS = REPO / "tests" / "diagnose_corpus"
FORMS = REPO / ".github" / "ISSUE_TEMPLATE"

# Fake secrets of every kind the report must remove, each unique so a leak is found.
SECRETS = [
    "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8",
    "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123",
    "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "AKIA" + "IOSFODNN7EXAMPLE",
    "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "xoxp-" + "123456789012-abcdefabcdef",
    "sk-" + "proj-Ab12Cd34Ef56Gh78Ij90Kl12",
    "eyJhbGciOiJIUzI1NiJ9.fake-bearer-payload",
    "hunter2-password-value",
    "s3cr3t-value-7731",
    "tok-value-8812",
    "url-password-5521",
]


def leaky_log(home: Path) -> str:
    return f"""\
[rank0]: loading /home/alice/projects/llm/data/shard-00.bin
[rank0]: cache at /Users/bob/Library/Caches/hf and ~carol/models/base, C:\\Users\\dave\\run
[rank0]: HF_TOKEN={SECRETS[2]} GITHUB_TOKEN={SECRETS[0]} pat {SECRETS[1]}
[rank0]: aws {SECRETS[3]} slack {SECRETS[4]} {SECRETS[5]} openai {SECRETS[6]}
[rank0]: Authorization: Bearer {SECRETS[7]}
[rank0]: connecting with password={SECRETS[8]} secret={SECRETS[9]}&token={SECRETS[10]}
[rank0]: mirror https://zed:{SECRETS[11]}@mirror.example.invalid/simple
[rank0]: writing checkpoints to {home}/ckpt, scratch in /scratch/zed/tmp
Traceback (most recent call last):
  File "/home/alice/projects/llm/train.py", line 212, in <module>
    main(cfg)
  File "{home}/src/sched.py", line 190, in build
    raise ValueError(f"bad schedule {{name!r}} for /home/alice")
ValueError: bad schedule 'cosine-restarts' for /home/alice (token={SECRETS[10]})
"""


def report(
    *args: str, stdin: bytes | None = None, home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``failpedia report`` as user ``zed`` (with ``home`` as the home folder)."""
    home = home or Path("/nonexistent/home/zed")
    return subprocess.run(
        [*CLI, "report", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "HOME": str(home), "USER": "zed", "LOGNAME": "zed"},
    )


def fenced_blocks(markdown: str) -> list[tuple[str, str]]:
    """``(fence, content)`` of every fenced block, read as CommonMark reads them: a fence
    closes only on a line of the same character, at least as long, indented < 4."""
    blocks = []
    lines = markdown.split("\n")
    index = 0
    while index < len(lines):
        opening = re.match(r"^ {0,3}(`{3,}|~{3,})", lines[index])
        if not opening:
            index += 1
            continue
        fence = opening.group(1)
        content = []
        index += 1
        while index < len(lines):
            closing = re.match(r"^ {0,3}(`{3,}|~{3,})\s*$", lines[index])
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence):
                break
            content.append(lines[index])
            index += 1
        blocks.append((fence, "\n".join(content)))
        index += 1
    return blocks


@pytest.mark.slow
def test_no_token_or_home_path_survives(tmp_path: Path) -> None:
    home = tmp_path / "people" / "zed"
    log = home / "runs" / "train.log"
    log.parent.mkdir(parents=True)
    log.write_text(leaky_log(home), encoding="utf-8")
    done = report("--context", "20", str(log), home=home)  # every line of the log shown
    assert done.returncode == 0, done.stderr
    body = done.stdout
    for kept in ("Library/Caches", "GITHUB_TOKEN=", "slack", "Bearer", "mirror.example", "ckpt"):
        assert kept in body, kept
    for secret in SECRETS:
        assert secret not in body, secret
        assert secret not in done.stderr, secret
    for private in ("alice", "/Users/bob", "carol", "dave", str(home), "/zed", "zed:"):
        assert private not in body, private
        assert private not in done.stderr, private
    # What is left is still useful: the error, the file layout under the home folder.
    assert "ValueError: bad schedule 'cosine-restarts'" in body
    assert "~/projects/llm/train.py" in body
    assert "<redacted>" in body


@pytest.mark.slow
def test_a_private_key_in_the_context_goes_whole_and_lines_keep_their_numbers(
    tmp_path: Path,
) -> None:
    key = [
        "b3BlbnNzaC1rZXktdjEAAAAA" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0" + str(n)
        for n in range(3)
    ]
    log = tmp_path / "train.log"
    log.write_text(
        "\n".join(
            [
                "reading the deploy key",
                "-----BEGIN OPENSSH PRIVATE KEY-----",
                *key,
                "-----END OPENSSH PRIVATE KEY-----",
                "ValueError: bad schedule 'cosine-restarts'",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    done = report("--context", "6", str(log))
    assert done.returncode == 0, done.stderr
    for line in key:
        assert line not in done.stdout
    assert "OPENSSH PRIVATE KEY" not in done.stdout
    [block] = [content for _, content in fenced_blocks(done.stdout) if "ValueError" in content]
    assert "  1 | reading the deploy key" in block
    assert "  2 | <redacted>" in block
    assert "> 7 | ValueError: bad schedule 'cosine-restarts'" in block


@pytest.mark.slow
def test_nothing_matched_gives_error_lines_with_context_environment_and_a_new_entry() -> None:
    log = CORPUS / "no-known-failure.log"
    done = report("--context", "1", str(log))
    assert done.returncode == 0, done.stderr
    body = done.stdout
    blocks = [content for _, content in fenced_blocks(body)]
    [worst] = [block for block in blocks if "ValueError: bad schedule" in block]
    assert "> 9 | ValueError: bad schedule 'cosine-restarts'" in worst
    assert '  8 |     raise ValueError(f"bad schedule {cfg.schedule!r}")' in worst
    assert "line 190" not in worst  # one line of context
    [earlier] = [block for block in blocks if "> 3 |" in block]
    assert "> 4 | Traceback (most recent call last):" in earlier  # contexts that meet, merged
    # The environment the runner fingerprints.
    assert re.search(r"\| Python \| 3\.\d+\.\d+", body)
    assert re.search(r"\| torch \| \S+", body)
    for field in ("OS", "CUDA", "NCCL", "GPU", "Driver"):
        assert re.search(rf"\| {field} \| ", body), field
    # The line that starts the entry: the id from the exception and its message; no
    # category's words appear, so the category is left to choose, from those listed.
    [command] = [block for block in blocks if block.startswith("failpedia new ")]
    assert command.strip() == "failpedia new CATEGORY/value-error-bad-schedule"
    categories = yaml.safe_load((REPO / "entries" / "categories.yaml").read_text())
    listed = re.search(r"Categories: (.*)\.", body)
    assert listed is not None
    assert set(re.findall(r"`([a-z-]+)`", listed.group(1))) == {
        item["id"] for item in categories["categories"]
    }


@pytest.mark.slow
def test_the_new_entry_gets_the_category_the_error_speaks_of(tmp_path: Path) -> None:
    log = tmp_path / "rank3.log"
    log.write_text(
        "[rank3]: torchrun elastic agent: waiting for 8 ranks\n"
        "[rank3]: torch.distributed.DistStoreError: rendezvous store closed before all 8 "
        "ranks joined\n",
        encoding="utf-8",
    )
    done = report(str(log))
    assert done.returncode == 0, done.stderr
    [command] = [c for _, c in fenced_blocks(done.stdout) if c.startswith("failpedia new ")]
    assert command.strip() == (
        "failpedia new distributed/dist-store-error-rendezvous-store-closed-before"
    )


@pytest.mark.slow
def test_a_known_failure_is_reported_with_its_entry() -> None:
    done = report(str(CORPUS / "ddp-dataloader-oom.log"))
    assert done.returncode == 0, done.stderr
    assert "dataloader-worker-killed-by-signal" in done.stdout
    assert "https://failpedia.github.io/failpedia/data/dataloader-worker-killed-by-signal/" in (
        done.stdout
    )
    assert "failpedia new" not in done.stdout
    assert "; the one that started it first:" in done.stdout


@pytest.mark.slow
def test_a_log_of_downstream_failures_only_points_to_the_other_ranks(tmp_path: Path) -> None:
    log = tmp_path / "survivor.log"
    log.write_text(downstream_only_log())
    done = report(str(log))
    assert done.returncode == 0, done.stderr
    assert (
        "it follows from another failure. The initiating failure is not in this log; look at "
        "the other ranks' logs:"
    ) in done.stdout
    assert "started it" not in done.stdout


@pytest.mark.slow
def test_log_lines_cannot_close_their_fence_or_inject_markdown(tmp_path: Path) -> None:
    log = tmp_path / "hostile.log"
    log.write_text(
        "``````\n"
        "# not a heading\n"
        "```` [link](https://example.invalid) <img src=x onerror=alert(1)>\n"
        "RuntimeError: failed ```` right here\n"
        "~~~\n",
        encoding="utf-8",
    )
    done = report(str(log))
    assert done.returncode == 0, done.stderr
    blocks = fenced_blocks(done.stdout)
    [(fence, content)] = [item for item in blocks if "RuntimeError: failed" in item[1]]
    assert "``````" in content and "# not a heading" in content and "~~~" in content
    assert len(fence) > 6
    # Outside fenced blocks, no line of the log shows up.
    outside = done.stdout
    for _, block in blocks:
        outside = outside.replace(block, "")
    assert "not a heading" not in outside
    assert "<img" not in outside


@pytest.mark.slow
def test_standard_input_is_read_and_the_issue_link_uses_the_form(tmp_path: Path) -> None:
    log = (CORPUS / "no-known-failure.log").read_bytes()
    done = report(stdin=log)
    assert done.returncode == 0, done.stderr
    assert "ValueError: bad schedule" in done.stdout
    [url] = re.findall(r"https://github\.com/\S+/issues/new\?\S+", done.stderr)
    query = parse_qs(urlsplit(url).query)
    form = yaml.safe_load((FORMS / query["template"][0]).read_text(encoding="utf-8"))
    ids = {item["id"] for item in form["body"] if "id" in item}
    assert set(query) - {"template", "title", "labels"} <= ids
    assert "ValueError" in query["title"][0]


@pytest.mark.slow
@pytest.mark.parametrize("missing", ["no-such.log"])
def test_an_unreadable_log_is_named_without_a_traceback(missing: str, tmp_path: Path) -> None:
    done = report(str(tmp_path / missing))
    assert done.returncode == 2
    assert missing in done.stderr
    assert "Traceback" not in done.stderr
