"""Compile a checkout's index where the cache has none for its entries as they are: the
quick check of the catalog (each entry file's check reused from the cache while it holds),
then the one compiler's files (``catalog.index_build``), written to the cache.

Imported only on a cache miss: YAML, the model and the checks are not loaded otherwise.
"""

from __future__ import annotations

from pathlib import Path

from failpedia.catalog.catalog import Catalog
from failpedia.catalog.entry_check import CheckedFile, EntryChecks, check_entry_file, read_checked
from failpedia.catalog.index_build import build_entry_texts, build_index, build_nearest
from failpedia.catalog.validate import CatalogCheck, check_catalog
from failpedia.project import index_cache
from failpedia.settings import ProjectSettings
from failpedia.signatures.index_format import (
    ENTRIES_FILE,
    INDEX_FILE,
    IndexFile,
    IndexUnavailable,
    dump_json,
)
from failpedia.signatures.nearest_rules import NEAREST_FILE


def left_out_text(left_out: int, problems: int) -> str:
    """The one warning a command that uses the valid entries gives about the others."""
    if left_out == 1:
        return "1 entry with problems was left out; `failpedia validate` lists why"
    if left_out:
        return f"{left_out} entries with problems were left out; `failpedia validate` lists why"
    return f"{problems} problem(s) in the entries folder; `failpedia validate` lists them"


def cached_entry_check(
    path: Path, root: Path | None, checks: EntryChecks
) -> tuple[CheckedFile, bool]:
    """One entry file's check, from the cache where its inputs are unchanged."""
    outcome = read_checked(path, checks.entries_dir)
    if not isinstance(outcome, bytes):
        return check_entry_file(path, None, root, checks), False
    key = index_cache.entry_key(path, outcome, root, checks)
    cached = index_cache.load_entry(key)
    if isinstance(cached, CheckedFile):
        return cached, True
    checked = check_entry_file(path, outcome, root, checks)
    index_cache.store_entry(key, checked)
    return checked, False


def quick_check(settings: ProjectSettings) -> CatalogCheck:
    """The catalog checked as far as a correct index needs (``validate`` does the rest)."""
    return check_catalog(
        settings.entries_dir,
        settings.root,
        settings.docs_dir,
        None,
        quick=True,
        checked_file=cached_entry_check,
    )


def usable_catalog(check: CatalogCheck) -> tuple[Catalog, str | None]:
    """The valid entries and the warning about the others; refused, with every problem
    listed, where no valid entry is left."""
    problems = check.problems
    if problems and not check.catalog.entries:
        raise IndexUnavailable(f"{len(problems)} problem(s) in entries:\n{problems.report()}")
    warning = left_out_text(check.left_out, len(problems)) if problems else None
    return check.catalog, warning


def compile_to_cache(settings: ProjectSettings, key: str) -> index_cache.CachedIndex:
    """Check the catalog quickly, compile its index, entry texts and nearest-entry index,
    and keep them in the cache under ``key``."""
    check = quick_check(settings)
    catalog, warning = usable_catalog(check)
    files = {
        INDEX_FILE: build_index(catalog, settings.site_url, settings.repo_url),
        ENTRIES_FILE: build_entry_texts(catalog),
        NEAREST_FILE: build_nearest(catalog),
    }
    encoded = {name: dump_json(data).encode("utf-8") for name, data in files.items()}
    left_out = sorted({draft.folder_id for draft in check.drafts})
    written = index_cache.write_index(key, encoded, left_out, warning)
    if not (written.folder / index_cache.META_FILE).is_file():  # the cache cannot be written
        return _in_memory(written, encoded)
    return written


def _in_memory(
    written: index_cache.CachedIndex, encoded: dict[str, bytes]
) -> index_cache.CachedIndex:
    """Where the cache cannot be written: the files in a folder of this process's own."""
    import atexit
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="failpedia-index-"))
    atexit.register(shutil.rmtree, folder, True)
    for name, data in encoded.items():
        (folder / name).write_bytes(data)
    index = IndexFile(str(folder / INDEX_FILE), encoded[INDEX_FILE])
    return index_cache.CachedIndex(folder, index, written.left_out, written.warning)
