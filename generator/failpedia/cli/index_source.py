"""Where ``diagnose``, ``explain``, ``run`` and ``report`` get the signature index and the
entry texts: a file given, the package's data (wheel installs), or the catalog of a
checkout compiled now, from its valid entries (a draft being written does not stop them)."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from failpedia.signatures.index_format import (
    ENTRIES_FILE,
    INDEX_FILE,
    IndexFile,
    IndexUnavailable,
    SignatureIndex,
    parse_index,
)
from failpedia.signatures.nearest_rules import NEAREST_FILE

if TYPE_CHECKING:  # the catalog (YAML, models) is only loaded to compile an index
    from failpedia.catalog.catalog import Catalog
    from failpedia.diagnose.findings import Diagnosis
    from failpedia.settings import ProjectSettings

PACKAGE_DATA = "data"
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def packaged_file(name: str) -> Path | None:
    """A data file installed with the package (wheel installs), or None."""
    # Not through importlib.resources: the wheel installs it as plain files, and
    # importlib.resources costs diagnose's start-up 10 ms of imports.
    candidate = PACKAGE_DIR / PACKAGE_DATA / name
    return candidate if candidate.is_file() else None


def source_tree_root() -> Path | None:
    """The repository this package runs from (editable installs), or None."""
    root = PACKAGE_DIR.parents[1]
    return root if (root / "entries" / "categories.yaml").is_file() else None


def compile_catalog(entries_dir: Path) -> tuple[Catalog, ProjectSettings]:
    """The valid entries of ``entries_dir`` (and the settings of its project: the site and
    repository URLs).

    Entries with problems are left out, with one warning on stderr: a draft in a checkout
    must not stop ``diagnose``, ``explain`` or ``run``; ``failpedia validate`` is strict.
    Refused, with every problem listed, only when no valid entry is left. A command that
    needs both the index and the entry texts (``explain``) loads the folder once, and
    warns once.
    """
    return _compile_catalog(entries_dir.resolve())


# Ids of entries that a catalog compiled in this process left out for their problems.
_left_out_ids: set[str] = set()


@functools.cache
def _compile_catalog(entries_dir: Path) -> tuple[Catalog, ProjectSettings]:
    from failpedia.catalog.validate import check_catalog
    from failpedia.settings import read_settings

    root = entries_dir.parent
    settings = read_settings(root)
    check = check_catalog(entries_dir, root, settings.docs_dir, settings.healthy_logs_dir)
    problems = check.problems
    if problems and not check.catalog.entries:
        raise IndexUnavailable(f"{len(problems)} problem(s) in entries:\n{problems.report()}")
    if problems:
        print(f"warning: {left_out_text(check.left_out, len(problems))}", file=sys.stderr)
        _left_out_ids.update(draft.folder_id for draft in check.drafts)
    return check.catalog, settings


def left_out_text(left_out: int, problems: int) -> str:
    """The one warning a command that uses the valid entries gives about the others."""
    if left_out == 1:
        return "1 entry with problems was left out; `failpedia validate` lists why"
    if left_out:
        return f"{left_out} entries with problems were left out; `failpedia validate` lists why"
    return f"{problems} problem(s) in the entries folder; `failpedia validate` lists them"


def was_left_out(entry_id: str) -> bool:
    """Whether a catalog compiled here left out an entry with this id for its problems."""
    return entry_id in _left_out_ids


def _checkout_entries() -> Path:
    root = source_tree_root()
    if root is None:
        raise IndexUnavailable(
            "no signature index: this installation ships none; pass --entries DIR or "
            "--index signatures.json"
        )
    return root / "entries"


def _read_index_file(index_file: Path) -> IndexFile:
    try:
        return IndexFile(str(index_file), index_file.read_bytes())
    except OSError as error:
        raise IndexUnavailable(
            f"{index_file}: cannot read the signature index: {error.strerror or error}"
        ) from None


def _compiled_index(entries_dir: Path) -> SignatureIndex:
    from failpedia.catalog.index_build import build_index

    catalog, settings = compile_catalog(entries_dir)
    return parse_index(build_index(catalog, settings.site_url, settings.repo_url), str(entries_dir))


def open_index(
    index_file: Path | None = None, entries_dir: Path | None = None
) -> IndexFile | SignatureIndex:
    """The index file to read (given, or shipped with the package), or else the index
    compiled from an entries folder or the checkout's."""
    return index_opener(index_file, entries_dir)()


