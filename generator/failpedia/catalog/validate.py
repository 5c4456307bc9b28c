"""Turn entry files into a checked Catalog, collecting every problem in one pass.

An entry file whose folders' names are not ids is refused unread: they would name its
page. Each other file is read with ``read_bounded`` (a regular file inside the entries
folder, of a bounded size), converted against the model (``convert``) and checked where it
lives (``entry_check``, its result reused while nothing it read changed: ``entry_cache``),
then against the catalog as a whole: ids against folders and against the names the site
already uses (``site_names``), categories against the registry, related links, signature
patterns against the portable dialect, their own text and the matching engine, signatures
claimed by two entries, the share of entries documented only from reports, and the
registry of retired ids (``retired``: no entry takes one, each points at an entry).
``failpedia validate``, ``mkdocs build`` and every other command run these same checks;
``check_catalog`` also says which entry files were left out (the drafts ``mkdocs serve``
previews).
"""

from __future__ import annotations

import difflib
import gc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from failpedia.catalog.catalog import Catalog, CatalogEntry
from failpedia.catalog.convert import convert_document
from failpedia.catalog.entry_cache import checked_entry_file
from failpedia.catalog.entry_check import CheckedFile, EntryChecks, reserved_problem
from failpedia.catalog.entry_files import (
    CATEGORIES_FILENAME,
    MAX_DEPTH,
    SourceFile,
    find_entry_files,
    find_misplaced_entry_files,
    folder_name_problem,
    read_yaml_file,
)
from failpedia.catalog.evidence_rules import evidence_share_problem
from failpedia.catalog.model import INVERSE_RELATION, Category, CategoryRegistry
from failpedia.catalog.problems import ProblemList, display_path
from failpedia.catalog.retired import (
    LoadedRegistry,
    check_retired,
    load_retired,
    retired_link_hint,
    reused_problem,
)
from failpedia.catalog.signature_rules import check_pattern_reach, read_healthy_logs
from failpedia.catalog.site_names import reserved_names
from failpedia.catalog.yaml_source import FieldPath, format_field_path
from failpedia.signatures.hyperscan_form import engine_refusals

# Checks one entry file: (its check, whether an earlier result was reused).
CheckFile = Callable[[Path, Path | None, EntryChecks], tuple[CheckedFile, bool]]


def load_categories(
    entries_dir: Path,
    root: Path | None,
    problems: ProblemList,
    reserved: dict[str, str] | None = None,
) -> list[Category]:
    path = entries_dir / CATEGORIES_FILENAME
    if not path.exists() and not path.is_symlink():
        problems.add(display_path(path, root), 0, "", "category registry is missing")
        return []
    source = read_yaml_file(path, root, problems, within=entries_dir)
    if source is None:
        return []
    registry = convert_document(source, CategoryRegistry, problems)
    if registry is None:
        return []
    seen: set[str] = set()
    for index, category in enumerate(registry.categories):
        line = source.document.line_of(("categories", index, "id"))
        where = f"categories[{index}].id"
        if category.id in seen:
            problems.add(source.display, line, where, f"duplicate id {category.id!r}")
        taken = reserved_problem(category.id, reserved or {})
        if taken is not None:
            problems.add(source.display, line, where, taken)
        seen.add(category.id)
    categories: list[Category] = registry.categories
    return categories


@dataclass(frozen=True)
class Draft:
    """An entry file with problems: left out of the catalog, and previewed by ``mkdocs
    serve`` at the page its folder gives it. ``item`` is the converted entry when only a
    later check failed, so the preview can show the rest of its page."""

    path: Path
    display_path: str
    item: CatalogEntry | None

    @property
    def folder_id(self) -> str:
        return self.path.parent.name

    @property
    def page_path(self) -> str:
        """Its page's path: where its folder puts it, as for a valid entry."""
        return f"{self.path.parent.parent.name}/{self.folder_id}.md"


@dataclass(frozen=True)
class CatalogCheck:
    """The catalog of valid entries, every problem, and what was left out."""

    catalog: Catalog
    problems: ProblemList
    drafts: list[Draft] = field(default_factory=list)
    # Entry files outside <category>/<id>/, or in folders whose names are not ids.
    misplaced: list[str] = field(default_factory=list)
    checked: int = 0  # entry files read and checked anew
    reused: int = 0  # entry files whose earlier check was reused: nothing it read changed

    @property
    def left_out(self) -> int:
        """How many entry files the catalog leaves out for their problems."""
        return len(self.drafts) + len(self.misplaced)


