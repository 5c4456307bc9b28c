"""Each entry file's own check, kept in memory and reused while nothing it read changed.

``mkdocs serve`` loads the catalog again on every rebuild; with this cache an edit to one
entry parses, converts and checks that entry alone. A result is reused only when the
entry file's bytes, its reproducer's bytes, the category registry's ids and the package
version are those it was computed from. It lives in this process only (nothing is
written to disk) and holds at most ``MAX_FILES`` files, the least recently used dropped
first.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import failpedia
from failpedia.catalog.entry_check import CheckedFile, check_entry_file, digest, file_digest

MAX_FILES = 5000

# (entry file, project root) -> (entry digest, category ids, package version), result
_checked: OrderedDict[
    tuple[Path, Path | None], tuple[tuple[str, frozenset[str], str], CheckedFile]
] = OrderedDict()


def checked_entry_file(
    path: Path, root: Path | None, category_ids: frozenset[str]
) -> tuple[CheckedFile, bool]:
    """The check of one entry file, and whether it was reused from an earlier one."""
    try:
        data: bytes | None = path.read_bytes()
    except OSError:
        data = None  # checked again, so that the problem names the error
    key = (digest(data), category_ids, failpedia.__version__)
    slot = (path, root)
    cached = _checked.get(slot)
    if (
        data is not None
        and cached is not None
        and cached[0] == key
        and all(file_digest(input_path) == known for input_path, known in cached[1].inputs)
    ):
        _checked.move_to_end(slot)
        return cached[1], True
    checked = check_entry_file(path, data, root, category_ids)
    if data is not None:
        _checked[slot] = (key, checked)
        _checked.move_to_end(slot)
        while len(_checked) > MAX_FILES:
            _checked.popitem(last=False)
    return checked, False
