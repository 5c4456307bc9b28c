"""Records written by several ``failpedia verify`` processes at once lose no result.

Each process stores results of its own environment in the same ``verification/<id>.json``;
``records.update_record`` reads, merges and rewrites it, so without a lock around that
read-modify-write a writer overwrites what another stored a moment before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

WRITERS = 6
UPDATES_PER_WRITER = 25

# One writer: stores UPDATES_PER_WRITER results of its own environment key.
WRITER = """
import sys
from pathlib import Path
from failpedia.verify import records

folder, key, updates = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for number in range(updates):
    result = {
        "entry": "proves",
        "verdict": "proved",
        "started_at": f"2024-01-01T00:00:{number:02d}Z",
    }
    records.update_record(folder, result, {"key": key})
"""


@pytest.mark.slow
def test_concurrent_writers_keep_every_environment(tmp_path: Path) -> None:
    keys = [f"cpu|writer-{number}" for number in range(WRITERS)]
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), key, str(UPDATES_PER_WRITER)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for key in keys
    ]
    for writer in writers:
        _, errors = writer.communicate(timeout=120)
        assert writer.returncode == 0, errors
    record = json.loads((tmp_path / "proves.json").read_text(encoding="utf-8"))
    stored = sorted(item["environment"]["key"] for item in record["results"])
    assert stored == keys, "a concurrent update was lost"
    newest = {item["started_at"] for item in record["results"]}
    assert newest == {f"2024-01-01T00:00:{UPDATES_PER_WRITER - 1:02d}Z"}
    assert [path.name for path in tmp_path.iterdir()] == ["proves.json"], "a lock file was left"