def load_catalog(
    entries_dir: Path,
    root: Path | None = None,
    docs_dir: Path | None = None,
    healthy_logs_dir: Path | None = None,
) -> tuple[Catalog, ProblemList]:
    """Load and check every entry; the catalog holds only entries without problems.

    ``docs_dir`` holds the site's hand-written pages, whose names ids must not take;
    ``healthy_logs_dir`` the logs of healthy runs, whose lines no pattern may match.
    """
    check = check_catalog(entries_dir, root, docs_dir, healthy_logs_dir)
    return check.catalog, check.problems


def check_catalog(
    entries_dir: Path,
    root: Path | None = None,
    docs_dir: Path | None = None,
    healthy_logs_dir: Path | None = None,
    quick: bool = False,
    checked_file: CheckFile = checked_entry_file,
) -> CatalogCheck:
    """Load and check every entry, and say which entry files were left out.

    ``quick`` leaves out the checks that cannot make a wrong index (each reproducer
    against the proof contract; each pattern against generic lines, healthy logs and the
    other entries' texts, which grows with the square of the catalog): what the commands
    that only read the index need.
    ``checked_file`` checks one entry file (and may reuse an earlier result)."""
    # Thousands of parsed documents stay alive until the catalog is built; the cyclic
    # garbage collector would otherwise rescan them again and again while they pile up.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _check_catalog(
            entries_dir.resolve(),
            root.resolve() if root else None,
            reserved_names(docs_dir),
            healthy_logs_dir,
            not quick,
            checked_file,
        )
    finally:
        if gc_was_enabled:
            gc.enable()


def _check_catalog(
    entries_dir: Path,
    root: Path | None,
    reserved: dict[str, str],
    healthy_logs_dir: Path | None,
    full: bool,
    checked_file: CheckFile,
) -> CatalogCheck:
    problems = ProblemList()
    if not entries_dir.is_dir():
        problems.add(display_path(entries_dir, root), 0, "", "entries folder does not exist")
        return CatalogCheck(Catalog([], []), problems)
    categories = load_categories(entries_dir, root, problems, reserved)
    entry_reserved = reserved | {
        category.id: f"the category {category.id!r}" for category in categories
    }
    registry = load_retired(entries_dir, root, problems)
    checks = EntryChecks(
        entries_dir,
        frozenset(category.id for category in categories),
        tuple(sorted(entry_reserved.items())),
        full,
    )
    stray, too_deep = find_misplaced_entry_files(entries_dir)
    misplaced = [display_path(path, root) for path in stray]
    for display in misplaced:
        problems.add(display, 0, "", "entry files belong at entries/<category>/<id>/entry.yaml")
    for path in too_deep:
        problems.add(
            display_path(path, root),
            0,
            "",
            f"folders nested deeper than {MAX_DEPTH} levels below entries/ are not read; "
            "entries belong at entries/<category>/<id>/entry.yaml",
        )
    entry_paths = []
    for path in find_entry_files(entries_dir):
        misnamed = folder_name_problem(path)
        if misnamed is None:
            entry_paths.append(path)
        else:  # refused before its folder's name is used for anything
            misplaced.append(display_path(path, root))
            problems.add(misplaced[-1], 0, "", misnamed)

    files: list[tuple[Path, str, CheckedFile]] = []
    loaded: list[tuple[CatalogEntry, SourceFile]] = []
    converted: list[tuple[CatalogEntry, SourceFile]] = []  # loaded, or with problems
    known_ids: dict[str, str] = {}
    entry_categories: dict[str, str] = {}  # every entry file's id -> its folder's category
    reused = 0
    for path in entry_paths:
        checked, was_reused = checked_file(path, root, checks)
        reused += was_reused
        problems.extend(checked.problems)
        display = display_path(path, root)
        files.append((path, display, checked))
        folder_id = path.parent.name
        duplicate_of = known_ids.get(folder_id)
        if duplicate_of is not None:
            line = checked.source.document.line_of(("id",)) if checked.source else 0
            problems.add(
                display, line, "id", f"duplicate id {folder_id!r}: also used by {duplicate_of}"
            )
        else:
            known_ids[folder_id] = display
            entry_categories[folder_id] = path.parent.parent.name
        taken = reused_problem(folder_id, registry)
        if taken is not None:
            line = checked.source.document.line_of(("id",)) if checked.source else 0
            problems.add(display, line, "id", taken)
        if checked.item and checked.source:
            converted.append((checked.item, checked.source))
        if checked.passed and checked.item and checked.source and duplicate_of is None:
            loaded.append((checked.item, checked.source))

    category_ids = {category.id for category in categories}
    retirements = check_retired(registry, entry_categories, reserved, category_ids, problems)
    _check_links(loaded, known_ids, registry, problems)
    _check_shared_signatures(loaded, problems)
    if full:
        healthy = read_healthy_logs(healthy_logs_dir, root, problems)
        check_pattern_reach(converted, healthy, problems)
    _check_engine(loaded, problems)
    share = evidence_share_problem([item for item, _ in loaded])
    if share is not None:  # the catalog's, not one entry's: no entry is left out for it
        problems.add(display_path(entries_dir, root), 0, "", share)
    failed = {problem.path for problem in problems}
    catalog = Catalog(
        categories, [item for item, _ in loaded if item.display_path not in failed], retirements
    )
    drafts = [
        Draft(path, display, checked.item) for path, display, checked in files if display in failed
    ]
    return CatalogCheck(catalog, problems, drafts, misplaced, len(files) - reused, reused)


