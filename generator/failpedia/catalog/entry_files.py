"""Find entry files and parse them, keeping line numbers; the only code that reads YAML."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from failpedia.catalog.problems import ProblemList, display_path
from failpedia.catalog.yaml_source import YamlDocument, YamlSyntaxError, parse_yaml

ENTRY_FILENAME = "entry.yaml"
CATEGORIES_FILENAME = "categories.yaml"
MAX_FILE_BYTES = 1_000_000


@dataclass
class SourceFile:
    """A parsed YAML file and where it lives."""

    path: Path
    display: str
    document: YamlDocument
    text: str


def read_yaml_file(
    path: Path, root: Path | None, problems: ProblemList, data: bytes | None = None
) -> SourceFile | None:
    """Parse one file (or ``data``, its bytes already read); record a problem (not an
    exception) when it cannot be read as YAML."""
    display = display_path(path, root)
    if data is None:
        try:
            data = path.read_bytes()
        except OSError as error:
            problems.add(display, 0, "", f"cannot read file: {error.strerror}")
            return None
    if len(data) > MAX_FILE_BYTES:
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


def find_misplaced_entry_files(entries_dir: Path) -> list[Path]:
    """Entry files at any depth other than ``<category>/<id>/entry.yaml``."""
    expected = set(find_entry_files(entries_dir))
    return sorted(path for path in entries_dir.rglob(ENTRY_FILENAME) if path not in expected)
