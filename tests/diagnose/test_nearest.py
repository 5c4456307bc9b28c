"""When no signature matches, diagnose still points somewhere: the entries nearest in
wording to the most error-like lines, apart from the findings and labelled as such."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from diagnose_helpers import diagnose_json, run_diagnose
from helpers import REPO_ROOT

# A CUDA error no entry's signature names (cudaErrorLaunchTimeout: a kernel stopped by the
# display watchdog), worded like the entry that is nearest (NCCL's operations that "failed
# or timed out").
LAUNCH_TIMED_OUT = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 9, in <module>\n'
    "    loss.backward()\n"
    "RuntimeError: CUDA error: the launch timed out and was terminated\n"
)
HEADING = "Not matches, only the entries nearest in wording to these lines:"


def _log(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "train.log"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow
def test_an_unmatched_log_lists_the_nearest_entries_apart_from_findings(tmp_path: Path) -> None:
    log = _log(tmp_path, LAUNCH_TIMED_OUT)
    result = diagnose_json(str(log))
    assert result["findings"] == []
    nearest = result["nearest"]
    assert 1 <= len(nearest) <= 3
    assert nearest[0]["id"] == "nccl-taking-process-down"
    assert nearest[0]["url"].endswith("/distributed/nccl-taking-process-down/")
    scores = [item["score"] for item in nearest]
    assert scores == sorted(scores, reverse=True)
    done = run_diagnose(str(log))
    assert done.returncode == 1  # nothing was found: the nearest entries are not findings
    text = done.stdout.decode()
    assert text.index("The most error-like lines") < text.index(HEADING)
    assert "nccl-taking-process-down: https://" in text.split(HEADING, 1)[1]


def test_a_matched_log_lists_no_nearest_entries(tmp_path: Path) -> None:
    matched = LAUNCH_TIMED_OUT.replace(
        "the launch timed out and was terminated", "an illegal memory access was encountered"
    )
    result = diagnose_json(str(_log(tmp_path, matched)))
    assert [item["id"] for item in result["findings"]] == ["cuda-illegal-memory-access"]
    assert result["nearest"] == []
    assert HEADING not in run_diagnose(str(_log(tmp_path, matched))).stdout.decode()


def test_a_log_without_an_error_line_looks_nothing_up(tmp_path: Path) -> None:
    bare = 'epoch 1 loss 0.3\nTraceback (most recent call last):\n  File "x.py", line 1\n'
    result = diagnose_json(str(_log(tmp_path, bare)))
    assert result["findings"] == [] and result["nearest"] == []


@pytest.mark.slow
def test_an_index_file_finds_the_nearest_entries_beside_it_or_lists_none(tmp_path: Path) -> None:
    written = tmp_path / "index"
    _log(tmp_path, LAUNCH_TIMED_OUT)
    subprocess.run(
        [sys.executable, "-m", "failpedia.cli", "--root", str(REPO_ROOT), "index"]
        + ["--out", str(written)],
        check=True,
        capture_output=True,
    )
    assert (written / "nearest.json").is_file()
    log = str(tmp_path / "train.log")
    beside = diagnose_json("--index", str(written / "signatures.json"), log)
    assert beside["nearest"] == diagnose_json(log)["nearest"]
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(written / "signatures.json", alone / "signatures.json")
    without = run_diagnose("--json", "--index", str(alone / "signatures.json"), log)
    assert without.returncode == 1 and b"Traceback" not in without.stderr
    assert json.loads(without.stdout)["nearest"] == []
