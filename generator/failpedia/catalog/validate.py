"""Turn entry files into a checked Catalog, collecting every problem in one pass.

Each file is read with ``read_bounded`` (a regular file inside the entries folder, of a
bounded size) and converted against the model (``convert``), then checked where it lives
and against the catalog as a whole: ids against folders and against the names the site
already uses (``site_names``), categories against the registry, related links, signature
patterns against the portable dialect, their own text and the matching engine, and
signatures claimed by two entries. ``failpedia validate``, ``mkdocs build`` and every
other command run these same checks.
"""

from __future__ import annotations

import difflib
import gc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from failpedia.catalog.bounded_read import RefusedFile, read_bounded
from failpedia.catalog.catalog import Catalog, CatalogEntry
from failpedia.catalog.convert import convert_document
from failpedia.catalog.entry_files import (
    CATEGORIES_FILENAME,
    MAX_FILE_BYTES,
    SourceFile,
    find_entry_files,
    find_misplaced_entry_files,
    read_yaml_file,
)
from failpedia.catalog.model import (
    INVERSE_RELATION,
    SCHEMA_MODELINE,
    Category,
    CategoryRegistry,
    Entry,
)
from failpedia.catalog.problems import ProblemList, display_path
from failpedia.catalog.reproducer_rules import review_script
from failpedia.catalog.signature_rules import (
    check_pattern_reach,
    check_signature_texts,
    read_healthy_logs,
)
from failpedia.catalog.site_names import reserved_names
from failpedia.catalog.yaml_source import FieldPath, format_field_path
from failpedia.signatures.dialect import PatternError, compile_pattern
from failpedia.signatures.hyperscan_form import engine_refusals
from failpedia.signatures.line_rules import LINE_CAP


def _reserved(value: str, reserved: dict[str, str]) -> str | None:
    if value not in reserved:
        return None
    return f"{value!r} is reserved: the site already uses that name for {reserved[value]}"


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
        field = f"categories[{index}].id"
        if category.id in seen:
            problems.add(source.display, line, field, f"duplicate id {category.id!r}")
        taken = _reserved(category.id, reserved or {})
        if taken is not None:
            problems.add(source.display, line, field, taken)
        seen.add(category.id)
    categories: list[Category] = registry.categories
    return categories


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
    # Thousands of parsed documents stay alive until the catalog is built; the cyclic
    # garbage collector would otherwise rescan them again and again while they pile up.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load_catalog(
            entries_dir.resolve(),
            root.resolve() if root else None,
            reserved_names(docs_dir),
            healthy_logs_dir,
        )
    finally:
        if gc_was_enabled:
            gc.enable()


def _load_catalog(
    entries_dir: Path, root: Path | None, reserved: dict[str, str], healthy_logs_dir: Path | None
) -> tuple[Catalog, ProblemList]:
    problems = ProblemList()
    if not entries_dir.is_dir():
        problems.add(display_path(entries_dir, root), 0, "", "entries folder does not exist")
        return Catalog([], []), problems
    categories = load_categories(entries_dir, root, problems, reserved)
    category_ids = {category.id for category in categories}
    entry_reserved = reserved | {
        category.id: f"the category {category.id!r}" for category in categories
    }
    for path in find_misplaced_entry_files(entries_dir):
        problems.add(
            display_path(path, root),
            0,
            "",
            "entry files belong at entries/<category>/<id>/entry.yaml",
        )

    checks = _EntryChecks(entries_dir, category_ids, entry_reserved)
    loaded: list[tuple[CatalogEntry, SourceFile]] = []
    converted: list[tuple[CatalogEntry, SourceFile]] = []  # loaded, or with problems
    known_ids: dict[str, str] = {}
    for path in find_entry_files(entries_dir):
        source = read_yaml_file(path, root, problems, within=entries_dir)
        folder_id = path.parent.name
        duplicate_of = known_ids.get(folder_id)
        if duplicate_of is not None:
            line = source.document.line_of(("id",)) if source else 0
            problems.add(
                display_path(path, root),
                line,
                "id",
                f"duplicate id {folder_id!r}: also used by {duplicate_of}",
            )
        else:
            known_ids[folder_id] = display_path(path, root)
        if source is None:
            continue
        entry = convert_document(source, Entry, problems)
        if entry is None:
            continue
        item = CatalogEntry(entry, path, source.display)
        converted.append((item, source))
        if _check_entry(item, source, checks, problems) and duplicate_of is None:
            loaded.append((item, source))

    _check_links(loaded, known_ids, problems)
    _check_shared_signatures(loaded, problems)
    check_pattern_reach(converted, read_healthy_logs(healthy_logs_dir, root, problems), problems)
    _check_engine(loaded, problems)
    failed = {problem.path for problem in problems}
    catalog = Catalog(categories, [item for item, _ in loaded if item.display_path not in failed])
    return catalog, problems


