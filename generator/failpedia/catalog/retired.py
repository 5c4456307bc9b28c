"""Retired ids: the registry of entries renamed or merged, and the rules that keep old
addresses working.

An entry's id names its page (``<category>/<id>/``), and people keep those addresses in
bookmarks, issues and chat logs. When an entry is renamed, or merged into another, its old
id goes into ``entries/retired.yaml`` with the id that took its place; the site then serves
a page at the old address that sends the reader on, the signature index maps the old id
(``failpedia explain OLD_ID``), and no entry may take a retired id again, so an old link
never lands on a different failure.

The registry's model lives here with its checks; it is converted like an entry file
(``convert``) and published as JSON Schema beside ``entry.schema.json``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from failpedia.catalog.convert import convert_document
from failpedia.catalog.entry_files import read_yaml_file
from failpedia.catalog.model import ID_PATTERN, spec
from failpedia.catalog.problems import ProblemList, display_path
from failpedia.catalog.yaml_source import FieldPath, YamlDocument, format_field_path
from failpedia.signatures.index_format import RETIRED_REASONS, entry_url, retired_text

RETIRED_FILENAME = "retired.yaml"
RETIRED_SCHEMA_MODELINE = "# yaml-language-server: $schema=retired.schema.json"

Reason = Literal["renamed", "merged"]  # the keys of ``RETIRED_REASONS``


@dataclass(kw_only=True)
class RetiredId:
    """An id no entry has any more, and the entry that took its place."""

    id: str = spec("The id the entry had; no entry may take it again.", pattern=ID_PATTERN)
    category: str = spec(
        "The category the entry was in: its old page was at `<category>/<id>/`, where the "
        "site now serves a page that sends readers on.",
        pattern=ID_PATTERN,
    )
    into: str = spec(
        "The id of the entry that took its place (a live entry, never another retired id).",
        pattern=ID_PATTERN,
    )
    reason: Reason = spec(
        "`renamed` (the same failure under a new id) or `merged` (folded into another entry)."
    )
    date: str = spec(
        "The day it was retired, as `'YYYY-MM-DD'` (in quotes).",
        pattern=r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$",
    )


@dataclass(kw_only=True)
class RetiredRegistry:
    """The file `entries/retired.yaml`: every id entries no longer have."""

    retired: list[RetiredId] = spec(
        "Every retired id, oldest first; an id stays here for good.", default=[]
    )


@dataclass(frozen=True)
class Retirement:
    """A retired id as the site and the index use it: where its old page was and where
    the entry that took its place is."""

    old_id: str
    old_category: str
    new_id: str
    new_category: str
    reason: str
    date: str

    @property
    def old_page(self) -> str:
        """The old page's path below the site root (mkdocs' directory URLs)."""
        return entry_url(self.old_category, self.old_id)

    @property
    def new_page(self) -> str:
        return entry_url(self.new_category, self.new_id)

    @property
    def text(self) -> str:
        """``old-id was renamed to new-id on 2026-12-07``."""
        return retired_text(self.old_id, self.new_id, self.reason, self.date)


@dataclass(frozen=True)
class LoadedRegistry:
    """The registry as read, with the lines of its fields."""

    display: str
    items: tuple[RetiredId, ...] = ()
    document: YamlDocument | None = None

    def line_of(self, path: FieldPath) -> int:
        return self.document.line_of(path) if self.document else 0

    def find(self, entry_id: str) -> tuple[int, RetiredId] | None:
        """The retired id's place in the registry and what it says, if it is there."""
        return next(
            ((index, item) for index, item in enumerate(self.items) if item.id == entry_id), None
        )


def load_retired(entries_dir: Path, root: Path | None, problems: ProblemList) -> LoadedRegistry:
    """The registry of retired ids; empty where the project has none yet."""
    path = entries_dir / RETIRED_FILENAME
    display = display_path(path, root)
    if not path.exists() and not path.is_symlink():
        return LoadedRegistry(display)
    source = read_yaml_file(path, root, problems, within=entries_dir)
    if source is None:
        return LoadedRegistry(display)
    registry = convert_document(source, RetiredRegistry, problems)
    if registry is None:
        return LoadedRegistry(display)
    return LoadedRegistry(display, tuple(registry.retired), source.document)


