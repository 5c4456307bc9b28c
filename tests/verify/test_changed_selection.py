"""``failpedia verify --changed``: what CI proves on each change. An entry is proved again
when its committed record does not prove it as it is now, here (no record; the
reproducer's files or patterns, a pinned package or the environment changed), when it
changed since ``--since``, or when the day's rotating share holds it; the plan, each entry
with its reason, is printed before anything runs.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from failpedia.verify.selection import in_shard
from verify_helpers import copy_project, git, verify

# Runs reproducers in subprocesses.
pytestmark = pytest.mark.slow

KEPT = {"proves", "raises", "needs-cuda"}
PROVES = "entries/outcomes/proves"
RAISES = "entries/outcomes/raises"


def _project(tmp_path: Path) -> Path:
    """The runner fixture with two entries that prove and one that needs a GPU."""
    root = copy_project(tmp_path)
    for folder in sorted(root.glob("entries/*/*/")):
        if folder.name not in KEPT:
            shutil.rmtree(folder)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "three entries")
    return root


def _changed(root: Path, *args: str) -> tuple[dict[str, tuple[str, str]], Any]:
    """Run ``verify --changed``; its plan (entry: (reason, detail)) and the process."""
    done = verify(root, "--changed", "--device", "cpu", "--json", *args)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    plan = json.loads(done.stdout)["plan"]
    proved = {item["entry"] for item in json.loads(done.stdout)["results"]}
    assert proved == {item["entry"] for item in plan}  # the plan is what runs
    for item in plan:  # and it was said on stderr, before the runs
        line = f"{item['reason']}  {item['entry']}: {item['detail']}"
        assert done.stderr.index(line) < done.stderr.index(f"start   {item['entry']}")
    return {item["entry"]: (item["reason"], item["detail"]) for item in plan}, done


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as file:
        file.write(text)


def test_only_entries_their_records_do_not_prove_are_proved_again(tmp_path: Path) -> None:
    root = _project(tmp_path)
    plan, done = _changed(root, "--rotation", "0")
    assert plan == {
        "proves": ("no record", "no result recorded"),
        "raises": ("no record", "no result recorded"),
    }
    assert "proving 2 of 2 entries (no rotation)" in done.stderr
    assert "1 left out, for a device this run does not use" in done.stderr  # needs-cuda

    plan, done = _changed(root, "--rotation", "0")
    assert plan == {}
    assert "proving 0 of 2 entries" in done.stderr
    assert "2 left out, their records prove them as they are here" in done.stderr

    # The reproducer's files changed: the record proves an older version.
    _append(root / RAISES / "repro.py", "# edited\n")
    # A pinned package the proof did not run with.
    version = importlib.metadata.version("PyYAML")
    entry = root / PROVES / "entry.yaml"
    entry.write_text(
        entry.read_text(encoding="utf-8").replace(
            "  timeout: 10", f"  timeout: 10\n  requirements:\n    - PyYAML=={version}"
        ),
        encoding="utf-8",
    )
    plan, _ = _changed(root, "--rotation", "0")
    assert plan == {
        "raises": ("changed", "reproducer: its files or patterns differ from the ones proved"),
        "proves": ("changed", f"pinned packages: PyYAML=={version} (proved with none)"),
    }
    plan, _ = _changed(root, "--rotation", "0")
    assert plan == {}  # both proved again, as they are now

    # A record made in another environment proves nothing about this one.
    path = root / "verification" / "proves.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["results"][0]["environment"]["key"] = "cpu|torch-1.0.0|py3.9|Linux-x86_64"
    path.write_text(json.dumps(record), encoding="utf-8")
    plan, _ = _changed(root, "--rotation", "0")
    (reason, detail) = plan.pop("proves")
    assert plan == {}
    assert reason == "changed"
    assert re.fullmatch(
        r"runner: never proved on cpu\|torch-\S+ \(recorded on cpu\|torch-1\.0\.0\|py3\.9\|"
        r"Linux-x86_64\)",
        detail,
    ), detail


def test_a_rotating_share_of_the_rest_is_proved_and_changes_from_git_are_added(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    plan, _ = _changed(root)  # records for both
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "records")

    plan, done = _changed(root, "--rotation", "1", "--no-record")
    assert plan == {"proves": ("rotation", "share 1 of 1"), "raises": ("rotation", "share 1 of 1")}
    assert re.search(
        r"proving 2 of 2 entries \(rotation: share 1 of 1 for \d{4}-\d\d-\d\d \(UTC\), every "
        r"entry at least once in 1 days\)",
        done.stderr,
    )
    plan, done = _changed(root, "--rotation", "2", "--no-record")
    (share,) = re.findall(r"rotation: share (\d) of 2 for", done.stderr)
    expected = {name for name in ("proves", "raises") if in_shard(name, int(share), 2)}
    assert plan == dict.fromkeys(expected, ("rotation", f"share {share} of 2"))

    # --since adds what changed in git: an entry's folder, or its record.
    _append(root / RAISES / "notes.txt", "untracked\n")
    plan, _ = _changed(root, "--rotation", "0", "--since", "HEAD", "--no-record")
    assert plan == {"raises": ("changed", "changed since HEAD")}
    (root / RAISES / "notes.txt").unlink()
    path = root / "verification" / "proves.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"proved"', '"proved" '))
    plan, _ = _changed(root, "--rotation", "0", "--since", "HEAD", "--no-record")
    assert plan == {"proves": ("changed", "changed since HEAD")}


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    root = _project(tmp_path)
    for args, message in [
        (["proves", "--changed"], "give entry ids, or --since/--changed, not both"),
        (["--rotation", "3"], "--rotation goes with --changed"),
        (["--changed", "--rotation", "x"], "must be a whole number >= 0, not 'x'"),
    ]:
        done = verify(root, *args)
        assert done.returncode == 2, args
        assert message in done.stderr
        assert "Traceback" not in done.stderr
    assert not (root / "verification").exists()
