"""Proving on other machines: stable shares of a catalog (``--shard I/N``), records
written to a folder of one's choice (``--records DIR``), and ``failpedia merge-records``
bringing them back into the project's records."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers import run_cli
from verify_helpers import copy_project, verify

QUICK = ["proves", "never-reproduces", "fix-fails", "check-fails", "check-skipped"]


def verified(process: subprocess.CompletedProcess[str]) -> set[str]:
    assert "Traceback" not in process.stderr, process.stderr
    return {result["entry"] for result in json.loads(process.stdout)["results"]}


@pytest.mark.slow
def test_shards_split_the_selection_into_stable_disjoint_shares(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    shares = [
        verified(verify(root, *QUICK, "--json", "--no-record", "--shard", f"{index}/3"))
        for index in (1, 2, 3)
    ]
    assert set().union(*shares) == set(QUICK)
    assert sum(len(share) for share in shares) == len(QUICK)
    # The same entry lands in the same share when the selection changes.
    again = verified(verify(root, "proves", "--json", "--no-record", "--shard", "1/3"))
    assert again == ({"proves"} if "proves" in shares[0] else set())


@pytest.mark.parametrize("bad", ["0/2", "3/2", "x/2", "2"])
def test_a_bad_shard_is_a_usage_error(tmp_path: Path, bad: str) -> None:
    process = verify(copy_project(tmp_path), "proves", "--shard", bad)
    assert process.returncode == 2
    assert "--shard: expected I/N with 1 <= I <= N" in process.stderr


def test_records_made_elsewhere_merge_into_the_project(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    elsewhere = tmp_path / "copied-back"
    process = verify(root, "proves", "fix-fails", "--records", str(elsewhere))
    assert process.returncode == 1, process.stderr
    assert sorted(path.name for path in elsewhere.glob("*.json")) == [
        "fix-fails.json",
        "proves.json",
    ]
    assert not (root / "verification").exists()

    merge = run_cli(root, "merge-records", str(elsewhere))
    assert merge.returncode == 0, merge.stderr
    assert merge.stdout == f"2 results merged into {root / 'verification'}\n"
    record = json.loads((root / "verification" / "proves.json").read_text(encoding="utf-8"))
    assert [result["verdict"] for result in record["results"]] == ["proved"]
    # Merging the same records again replaces them (newest per environment), never duplicates.
    assert run_cli(root, "merge-records", str(elsewhere)).returncode == 0
    record = json.loads((root / "verification" / "proves.json").read_text(encoding="utf-8"))
    assert len(record["results"]) == 1