def check_retired(
    registry: LoadedRegistry,
    entry_categories: dict[str, str],
    site_names: dict[str, str],
    category_ids: set[str],
    problems: ProblemList,
) -> list[Retirement]:
    """Check the registry against the entries (``entry_categories``: every entry file's
    id and the category its folder is in), the names the site uses for its own pages and
    files, and the category ids (which entry ids cannot take either); return the
    retirements that passed, each pointing at an existing entry.

    Refused: an id retired twice, an id no entry could have had (a reserved name), a
    target that is no entry (with the nearest id), and a target that is itself retired (a
    chain, or a cycle): an old address must reach its entry in one step. A live entry that
    takes a retired id is the entry's problem (``reused_problem``), reported on its file.
    """
    retired_ids = {item.id for item in registry.items}
    seen: dict[str, int] = {}
    found: list[Retirement] = []
    for index, item in enumerate(registry.items):
        line = registry.line_of(("retired", index, "id"))

        def problem(field: str, message: str, index: int = index) -> None:
            path: FieldPath = ("retired", index, field)
            problems.add(registry.display, registry.line_of(path), format_field_path(path), message)

        failed = False
        if item.id in seen:
            problem("id", f"{item.id!r} is retired twice; also on line {seen[item.id]}")
            failed = True
        seen.setdefault(item.id, line)
        if item.id in site_names or item.id in category_ids:
            use = site_names.get(item.id) or f"the category {item.id!r}"
            problem("id", f"{item.id!r} is reserved: the site uses that name for {use}")
            failed = True
        if item.category in site_names:
            problem(
                "category",
                f"{item.category!r} is no category: the site uses that name for "
                f"{site_names[item.category]}",
            )
            failed = True
        if item.into in retired_ids:
            problem("into", _chain_message(registry, item))
            failed = True
        elif item.into not in entry_categories:
            hint = difflib.get_close_matches(item.into, list(entry_categories), n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            problem("into", f"no entry with id {item.into!r}{suggestion}")
            failed = True
        if not failed and item.id not in entry_categories:
            found.append(
                Retirement(
                    item.id,
                    item.category,
                    item.into,
                    entry_categories[item.into],
                    item.reason,
                    item.date,
                )
            )
    return found


def _chain_message(registry: LoadedRegistry, item: RetiredId) -> str:
    """Why a target that is itself retired is refused, and what to point at instead."""
    steps = [item.id]
    current: RetiredId | None = item
    while current is not None and current.into not in steps:
        steps.append(current.into)
        found = registry.find(current.into)
        current = found[1] if found else None
    if current is not None:  # came back to an id already on the way: a cycle
        cycle = " -> ".join([*steps, current.into])
        return f"{item.into!r} is itself retired, and the ids go round in a cycle ({cycle})"
    final = steps[-1]
    return (
        f"{item.into!r} is itself retired ({' -> '.join(steps)}); point at {final!r}, the "
        "entry at the end, so the old address reaches it in one step"
    )


def reused_problem(entry_id: str, registry: LoadedRegistry) -> str | None:
    """The problem with an entry that takes a retired id, if it does: old links to that
    id would land on a different failure."""
    found = registry.find(entry_id)
    if found is None:
        return None
    index, item = found
    line = registry.line_of(("retired", index, "id"))
    return (
        f"{entry_id!r} is a retired id ({RETIRED_REASONS[item.reason]} {item.into!r} on "
        f"{item.date}, {registry.display}:{line}); old links lead there, so choose "
        "another id"
    )


def retired_link_hint(entry_id: str, registry: LoadedRegistry) -> str | None:
    """What a link to a retired id should name instead, if the id is retired."""
    found = registry.find(entry_id)
    if found is None:
        return None
    item = found[1]
    return f" (it was {RETIRED_REASONS[item.reason]} {item.into!r} on {item.date}; link to that)"
