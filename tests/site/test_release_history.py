"""When each wording came and went, from the signatures' ``releases``: the page shows
"added in", "changed in" and "removed in" per signature, marks an entry that no release
prints any more, and ``failpedia diagnose`` still finds that entry; the validator keeps a
change or removal consistent with the range it ends."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import (
    LIMIT,
    REPO_ROOT,
    copy_fixture,
    display,
    entry_data,
    line_of,
    run_cli,
    validate,
    write_entry_data,
)

# widget-limit's message as widgets 1.2 to 1.9 printed it, before 2.0 reworded it.
OLD_WORDING = {
    "text": "FooError: too many widgets (3 > 2)",
    "pattern": r"FooError: too many widgets \(\d+ > \d+\)",
    "verified_from": "framework-source",
    "verified_at": "factory.py of widgets 1.9 in the test fixture",
    "emitted_by": "widgets 1.2 to 1.9; 2.0 reworded it",
    "releases": [{"package": "widgets", "first": "1.2", "last": "1.9", "changed_in": "2.0"}],
    "seen_in_note": "Test data, a made-up message that no public thread shows.",
}


# widget-limit's message as widgets 2.0 and later print it.
CURRENT = [{"package": "widgets", "first": "2.0"}]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = copy_fixture(tmp_path)
    shutil.copytree(REPO_ROOT / "templates", project / "templates")
    return project


def _with_signatures(root: Path, current: dict, *older: dict) -> str:
    """widget-limit with its own message given ``current``'s fields, and ``older``
    wordings after it; returns the entry file's text."""
    data = entry_data(root, LIMIT)
    data["signatures"] = [{**data["signatures"][0], **current}, *older]
    return write_entry_data(root, LIMIT, data)


def _page(root: Path) -> str:
    result = run_cli(root, "render", "--out", str(root / "out"))
    assert result.returncode == 0, result.stderr
    return (root / "out" / "widgets" / "widget-limit.md").read_text(encoding="utf-8")


def test_each_signature_shows_when_it_was_added_and_changed(root: Path) -> None:
    _with_signatures(
        root,
        {
            "emitted_by": "widgets 2.0 and later",
            "releases": [{"package": "widgets", "first": "2.0"}],
        },
        OLD_WORDING,
    )
    page = _page(root)
    assert "        - **Releases:** added in widgets 2.0\n" in page
    assert "        - **Releases:** added in widgets 1.2 · changed in widgets 2.0\n" in page
    assert "No longer emitted" not in page  # 2.0's wording is still printed


def test_an_entry_no_release_prints_is_marked_and_still_diagnosed(root: Path) -> None:
    ended = [{"package": "widgets", "first": "2.0", "last": "2.3", "removed_in": "2.4"}]
    _with_signatures(
        root,
        {"emitted_by": "widgets 2.0 to 2.3; 2.4 removed the check", "releases": ended},
        OLD_WORDING,
    )
    page = _page(root)
    assert "· **No longer emitted since widgets 2.4**\n" in page
    assert '!!! note "No longer emitted since widgets 2.4"' in page
    assert "        - **Releases:** added in widgets 2.0 · removed in widgets 2.4\n" in page
    log = root / "train.log"
    log.write_text("step 12\nFooError: too many widgets (3 > 2)\n", encoding="utf-8")
    found = run_cli(root, "diagnose", "--entries", str(root / "entries"), str(log))
    assert found.returncode == 0, found.stderr
    assert "widget-limit (initiates the failure)" in found.stdout


# The ends of the ranges the next test refuses, as the entry file writes them.
ENDS = (("changed_in", "1.9.1"), ("changed_in", "3.0"), ("removed_in", "1.5"))


def test_a_change_or_removal_must_end_its_range(root: Path) -> None:
    ended = [{"package": "widgets", "first": "2.0", "last": "2.3", "removed_in": "2.4"}]
    text = _with_signatures(
        root,
        {"emitted_by": "widgets 2.0 to 2.3; 2.4 removed it", "releases": ended},
        {
            **OLD_WORDING,
            "emitted_by": "widgets 1.2 to 1.9; 1.9.1 changed it",
            "releases": [
                {"package": "widgets", "first": "1.2", "last": "1.9", "changed_in": "1.9.1"},
            ],
        },
        {
            **OLD_WORDING,
            "text": "FooError: widgets over limit",
            "pattern": "FooError: widgets over limit",
            "emitted_by": "widgets 1.0 to 1.1, changed in 3.0; gizmos 1.0, removed in 1.5",
            "releases": [
                {"package": "widgets", "first": "1.0", "last": "1.1", "changed_in": "3.0"},
                {"package": "gizmos", "first": "1.0", "removed_in": "1.5"},
            ],
        },
    )
    file = display(LIMIT)
    lines = [line_of(text, f'{key}: "{release}"') for key, release in ENDS]
    _, problems = validate(root)
    assert problems == [
        f"{file}:{lines[0]}: signatures[1].releases[0].changed_in: "
        "1.9.1 must come after last (1.9): the range says 1.9.1 still prints it",
        f"{file}:{lines[1]}: signatures[2].releases[0].changed_in: "
        "no other signature of this entry has a widgets range that covers 3.0: add the "
        "wording it changed to, with its range, or say `removed_in`",
        f"{file}:{lines[2]}: signatures[2].releases[1].removed_in: "
        "needs `last` too, the last release that prints the wording (before 1.5), so the "
        "range the check reads ends there",
    ]


def test_a_change_the_prose_does_not_name_is_refused(root: Path) -> None:
    text = _with_signatures(
        root,
        {
            "emitted_by": "widgets 2.0 and later",
            "releases": [{"package": "widgets", "first": "2.0"}],
        },
        {**OLD_WORDING, "emitted_by": "widgets 1.2 to 1.9"},
    )
    _, problems = validate(root)
    assert problems == [
        f"{display(LIMIT)}:{line_of(text, 'changed_in')}: signatures[1].releases[0].changed_in: "
        "`emitted_by` must name 2.0, so the page says the range that is checked (widgets 1.2 "
        "to 1.9)"
    ]
