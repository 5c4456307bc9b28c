"""Run ``failpedia diagnose`` as a user would and reduce its findings to what must agree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "diagnose_corpus"


def corpus_logs() -> list[Path]:
    return sorted(CORPUS.glob("*.log"))


def expectations() -> dict[str, Any]:
    return json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))


def run_diagnose(
    *args: str,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    command: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    base = command or [sys.executable, "-m", "failpedia.cli"]
    return subprocess.run(
        [*base, "diagnose", *args], input=stdin, capture_output=True, cwd=cwd, timeout=300, env=env
    )


def diagnose_json(*args: str, **kwargs: Any) -> dict[str, Any]:
    done = run_diagnose("--json", *args, **kwargs)
    assert done.returncode in (0, 1), done.stderr.decode()
    return json.loads(done.stdout)


def essence(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What the CLI and the page must agree on: which findings, in which order, where."""
    return [
        (
            item["id"],
            item["count"],
            tuple(item["ranks"]),
            item["root_cause"],
            item["first"]["line"],
            item["first"]["rank"],
            item["first"]["time"],
            item["first"]["text"],
        )
        for item in result["findings"]
    ]


MATMUL_LINE = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x{} and 16x2)"
VIEW_LINE = (
    "RuntimeError: view size is not compatible with input tensor's size and stride (at "
    "least one dimension spans across two contiguous subspaces). Use .reshape(...) instead."
)


def many_occurrences_log(year: int) -> str:
    """A log whose failures occur more often than the locations listed, the earliest by
    time after them: 120 lines with times running backwards, then glog lines without a
    year on the 1st of March and the 29th of February, whose order depends on whether the
    year assumed for them (``year``, from another line) is a leap year."""
    lines = [
        f"[rank{number % 4}]:[{year}-06-11 03:{59 - number // 2:02d}:00,000] "
        + MATMUL_LINE.format(number)
        for number in range(120)
    ]
    lines += [
        "[default1]:E0301 00:00:00.000000 1 f.cpp:1] " + VIEW_LINE,
        "[default2]:E0229 00:00:00.000000 1 f.cpp:1] " + VIEW_LINE,
    ] * 40
    return "\n".join(lines) + "\n"


WATCHDOG_LINE = (
    "[rank{rank}]:[E0902 14:10:0{second}.512345 2200 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID "
    "0(default_pg) Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL("
    "SeqNum=8123, OpType=ALLREDUCE, NumelIn=50331648, NumelOut=50331648, Timeout(ms)=600000) "
    "ran for 600021 milliseconds before timing out."
)


def downstream_only_log() -> str:
    """The log of ranks that only waited: NCCL watchdog timeouts, each with glog's time,
    which has no year; the rank that failed first logged elsewhere."""
    lines = ["[rank1]:[I0902 14:00:00.000000 2200 train.py:10] step 8120 loss 2.113"]
    lines += [WATCHDOG_LINE.format(rank=rank, second=rank) for rank in (3, 1, 2)]
    return "\n".join(lines) + "\n"


def traceback_first_log(width: int = 2000) -> str:
    """A traceback's last line, without a time, then a logger repeating the error later in
    the log with times, the earliest of them last; a ``width``-character line among them."""
    return (
        "\n".join(
            [
                "Traceback (most recent call last):",
                '  File "train.py", line 10, in <module>',
                "    loss = model(batch)",
                MATMUL_LINE.format(8) + " " + "x" * width,
                "[2024-06-11 03:00:05,000] ERROR " + MATMUL_LINE.format(9),
                "[2024-06-11 03:00:01,000] ERROR " + MATMUL_LINE.format(7),
                "done",
            ]
        )
        + "\n"
    )