def index_opener(
    index_file: Path | None = None, entries_dir: Path | None = None
) -> Callable[[], IndexFile | SignatureIndex]:
    """Find the index's source now, and return what opens it.

    Finding it is quick, and a missing file or folder is an error before anything runs;
    compiling a checkout's entries takes a second or more, which ``failpedia run`` spends
    beside the command rather than before it."""
    if index_file is None and entries_dir is None:
        index_file = packaged_file(INDEX_FILE)
    if index_file is not None:
        found = _read_index_file(index_file)
        return lambda: found
    entries = entries_dir or _checkout_entries()
    if not entries.is_dir():
        raise IndexUnavailable(f"{entries}: entries folder does not exist")
    return functools.partial(_compiled_index, entries)


def load_index(index_file: Path | None = None, entries_dir: Path | None = None) -> SignatureIndex:
    """The index from a file, from an entries folder, from the package, or from the checkout."""
    index = open_index(index_file, entries_dir)
    return index.load() if isinstance(index, IndexFile) else index


def load_nearest(
    index_file: Path | None = None, entries_dir: Path | None = None
) -> dict[str, Any] | None:
    """``nearest.json`` beside the index file given (or shipped with the package), or
    built from the catalog the index was compiled from; None where there is none (an index
    file copied alone): the nearest entries are then not listed."""
    if index_file is None and entries_dir is None:
        index_file = packaged_file(INDEX_FILE)
    if index_file is not None:
        try:
            data: dict[str, Any] = json.loads(
                (index_file.parent / NEAREST_FILE).read_text(encoding="utf-8")
            )
        except (OSError, ValueError):
            return None
        return data
    from failpedia.catalog.index_build import build_nearest

    catalog, _ = compile_catalog(entries_dir or _checkout_entries())
    return build_nearest(catalog)


def with_nearest(
    diagnosis: Diagnosis, index_file: Path | None = None, entries_dir: Path | None = None
) -> Diagnosis:
    """The diagnosis with the entries nearest in wording to its error-like lines, where no
    entry matched (what ``diagnose`` and ``run`` list then, apart from findings)."""
    if diagnosis.findings or not diagnosis.error_lines:
        return diagnosis
    from failpedia.diagnose.nearest import nearest_entries

    try:
        index = load_index(index_file, entries_dir)
    except IndexUnavailable:
        return diagnosis
    scored = [(item.score, item.text) for item in diagnosis.error_lines]
    found = nearest_entries(scored, load_nearest(index_file, entries_dir), index)
    return diagnosis._replace(nearest=tuple(found))


def load_entry_texts(
    entries_dir: Path | None = None, index_file: Path | None = None
) -> dict[str, dict[str, Any]]:
    """Every entry's fields by id: beside the index file given (as ``failpedia index``
    writes them), packaged with the wheel, or read from the checkout."""
    if entries_dir is None:
        beside = index_file.parent / ENTRIES_FILE if index_file is not None else None
        packaged = beside if beside and beside.is_file() else packaged_file(ENTRIES_FILE)
        if packaged is not None:
            texts: dict[str, dict[str, Any]] = json.loads(packaged.read_text(encoding="utf-8"))[
                "entries"
            ]
            return texts
    from failpedia.catalog.index_build import build_entry_texts

    catalog, _ = compile_catalog(entries_dir or _checkout_entries())
    entries: dict[str, dict[str, Any]] = build_entry_texts(catalog)["entries"]
    return entries
