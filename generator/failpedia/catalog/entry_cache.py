"""Each entry file's own check, kept in memory and reused while nothing it read changed.

``mkdocs serve`` loads the catalog again on every rebuild; with this cache an edit to one
entry parses, converts and checks that entry alone. A result is reused only when what
reading the entry file and its reproducer gives (their bytes, or why they were refused),
what the check knows of the catalog and the site (the entries folder, the category
registry's ids, the reserved names) and the package version are those it was computed
from. It lives in this process only (nothing is written to disk) and holds at most
``MAX_FILES`` files, the least recently used dropped first.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import failpedia
from failpedia.catalog.entry_check import (
    CheckedFile,
    EntryChecks,
    check_entry_file,
    outcome_digest,
    read_checked,
)

MAX_FILES = 5000

# (entry file, project root) -> (entry file's digest, checks, package version), result
_checked: OrderedDict[
    tuple[Path, Path | None], tuple[tuple[str, EntryChecks, str], CheckedFile]
] = OrderedDict()


def checked_entry_file(
    path: Path, root: Path | None, checks: EntryChecks
) -> tuple[CheckedFile, bool]:
    """The check of one entry file, and whether it was reused from an earlier one."""
    outcome = read_checked(path, checks.entries_dir)
    data = None if isinstance(outcome, Exception) else outcome
    key = (outcome_digest(outcome), checks, failpedia.__version__)
    slot = (path, root)
    cached = _checked.get(slot)
    if (
        data is not None
        and cached is not None
        and cached[0] == key
        and all(
            outcome_digest(read_checked(input_path, checks.entries_dir)) == known
            for input_path, known in cached[1].inputs
        )
    ):
        _checked.move_to_end(slot)
        return cached[1], True
    checked = check_entry_file(path, data, root, checks)
    if data is not None:
        _checked[slot] = (key, checked)
        _checked.move_to_end(slot)
        while len(_checked) > MAX_FILES:
            _checked.popitem(last=False)
    return checked, False
