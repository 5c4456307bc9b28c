"""Find entry files and parse them, keeping line numbers; the only code that reads YAML.

Entry files come from pull requests, so each is read with ``read_bounded``: a regular
file inside the entries folder, of at most ``MAX_FILE_BYTES``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from failpedia.catalog.bounded_read import RefusedFile, read_bounded
from failpedia.catalog.model import ID_PATTERN
from failpedia.catalog.problems import ProblemList, display_path
from failpedia.catalog.yaml_source import YamlDocument, YamlSyntaxError, parse_yaml

ENTRY_FILENAME = "entry.yaml"
CATEGORIES_FILENAME = "categories.yaml"
MAX_FILE_BYTES = 1_000_000
# How deep below the entries folder folders are looked into: an entry's folder is 2 levels
# down, its fixtures a few more. Deeper ones are a problem, and not read: a pull request
# could nest thousands of levels (past the system's path limit).
MAX_DEPTH = 8


@dataclass
class SourceFile:
    """A parsed YAML file and where it lives."""

    path: Path
    display: str
    document: YamlDocument
    text: str


def read_yaml_file(
    path: Path,
    root: Path | None,
    problems: ProblemList,
    within: Path,
    data: bytes | None = None,
) -> SourceFile | None:
    """Parse one file found in the folder ``within`` (or ``data``, its bytes already read
    with ``read_bounded``); record a problem (not an exception) when it cannot be read as
    YAML."""
    display = display_path(path, root)
    if data is None:
        try:
            data = read_bounded(path, within=within, limit=MAX_FILE_BYTES)
        except RefusedFile as refused:
            problems.add(display, 0, "", refused.message)
            return None
    elif len(data) > MAX_FILE_BYTES:
        problems.add(display, 0, "", f"file is larger than {MAX_FILE_BYTES:,} bytes")
        return None
    if b"\0" in data:
        problems.add(display, 0, "", "file is binary, not YAML text")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        problems.add(display, line, "", "file is not valid UTF-8")
        return None
    try:
        document = parse_yaml(text)
    except YamlSyntaxError as error:
        problems.add(display, error.line, "", error.message)
        return None
    return SourceFile(path, display, document, text)


def find_entry_files(entries_dir: Path) -> list[Path]:
    """Every ``<category>/<id>/entry.yaml`` under the entries folder, in a stable order."""
    return sorted(entries_dir.glob(f"*/*/{ENTRY_FILENAME}"))


def folder_name_problem(path: Path) -> str | None:
    """Why the folders of the entry file at ``<category>/<id>/entry.yaml`` cannot name its
    page, if they cannot: both names go as they are into paths, URLs and the preview's
    pages, so each must be an id before anything else reads the file."""
    for what, name in (("category", path.parent.parent.name), ("entry", path.parent.name)):
        if not re.fullmatch(ID_PATTERN, name):
            return (
                f"the {what} folder name {name!r} is not an id (lowercase letters and digits, "
                "in words joined by single hyphens): the entry is left out until its folder "
                "is renamed"
            )
    return None


def find_misplaced_entry_files(entries_dir: Path) -> tuple[list[Path], list[Path]]:
    """Entry files at any depth other than ``<category>/<id>/entry.yaml``, and the folders
    deeper than ``MAX_DEPTH`` levels (the first of each branch), which are not looked into.
    Links to folders are not followed."""
    expected = set(find_entry_files(entries_dir))
    misplaced: list[Path] = []
    too_deep: list[Path] = []
    folders = [(entries_dir, 0)]
    while folders:  # a stack, not recursion: the depth is the folder's to choose
        folder, depth = folders.pop()
        try:
            items = list(os.scandir(folder))
        except OSError:
            continue
        for item in items:
            path = Path(item.path)
            try:
                is_folder = item.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_folder and depth + 1 > MAX_DEPTH:
                too_deep.append(path)
            elif is_folder:
                folders.append((path, depth + 1))
            elif item.name == ENTRY_FILENAME and path not in expected:
                misplaced.append(path)
    return sorted(misplaced), sorted(too_deep)
