"""Files a pull request brings that are not what they claim: links to devices or to files
outside the project, FIFOs, huge files, YAML that expands without end, ids the site
already uses. Each is refused with a problem line (exit 1), never a traceback or a hang.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import (
    LIMIT,
    copy_fixture,
    display,
    entry_data,
    entry_file,
    line_of,
    problem_lines,
    replace_in_entry,
    run_cli,
    write_entry_data,
)

LIMIT_FILE = display(LIMIT)
SCRIPT_FILE = f"entries/{LIMIT}/repro.py"
# Every run here must end this quickly; a hang or a read of gigabytes would not.
QUICKLY = 5


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_fixture(tmp_path)


def _validate_quickly(root: Path) -> list[str]:
    result = run_cli(root, "validate", timeout=QUICKLY)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, (result.stdout, result.stderr)
    return problem_lines(result.stderr)


def _replace_with_link(path: Path, target: str) -> None:
    path.unlink()
    path.symlink_to(target)


def _replace_with_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


# --- 7. special files, links out of the project, huge files -----------------------------


def test_entry_linked_to_dev_zero_is_refused(root: Path) -> None:
    _replace_with_link(entry_file(root, LIMIT), "/dev/zero")
    assert _validate_quickly(root) == [
        f"{LIMIT_FILE}: is a link to /dev/zero, outside entries/; only files inside it are read"
    ]


def test_entry_that_is_a_fifo_is_refused_without_blocking(root: Path) -> None:
    _replace_with_fifo(entry_file(root, LIMIT))
    assert _validate_quickly(root) == [f"{LIMIT_FILE}: is a FIFO, not a regular file"]


def test_entry_linked_to_a_file_outside_the_project_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text(entry_file(root, LIMIT).read_text(encoding="utf-8"), encoding="utf-8")
    _replace_with_link(entry_file(root, LIMIT), str(outside))
    assert _validate_quickly(root) == [
        f"{LIMIT_FILE}: is a link to {outside}, outside entries/; only files inside it are read"
    ]


def test_category_folder_linked_outside_is_refused(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (root / "entries" / "widgets").rename(elsewhere)
    (root / "entries" / "widgets").symlink_to(elsewhere)
    lines = _validate_quickly(root)
    link = f"is a link to {elsewhere}/widget-limit/entry.yaml, outside entries/"
    assert f"{LIMIT_FILE}: {link}; only files inside it are read" in lines


def test_a_huge_entry_is_refused_without_reading_it(root: Path) -> None:
    path = entry_file(root, LIMIT)
    os.truncate(path, 4_000_000_000)  # sparse: no disk used, but 4 GB to read
    assert _validate_quickly(root) == [f"{LIMIT_FILE}: file is larger than 1,000,000 bytes"]


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "outside", "huge", "folder"])
def test_hostile_reproducer_script_is_refused(root: Path, tmp_path: Path, kind: str) -> None:
    script = root / "entries" / LIMIT / "repro.py"
    if kind == "dev-zero":
        _replace_with_link(script, "/dev/zero")
        message = "is a link to /dev/zero, outside entries/; only files inside it are read"
    elif kind == "fifo":
        _replace_with_fifo(script)
        message = "is a FIFO, not a regular file"
    elif kind == "outside":
        outside = tmp_path / "repro.py"
        outside.write_text(script.read_text(encoding="utf-8"), encoding="utf-8")
        _replace_with_link(script, str(outside))
        message = f"is a link to {outside}, outside entries/; only files inside it are read"
    elif kind == "huge":
        os.truncate(script, 4_000_000_000)
        message = "file is larger than 1,000,000 bytes"
    else:
        script.unlink()
        script.mkdir()
        message = "is a folder, not a regular file"
    text = entry_file(root, LIMIT).read_text(encoding="utf-8")
    line = line_of(text, "reproducer:")
    assert _validate_quickly(root) == [
        f"{LIMIT_FILE}:{line}: reproducer.script: repro.py: {message}"
    ]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_hostile_category_registry_is_refused(root: Path, kind: str) -> None:
    registry = root / "entries" / "categories.yaml"
    if kind == "fifo":
        _replace_with_fifo(registry)
        message = "is a FIFO, not a regular file"
    else:
        _replace_with_link(registry, "/dev/zero")
        message = "is a link to /dev/zero, outside entries/; only files inside it are read"
    lines = _validate_quickly(root)
    assert f"entries/categories.yaml: {message}" in lines


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_hostile_schema_file_is_refused_by_the_schema_check(root: Path, kind: str) -> None:
    assert run_cli(root, "schema").returncode == 0
    schema = root / "entries" / "entry.schema.json"
    if kind == "fifo":
        _replace_with_fifo(schema)
        message = "is a FIFO, not a regular file"
    else:
        _replace_with_link(schema, "/dev/zero")
        message = "is a link to /dev/zero, outside entries/; only files inside it are read"
    result = run_cli(root, "schema", "--check", timeout=QUICKLY)
    assert "Traceback" not in result.stderr
    assert result.returncode == 1
    assert f"entries/entry.schema.json: {message}" in result.stderr


def test_writing_schemas_replaces_a_link_instead_of_writing_through_it(
    root: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    (root / "entries" / "entry.schema.json").symlink_to(victim)
    os.mkfifo(root / "entries" / "categories.schema.json")
    result = run_cli(root, "schema", timeout=QUICKLY)
    assert result.returncode == 0, result.stderr
    assert victim.read_text(encoding="utf-8") == "precious"
    for name in ("entry.schema.json", "categories.schema.json"):
        written = root / "entries" / name
        assert written.is_file() and not written.is_symlink()
        assert json.loads(written.read_text(encoding="utf-8"))["$schema"]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_hostile_verification_record_is_refused(root: Path, kind: str) -> None:
    records = root / "verification"
    records.mkdir()
    record = records / "widget-limit.json"
    if kind == "fifo":
        os.mkfifo(record)
        message = "is a FIFO, not a regular file"
    elif kind == "dev-zero":
        record.symlink_to("/dev/zero")
        message = "is a link to /dev/zero, outside verification/; only files inside it are read"
    else:
        record.write_text("{}", encoding="utf-8")
        os.truncate(record, 4_000_000_000)
        message = "file is larger than 8,000,000 bytes"
    (root / "templates").symlink_to(Path(__file__).resolve().parents[2] / "templates")
    result = run_cli(root, "render", "--out", str(root / "out"), timeout=QUICKLY)
    assert "Traceback" not in result.stderr
    assert result.returncode == 1
    assert problem_lines(result.stderr) == [f"verification/widget-limit.json: {message}"]


# --- 8. YAML that expands without end --------------------------------------------------


def _merge_bomb(levels: int) -> str:
    lines = ["a0: &a0 {x: 1, y: 2}"]
    lines += [f"a{n}: &a{n} {{<<: [*a{n - 1}, *a{n - 1}], k{n}: 1}}" for n in range(1, levels)]
    return "\n".join(lines)


def test_merge_key_bomb_is_refused_quickly(root: Path) -> None:
    text = replace_in_entry(root, LIMIT, "affects:\n", _merge_bomb(40) + "\naffects:\n")
    assert _validate_quickly(root) == [
        f"{LIMIT_FILE}:{line_of(text, 'a1: &a1')}: "
        "YAML merge keys (<<) are not supported in entries"
    ]


def test_merge_key_without_alias_is_refused(root: Path) -> None:
    text = replace_in_entry(
        root, LIMIT, "reproducer:\n  device: cpu", "reproducer:\n  <<: {device: cpu}"
    )
    assert _validate_quickly(root) == [
        f"{LIMIT_FILE}:{line_of(text, '<<:')}: YAML merge keys (<<) are not supported in entries"
    ]


def test_scalar_alias_bomb_is_refused_quickly(root: Path) -> None:
    """One long text named once and used a hundred thousand times."""
    long_text = "widget " * 60_000
    uses = ", ".join(["*t"] * 100_000)
    text = replace_in_entry(
        root, LIMIT, "affects:\n  - The widget factory", f"affects: [&t '{long_text}', {uses}]"
    )
    assert _validate_quickly(root) == [
        f"{LIMIT_FILE}:{line_of(text, 'affects:')}: "
        "YAML anchors and aliases are not supported in entries"
    ]


# --- 9. ids the site already uses -------------------------------------------------------

RESERVED = {
    "index": "the page of every folder",
    "coverage": "the coverage page",
    "assets": "the site's scripts, styles and images",
    "search": "the search index",
    "404": "the page shown for a missing address",
    "signatures": "the signature index, signatures.json",
    "gadgets": "the category 'gadgets'",
    "contributing": "docs/contributing.md",
}


def _move_limit_to(root: Path, new_id: str) -> str:
    """widget-limit under another id (and nothing linking to its old one)."""
    (root / "entries" / LIMIT).rename(root / "entries" / "widgets" / new_id)
    data = entry_data(root, f"widgets/{new_id}")
    data["id"] = new_id
    jam = entry_data(root, "widgets/widget-jam")
    del jam["related"]
    write_entry_data(root, "widgets/widget-jam", jam)
    return write_entry_data(root, f"widgets/{new_id}", data)


@pytest.mark.parametrize("reserved", RESERVED)
def test_reserved_entry_id_is_refused(root: Path, reserved: str) -> None:
    (root / "docs").mkdir()
    (root / "docs" / "contributing.md").write_text("# Contributing\n", encoding="utf-8")
    text = _move_limit_to(root, reserved)
    lines = _validate_quickly(root)
    id_line = line_of(text, "id: " + json.dumps(reserved))
    assert lines == [
        f"entries/widgets/{reserved}/entry.yaml:{id_line}: id: "
        f"{reserved!r} is reserved: the site already uses that name for {RESERVED[reserved]}"
    ]
    render = run_cli(root, "render", "--out", str(root / "out"), timeout=QUICKLY)
    assert "Traceback" not in render.stderr
    assert render.returncode == 1
    assert problem_lines(render.stderr) == lines


@pytest.mark.parametrize("reserved", ["coverage", "index", "search", "contributing"])
def test_reserved_category_id_is_refused(root: Path, reserved: str) -> None:
    (root / "docs").mkdir()
    (root / "docs" / "contributing.md").write_text("# Contributing\n", encoding="utf-8")
    registry = root / "entries" / "categories.yaml"
    registry.write_text(
        registry.read_text(encoding="utf-8") + f"  - id: {reserved}\n    title: More\n"
        "    description: More failures.\n",
        encoding="utf-8",
    )
    lines = _validate_quickly(root)
    assert lines == [
        f"entries/categories.yaml:8: categories[2].id: {reserved!r} is reserved: the site "
        f"already uses that name for {RESERVED[reserved]}"
    ]