@dataclass(frozen=True)
class _EntryChecks:
    """What checking one entry needs to know about the others and the site."""

    entries_dir: Path
    category_ids: set[str]
    reserved: dict[str, str]  # names ids must not take, and what uses them


def _check_entry(
    item: CatalogEntry, source: SourceFile, checks: _EntryChecks, problems: ProblemList
) -> bool:
    """Checks that need the file's location or compile its patterns; True if all pass."""
    category_ids = checks.category_ids
    before = len(problems)
    entry = item.entry
    line = source.document.line_of

    def problem(path: FieldPath, message: str) -> None:
        problems.add(source.display, line(path), format_field_path(path), message)

    if not source.text.startswith(SCHEMA_MODELINE):
        problems.add(
            source.display,
            1,
            "",
            f"the first line must be `{SCHEMA_MODELINE}`, so that editors check the file",
        )
    if entry.id != item.folder.name:
        problem(("id",), f"{entry.id!r} must equal the folder name {item.folder.name!r}")
    taken = _reserved(entry.id, checks.reserved)
    if taken is not None:
        problem(("id",), taken)
    if entry.category != item.folder.parent.name:
        problem(
            ("category",),
            f"{entry.category!r} must equal the category folder {item.folder.parent.name!r}",
        )
    if category_ids and entry.category not in category_ids:
        known = ", ".join(sorted(category_ids))
        problem(("category",), f"unknown category {entry.category!r}; known: {known}")
    script = entry.reproducer.script
    try:
        code = read_bounded(item.folder / script, within=checks.entries_dir, limit=MAX_FILE_BYTES)
    except RefusedFile as refused:
        if refused.missing:
            problem(("reproducer", "script"), f"{script} not found in the entry folder")
        else:
            problem(("reproducer", "script"), f"{script}: {refused.message}")
    else:
        _check_script(item, code, problem)
    for index, signature in enumerate(entry.signatures):
        path: FieldPath = ("signatures", index, "pattern")
        try:
            compiled = compile_pattern(signature.pattern)
        except PatternError as error:
            problem(path, str(error))
            continue
        # Matched as a log line is: on its first LINE_CAP characters.
        text_lines = signature.text.splitlines()
        if not any(compiled.search(text_line[:LINE_CAP]) for text_line in text_lines):
            capped = any(len(text_line) > LINE_CAP for text_line in text_lines)
            problem(
                path,
                "does not match any line of its own signature text"
                + (
                    f" (within the first {LINE_CAP} characters of a line, as logs are matched)"
                    if capped
                    else ""
                ),
            )
        item.patterns.append(compiled)
    for index, related in enumerate(entry.related):
        if related.id == entry.id:
            problem(("related", index, "id"), "an entry cannot be related to itself")
    check_signature_texts(item, source, problems)
    return len(problems) == before


def _check_script(
    item: CatalogEntry, code: bytes, problem: Callable[[FieldPath, str], None]
) -> None:
    """The reproducer against the proof contract (``reproducer_rules``); keeps its regions."""
    entry = item.entry
    script = entry.reproducer.script
    try:
        text = code.decode("utf-8")
    except UnicodeDecodeError as error:
        problem(("reproducer", "script"), f"{script}: not UTF-8 ({error.reason})")
        return
    siblings = frozenset(path.stem for path in item.folder.glob("*.py"))
    review = review_script(text, entry.reproducer.requirements, siblings)
    item.fix_code, item.check_code = review.fix_code, review.check_code
    for found in review.problems:
        where = f"{script}:{found.line}" if found.line else script
        problem(("reproducer", "script"), f"{where}: {found.message}")
    first_code = entry.fix[0].code if entry.fix else None
    if item.fix_code and first_code and first_code.strip() != item.fix_code.strip():
        problem(
            ("fix", 0, "code"),
            f"differs from the fix region of {script}; the page shows the region (the code "
            "that was proved), so make them equal or leave it out",
        )


def _check_links(
    loaded: list[tuple[CatalogEntry, SourceFile]], known_ids: dict[str, str], problems: ProblemList
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
