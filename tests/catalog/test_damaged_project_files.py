"""Project files that are damaged rather than hostile: verification records cut short or
holding the wrong types, an entries folder nested far deeper than ``<category>/<id>``.
Each is a problem line naming the file (``failpedia validate`` and ``mkdocs build`` exit
non-zero, ``merge-records`` warns), never a traceback, a recursion error or a hang."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers import copy_fixture, problem_lines, run_cli
from sitebuild import REPO, mkdocs_build


def _record(entry: str, **changes: object) -> dict:
    """A well-formed record of one result for ``entry``, with ``changes`` to its result."""
    result = {
        "entry": entry,
        "verdict": "proved",
        "reason": "",
        "device": "cpu",
        "started_at": "2026-01-02T03:04:05Z",
        "timeout": 60,
        "broken": {"seconds": 1.0},
        "fixed": {"seconds": 0.5},
        "output_excerpt": "FooError: widget count 3 exceeds limit 2",
        "environment": {"key": "cpu|torch-2.13.0|py3.11|Linux", "torch": "2.13.0"},
    }
    result.update(changes)
    return {"entry": entry, "results": [result]}


# Each entry of the mini project gets a record damaged in its own way; the problem line
# each must give.
DAMAGED = {
    "widget-limit": (
        json.dumps(_record("widget-limit"))[:-30],
        "verification/widget-limit.json: not valid JSON: ",
    ),
    "widget-jam": (
        json.dumps(_record("widget-jam", environment="linux")),
        "verification/widget-jam.json: results[0].environment: must be an object, not a string",
    ),
    "gadget-timeout": (
        json.dumps(_record("gadget-timeout", started_at=20260102, output_excerpt=7)),
        "verification/gadget-timeout.json: results[0].started_at: must be a string, not a number",
    ),
}


def _damage_records(root: Path) -> Path:
    records = root / "verification"
    records.mkdir()
    for entry, (text, _) in DAMAGED.items():
        (records / f"{entry}.json").write_text(text, encoding="utf-8")
    return records


def _expected_lines(lines: list[str]) -> None:
    for _, expected in DAMAGED.values():
        assert any(line.startswith(expected) for line in lines), (expected, lines)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_fixture(tmp_path)


def test_validate_names_each_damaged_record(root: Path) -> None:
    _damage_records(root)
    result = run_cli(root, "validate")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    _expected_lines(problem_lines(result.stderr))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("environment", "linux", "results[0].environment: must be an object, not a string"),
        ("broken", [1.0], "results[0].broken: must be an object or null, not a list"),
        ("fixed", {"seconds": "fast"}, "results[0].fixed.seconds: must be a number, not a string"),
        ("verdict", None, "results[0].verdict: must be a string, not null"),
        ("output_excerpt", 7, "results[0].output_excerpt: must be a string or null, not a number"),
        ("reproducer", ["x"], "results[0].reproducer: must be a string or null, not a list"),
        (
            "environment",
            {"key": "k", "torch": 2.13},
            "results[0].environment.torch: must be a string or null, not a number",
        ),
    ],
    ids=["environment", "broken", "fixed-seconds", "verdict", "excerpt", "reproducer", "torch"],
)
def test_a_record_with_a_wrong_type_names_the_field(
    root: Path, field: str, value: object, message: str
) -> None:
    records = root / "verification"
    records.mkdir()
    record = _record("widget-limit", **{field: value})
    (records / "widget-limit.json").write_text(json.dumps(record), encoding="utf-8")
    result = run_cli(root, "validate")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    assert problem_lines(result.stderr) == [f"verification/widget-limit.json: {message}"]


def test_validate_accepts_a_well_formed_record(root: Path) -> None:
    records = root / "verification"
    records.mkdir()
    (records / "widget-limit.json").write_text(json.dumps(_record("widget-limit")), "utf-8")
    result = run_cli(root, "validate")
    assert result.returncode == 0, result.stderr


def test_mkdocs_build_refuses_damaged_records_with_their_paths(root: Path) -> None:
    _damage_records(root)
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    for name in ("docs", "templates"):
        shutil.copytree(REPO / name, root / name)
    result = mkdocs_build(root, root / "site")
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert result.returncode != 0
    _expected_lines([line.strip() for line in output.splitlines()])


def test_merge_records_warns_of_damaged_records_and_merges_the_others(root: Path) -> None:
    source = _damage_records(root)
    good = _record("widget-limit")
    (source / "widget-other.json").write_text(
        json.dumps({**good, "entry": "widget-other"}), encoding="utf-8"
    )
    destination = root / "merged"
    result = run_cli(root, "merge-records", str(source), str(destination))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == len(DAMAGED)
    for entry in DAMAGED:
        assert any(f"{entry}.json: " in line for line in warnings), (entry, warnings)
    assert "1 result merged" in result.stdout
    assert sorted(path.name for path in destination.glob("*.json")) == ["widget-other.json"]


def _nest(folder: Path, depth: int) -> Path:
    """``folder/d/d/.../d`` ``depth`` levels down, made one level at a time (relative to
    the folder above, so no path grows past the system's limit as it is made)."""
    folder.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=descriptor)
            deeper = os.open("d", os.O_RDONLY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = deeper
        with open(
            os.open("entry.yaml", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=descriptor), "w"
        ) as entry:
            entry.write("id: d\n")
    finally:
        os.close(descriptor)
    return folder


def _unnest(folder: Path) -> None:
    """Remove ``folder/d/d/...`` a level at a time, moving the rest up each time (removing
    it from the bottom would recurse as deep as it goes, or reach past the path limit)."""
    while (folder / "d").is_dir():
        if (folder / "d" / "d").is_dir():
            os.rename(folder / "d" / "d", folder / "up")
            shutil.rmtree(folder / "d")
            os.rename(folder / "up", folder / "d")
        else:
            shutil.rmtree(folder / "d")


@pytest.mark.parametrize("depth", [12, 1500, 3000])
def test_an_entries_folder_nested_too_deep_is_refused(root: Path, depth: int) -> None:
    """Far below ``<category>/<id>`` (past the system's path limit, too): one problem line
    names the folder where the nesting goes too deep, and nothing below it is read."""
    fixtures = _nest(root / "entries" / "widgets" / "widget-limit" / "fixtures", depth)
    try:
        result = run_cli(root, "validate", timeout=60)
    finally:
        _unnest(fixtures)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == 1
    too_deep = "entries/widgets/widget-limit/fixtures/d/d/d/d/d/d"
    assert problem_lines(result.stderr) == [
        f"{too_deep}: folders nested deeper than 8 levels below entries/ are not read; "
        "entries belong at entries/<category>/<id>/entry.yaml"
    ]


def test_an_entry_file_at_another_depth_is_still_named(root: Path) -> None:
    """Within the depth that is read, an entry file out of place is named as before."""
    stray = root / "entries" / "widgets" / "widget-limit" / "fixtures" / "entry.yaml"
    stray.parent.mkdir()
    stray.write_text("id: stray\n", encoding="utf-8")
    result = run_cli(root, "validate")
    assert result.returncode == 1
    assert problem_lines(result.stderr) == [
        "entries/widgets/widget-limit/fixtures/entry.yaml: entry files belong at "
        "entries/<category>/<id>/entry.yaml"
    ]
