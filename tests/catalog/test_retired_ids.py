"""Retired ids (``entries/retired.yaml``): a renamed or merged entry's old id keeps
working. ``failpedia validate`` refuses a registry that could send an old link nowhere or
to a different failure; ``failpedia explain OLD_ID`` and the index map the old id to the
entry that took its place. The site's pages at old addresses: ``site/test_retired_pages``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import (
    JAM,
    MERGED,
    REGISTRY,
    RENAMED,
    copy_fixture,
    display,
    entry_data,
    line_of,
    run_cli,
    validate,
    write_entry_data,
    write_registry,
)
from sitebuild import REPO


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_fixture(tmp_path)


def test_a_registry_of_renamed_and_merged_ids_validates(root: Path) -> None:
    write_registry(root, RENAMED, MERGED)
    result = run_cli(root, "validate")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "3 entries in 2 categories: no problems.\n"


def test_an_entry_that_takes_a_retired_id_is_refused(root: Path) -> None:
    registry = write_registry(root, {**RENAMED, "id": "widget-jam"})
    line = line_of(registry, "id: widget-jam")
    _, problems = validate(root)
    assert problems == [
        f"{display(JAM)}:2: id: 'widget-jam' is a retired id (renamed to 'widget-limit' on "
        f"2026-11-02, {REGISTRY}:{line}); old links lead there, so choose another id"
    ]


def test_a_target_that_is_no_entry_is_refused_with_the_nearest_id(root: Path) -> None:
    registry = write_registry(root, {**RENAMED, "into": "widget-limits"})
    line = line_of(registry, "into: widget-limits")
    _, problems = validate(root)
    assert problems == [
        f"{REGISTRY}:{line}: retired[0].into: no entry with id 'widget-limits' "
        "(did you mean 'widget-limit'?)"
    ]


def test_a_chain_of_retired_ids_is_refused_naming_the_end(root: Path) -> None:
    registry = write_registry(root, RENAMED, {**MERGED, "into": "widget-overflow"})
    line = line_of(registry, "into: widget-overflow")
    _, problems = validate(root)
    assert problems == [
        f"{REGISTRY}:{line}: retired[1].into: 'widget-overflow' is itself retired "
        "(gadget-stall -> widget-overflow -> widget-limit); point at 'widget-limit', the "
        "entry at the end, so the old address reaches it in one step"
    ]


def test_a_cycle_of_retired_ids_is_refused(root: Path) -> None:
    write_registry(root, {**RENAMED, "into": "gadget-stall"}, {**MERGED, "into": "widget-overflow"})
    _, problems = validate(root)
    assert [problem.split(": ", 2)[1:] for problem in problems] == [
        [
            "retired[0].into",
            "'gadget-stall' is itself retired, and the ids go round in a cycle "
            "(widget-overflow -> gadget-stall -> widget-overflow)",
        ],
        [
            "retired[1].into",
            "'widget-overflow' is itself retired, and the ids go round in a cycle "
            "(gadget-stall -> widget-overflow -> gadget-stall)",
        ],
    ]


def test_reserved_names_and_ids_retired_twice_are_refused(root: Path) -> None:
    registry = write_registry(
        root, {**RENAMED, "id": "coverage", "category": "assets"}, MERGED, MERGED
    )
    first, second = (
        number for number, text in enumerate(registry.splitlines(), 1) if "gadget-stall" in text
    )
    _, problems = validate(root)
    assert problems == [
        f"{REGISTRY}:3: retired[0].id: 'coverage' is reserved: the site uses that name for "
        "the coverage page",
        f"{REGISTRY}:4: retired[0].category: 'assets' is no category: the site uses that "
        "name for the site's scripts, styles and images",
        f"{REGISTRY}:{second}: retired[2].id: 'gadget-stall' is retired twice; also on line "
        f"{first}",
    ]


def test_an_unquoted_date_and_an_unknown_reason_are_named(root: Path) -> None:
    write_registry(root, {**RENAMED, "reason": "moved", "date": "2026-11-02"})
    _, problems = validate(root)
    assert problems == [
        f"{REGISTRY}:6: retired[0].reason: must be one of 'renamed', 'merged', not 'moved'",
        f"{REGISTRY}:7: retired[0].date: expected text, got date (put it in quotes)",
    ]


def test_a_link_to_a_retired_id_names_the_entry_that_took_its_place(root: Path) -> None:
    write_registry(root, RENAMED)
    data = entry_data(root, JAM)
    data["related"] = [{"id": "widget-overflow", "relation": "see-also"}]
    text = write_entry_data(root, JAM, data)
    _, problems = validate(root)
    assert problems == [
        f"{display(JAM)}:{line_of(text, 'widget-overflow')}: related[0].id: no entry with id "
        "'widget-overflow' (it was renamed to 'widget-limit' on 2026-11-02; link to that)"
    ]


def _explain(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "failpedia.cli", "explain", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=root,
    )


def test_explain_an_old_id_shows_the_entry_that_took_its_place(root: Path) -> None:
    write_registry(root, RENAMED)
    entries = str(root / "entries")
    old = _explain(root, "--entries", entries, "widget-overflow")
    new = _explain(root, "--entries", entries, "widget-limit")
    assert old.returncode == 0, old.stderr
    assert old.stdout == new.stdout
    assert "widget-limit · widgets · crash" in old.stdout
    assert old.stderr == (
        "failpedia explain: widget-overflow was renamed to widget-limit on 2026-11-02; its "
        "entry follows.\n"
    )


def test_the_index_the_wheel_ships_maps_old_ids(root: Path) -> None:
    write_registry(root, RENAMED, MERGED)
    out = root / "out"
    assert run_cli(root, "index", "--out", str(out)).returncode == 0
    index = json.loads((out / "signatures.json").read_text(encoding="utf-8"))
    assert index["retired"] == {
        "gadget-stall": {"into": "widget-jam", "reason": "merged", "date": "2026-11-20"},
        "widget-overflow": {"into": "widget-limit", "reason": "renamed", "date": "2026-11-02"},
    }
    # ...and explain reads it from there as from a checkout.
    old = _explain(root, "--index", str(out / "signatures.json"), "gadget-stall")
    assert old.stderr.startswith("failpedia explain: gadget-stall was merged into widget-jam")


def test_the_schema_editors_read_covers_the_registry(root: Path) -> None:
    schema = json.loads((REPO / "entries" / "retired.schema.json").read_text(encoding="utf-8"))
    fields = schema["$defs"]["RetiredId"]
    assert fields["required"] == ["id", "category", "into", "reason", "date"]
    assert fields["properties"]["reason"]["enum"] == ["renamed", "merged"]


def test_new_refuses_a_retired_id(root: Path) -> None:
    write_registry(root, MERGED)
    result = run_cli(root, "new", "gadgets/gadget-stall")
    assert result.returncode == 2
    assert result.stderr == (
        "failpedia new: 'gadget-stall' is a retired id (merged into 'widget-jam' on "
        "2026-11-20, entries/retired.yaml:3); old links lead there, so choose another id\n"
    )
    assert not (root / "entries" / "gadgets" / "gadget-stall").exists()
