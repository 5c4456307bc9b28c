"""``failpedia explain`` takes an entry id or a pasted message, and ``diagnose`` prints
each finding's quick answer under its title (``--brief`` leaves it out)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml
from diagnose_helpers import run_diagnose
from helpers import REPO_ROOT

DEVICE_ASSERT = "RuntimeError: CUDA error: device-side assert triggered"
ENTRY = REPO_ROOT / "entries" / "cuda" / "cuda-device-side-assert" / "entry.yaml"


def explain(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "failpedia.cli", "explain", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_a_pasted_message_explains_the_entry_its_signature_names() -> None:
    by_message = explain(DEVICE_ASSERT)
    assert by_message.returncode == 0, by_message.stderr
    by_id = explain("cuda-device-side-assert")
    assert by_message.stdout == by_id.stdout
    assert "cuda-device-side-assert · cuda · crash" in by_message.stdout


@pytest.mark.slow
def test_a_message_no_signature_matches_lists_the_nearest_entries() -> None:
    done = explain("RuntimeError: CUDA error: the launch timed out and was terminated")
    assert done.returncode == 1
    assert done.stderr == "failpedia explain: no entry's signature matches this message.\n"
    assert done.stdout.startswith("Not matches, only the entries nearest in wording to it:\n")
    assert "nccl-taking-process-down: https://" in done.stdout


@pytest.mark.slow
def test_an_unknown_id_is_still_refused_with_suggestions() -> None:
    done = explain("cuda-oomm")
    assert done.returncode == 2
    assert "no entry 'cuda-oomm'; did you mean cuda-oom" in done.stderr


@pytest.mark.slow
def test_diagnose_prints_the_quick_answer_unless_brief() -> None:
    log = (DEVICE_ASSERT + "\n").encode()
    full = run_diagnose("-", stdin=log).stdout.decode().splitlines()
    brief = run_diagnose("--brief", "-", stdin=log).stdout.decode().splitlines()
    link = next(n for n, line in enumerate(full) if line.startswith("   cuda-device-side-assert"))
    first_at = full.index("   first at <stdin>:1")
    answer = " ".join(" ".join(full[link + 1 : first_at]).split())
    summary = yaml.safe_load(ENTRY.read_text(encoding="utf-8"))["summary"]
    assert answer and answer[:60] == " ".join(summary.split())[:60]
    assert brief == full[: link + 1] + full[first_at:]
