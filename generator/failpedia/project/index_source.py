"""Where ``diagnose``, ``explain``, ``run``, ``report`` and the hooks get the signature
index and the entry texts: a file given (``--index``), an entries folder given
(``--entries``), the project found (``--root``, the current folder's, the package's
checkout: ``locate``) compiled through the user's cache (``index_cache``), or the data an
installed wheel ships. A draft being written in a checkout does not stop them: entries
with problems are left out, with one warning on stderr."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from failpedia.project.locate import PACKAGE_DIR, find_project
from failpedia.settings import ProjectSettings, read_settings
from failpedia.signatures.index_format import (
    ENTRIES_FILE,
    INDEX_FILE,
    IndexFile,
    IndexUnavailable,
    SignatureIndex,
)
from failpedia.signatures.nearest_rules import NEAREST_FILE

if TYPE_CHECKING:
    from failpedia.diagnose.findings import Diagnosis
    from failpedia.project.index_cache import CachedIndex

PACKAGE_DATA = "data"


def packaged_file(name: str) -> Path | None:
    """A data file installed with the package (wheel installs), or None."""
    # Not through importlib.resources: the wheel installs it as plain files, and
    # importlib.resources costs diagnose's start-up 10 ms of imports.
    candidate = PACKAGE_DIR / PACKAGE_DATA / name
    return candidate if candidate.is_file() else None


@dataclass(frozen=True)
class IndexSource:
    """Where the index comes from: a file (given, or the wheel's), or a project's entries
    (compiled through the cache)."""

    index_file: Path | None = None
    settings: ProjectSettings | None = None


def find_index_source(
    index_file: Path | None = None,
    entries_dir: Path | None = None,
    root: str | Path | None = None,
) -> IndexSource:
    """The index ``--index``, ``--entries`` and ``--root`` name; without them the project
    found here, else the wheel's. A missing file or folder is an error now, before
    anything runs."""
    if index_file is not None:
        return IndexSource(index_file=index_file)
    if entries_dir is not None:
        entries = entries_dir.resolve()
        settings = dataclasses.replace(read_settings(entries.parent), entries_dir=entries)
    else:
        found = find_project(root)
        if found is None:
            packaged = packaged_file(INDEX_FILE)
            if packaged is None:
                raise IndexUnavailable(
                    "no signature index: no project here (--root DIR names one) and this "
                    "installation ships none; pass --entries DIR or --index signatures.json"
                )
            return IndexSource(index_file=packaged)
        settings = found
    if not settings.entries_dir.is_dir():
        raise IndexUnavailable(f"{settings.entries_dir}: entries folder does not exist")
    return IndexSource(settings=settings)


# The project's compiled index, once per process (``explain`` reads it twice).
_compiled: dict[ProjectSettings, CachedIndex] = {}


def compiled(settings: ProjectSettings) -> CachedIndex:
    """The project's index from the cache, compiled there first where its entries
    changed; its warning about entries left out printed once per process."""
    found = _compiled.get(settings)
    if found is not None:
        return found
    from failpedia.project import index_cache

    key = index_cache.project_key(settings)
    found = index_cache.read_cached(key)
    if found is None:
        from failpedia.project.index_compile import compile_to_cache

        found = compile_to_cache(settings, key)
    if found.warning:
        print(f"warning: {found.warning}", file=sys.stderr)
    _compiled[settings] = found
    return found


def was_left_out(source: IndexSource, entry_id: str) -> bool:
    """Whether the project's compiled index left out an entry with this id for its
    problems."""
    return source.settings is not None and entry_id in compiled(source.settings).left_out


def _read_index_file(index_file: Path) -> IndexFile:
    try:
        return IndexFile(str(index_file), index_file.read_bytes())
    except OSError as error:
        raise IndexUnavailable(
            f"{index_file}: cannot read the signature index: {error.strerror or error}"
        ) from None


def _data_file(source: IndexSource, name: str) -> Path | None:
    """``name`` (``entries.json``, ``nearest.json``) beside the index: the file given,
    the wheel's, or the compiled one in the cache."""
    if source.settings is not None:
        return compiled(source.settings).file(name)
    if source.index_file is None:
        return None
    beside = source.index_file.parent / name
    return beside if beside.is_file() else None


def index_opener(source: IndexSource) -> Callable[[], IndexFile]:
    """What opens the source's index: reading a file given now (a missing one is an error
    before anything runs); a project's, looked up in the cache or compiled when called
    (``failpedia run`` does that beside the command rather than before it)."""
    if source.index_file is not None:
        found = _read_index_file(source.index_file)
        return lambda: found
    settings = source.settings
    assert settings is not None  # a source is a file or a project
    return lambda: compiled(settings).index


def open_index(source: IndexSource) -> IndexFile:
    """The source's index, read but not parsed (``diagnose`` parses it while it scans)."""
    return index_opener(source)()


def load_index(source: IndexSource) -> SignatureIndex:
    """The source's index, parsed."""
    return open_index(source).load()


def load_nearest(source: IndexSource) -> dict[str, Any] | None:
    """``nearest.json`` beside the index; None where there is none (an index file copied
    alone): the nearest entries are then not listed."""
    path = _data_file(source, NEAREST_FILE)
    if path is None:
        return None
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data


def with_nearest(diagnosis: Diagnosis, source: IndexSource) -> Diagnosis:
    """The diagnosis with the entries nearest in wording to its error-like lines, where no
    entry matched (what ``diagnose`` and ``run`` list then, apart from findings)."""
    if diagnosis.findings or not diagnosis.error_lines:
        return diagnosis
    from failpedia.diagnose.nearest import nearest_entries

    try:
        index = load_index(source)
    except IndexUnavailable:
        return diagnosis
    scored = [(item.score, item.text) for item in diagnosis.error_lines]
    found = nearest_entries(scored, load_nearest(source), index)
    return diagnosis._replace(nearest=tuple(found))


def load_entry_texts(source: IndexSource) -> dict[str, dict[str, Any]]:
    """Every entry's fields by id (``entries.json``: beside the index file given, the
    wheel's, or compiled from the project)."""
    path = _data_file(source, ENTRIES_FILE)
    if path is None and source.index_file is not None:
        path = packaged_file(ENTRIES_FILE)
    if path is None:
        raise IndexUnavailable(
            f"{source.index_file}: no {ENTRIES_FILE} beside it, and this installation ships none"
        )
    try:
        texts: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["entries"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise IndexUnavailable(f"{path}: cannot read the entry texts: {error}") from None
    return texts