def _check_links(
    loaded: list[tuple[CatalogEntry, SourceFile]],
    known_ids: dict[str, str],
    registry: LoadedRegistry,
    problems: ProblemList,
) -> None:
    stated: dict[tuple[str, str], str] = {}
    for item, _ in loaded:
        for related in item.entry.related:
            stated[(item.entry.id, related.id)] = related.relation
    for item, source in loaded:
        for index, related in enumerate(item.entry.related):
            path: FieldPath = ("related", index, "id")
            where = (source.display, source.document.line_of(path), format_field_path(path))
            if related.id not in known_ids:
                hint = difflib.get_close_matches(related.id, list(known_ids), n=1)
                suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
                suggestion = retired_link_hint(related.id, registry) or suggestion
                problems.add(*where, f"no entry with id {related.id!r}{suggestion}")
                continue
            back = stated.get((related.id, item.entry.id))
            if back is None:
                continue
            if INVERSE_RELATION[related.relation] != back:
                problems.add(
                    *where,
                    f"says {related.relation!r} but {related.id} says {back!r} back; "
                    f"expected {INVERSE_RELATION[related.relation]!r}",
                )


def _check_shared_signatures(
    loaded: list[tuple[CatalogEntry, SourceFile]], problems: ProblemList
) -> None:
    """A signature belongs to one entry: the same text or pattern twice is ambiguous."""
    owners: dict[tuple[str, str], str] = {}
    for item, source in loaded:
        for index, signature in enumerate(item.entry.signatures):
            keys = [("text", signature.text.strip())]
            if index < len(item.patterns):
                keys.append(("pattern", item.patterns[index].canonical))
            for field_name, key in keys:
                owner = owners.setdefault((field_name, key), item.entry.id)
                if owner != item.entry.id:
                    path: FieldPath = ("signatures", index, field_name)
                    problems.add(
                        source.display,
                        source.document.line_of(path),
                        format_field_path(path),
                        f"the same signature {field_name} is already in entry {owner!r}",
                    )


def _check_engine(loaded: list[tuple[CatalogEntry, SourceFile]], problems: ProblemList) -> None:
    """Patterns that pass the dialect but that Hyperscan, the linear-time engine behind
    ``failpedia diagnose``, would refuse (too large a repeat, for one)."""
    located = [
        (item, source, number) for item, source in loaded for number in range(len(item.patterns))
    ]
    refused = engine_refusals([item.patterns[number].canonical for item, _, number in located])
    for position, reason in sorted((refused or {}).items()):
        item, source, number = located[position]
        path: FieldPath = ("signatures", number, "pattern")
        problems.add(
            source.display,
            source.document.line_of(path),
            format_field_path(path),
            f"the matching engine refuses this pattern: {reason}",
        )
