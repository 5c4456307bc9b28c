"""The validated catalog: entries, categories, and the links between them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from failpedia.catalog.model import INVERSE_RELATION, Category, Entry, Reproducer
from failpedia.catalog.retired import Retirement
from failpedia.signatures.dialect import CompiledPattern

RELATION_ORDER = ("caused-by", "causes", "confused-with", "see-also")
RELATION_TITLES = {
    "caused-by": "Caused by",
    "causes": "Causes",
    "confused-with": "Often confused with",
    "see-also": "See also",
}


@dataclass
class CatalogEntry:
    """An entry with where it came from and its compiled signature patterns."""

    entry: Entry
    path: Path
    display_path: str
    patterns: list[CompiledPattern] = field(default_factory=list)
    fix_code: str | None = None  # the marked fix region of the reproducer, what was proved
    check_code: str | None = None  # its check region: how the fixed result was checked
    # Digests of the entry file and its reproducer: what the entry's page depends on in
    # its own folder (set by the loader; part of the key of a rendered page).
    source_key: str = ""

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def reproducer(self) -> Reproducer:
        """The reproducer that proves the entry; callers select entries that have one
        (an entry documented from reports has ``evidence`` instead)."""
        if self.entry.reproducer is None:
            raise LookupError(f"{self.entry.id} is documented from reports: no reproducer")
        return self.entry.reproducer

    def signature_lines(self) -> list[str]:
        """For each signature, the line of its text that its pattern matches: the line that
        identifies the failure in a log (the validator guarantees there is one)."""
        lines = []
        for signature, pattern in zip(self.entry.signatures, self.patterns, strict=True):
            text_lines = [line.strip() for line in signature.text.splitlines() if line.strip()]
            lines.append(next((line for line in text_lines if pattern.search(line)), text_lines[0]))
        return lines

    @property
    def page_path(self) -> str:
        """Markdown path of the entry's page within the site."""
        return f"{self.entry.category}/{self.entry.id}.md"


@dataclass(frozen=True)
class Link:
    """One related entry as shown on a page, with the relation read from this side."""

    target: CatalogEntry
    relation: str
    note: str | None


class Catalog:
    """Entries indexed by id and category, with relations resolved in both directions."""

    def __init__(
        self,
        categories: list[Category],
        entries: list[CatalogEntry],
        retired: Iterable[Retirement] = (),
    ) -> None:
        self.categories = categories
        # Retired ids (renamed or merged entries), each with the entry that took its place.
        self.retired = {item.old_id: item for item in retired}
        self.entries = sorted(entries, key=lambda item: (item.entry.category, item.entry.id))
        self.by_id = {item.entry.id: item for item in self.entries}
        self.category_by_id = {category.id: category for category in categories}
        self._by_category: dict[str, list[CatalogEntry]] = defaultdict(list)
        for item in self.entries:
            self._by_category[item.entry.category].append(item)
        self._links = self._resolve_links()

    def in_category(self, category_id: str) -> list[CatalogEntry]:
        return self._by_category.get(category_id, [])

    def links(self, entry_id: str) -> dict[str, list[Link]]:
        """Related entries grouped by relation, stated links and back-links merged."""
        return self._links.get(entry_id, {})

    def links_of_outsider(self, item: CatalogEntry) -> dict[str, list[Link]]:
        """The links of an entry outside the catalog (a draft being previewed): its own
        links and the catalog's links to it, to entries of the catalog only."""
        found: dict[str, Link] = {}
        for related in item.entry.related:
            target = self.by_id.get(related.id)
            if target is not None:
                found[related.id] = Link(target, related.relation, related.note)
        for other in self.entries:
            for related in other.entry.related:
                if related.id == item.entry.id:
                    inverse = INVERSE_RELATION[related.relation]
                    found.setdefault(other.entry.id, Link(other, inverse, related.note))
        return _by_relation(found)

    def _resolve_links(self) -> dict[str, dict[str, list[Link]]]:
        found: dict[str, dict[str, Link]] = defaultdict(dict)
        for item in self.entries:
            for related in item.entry.related:
                target = self.by_id.get(related.id)
                if target is None:
                    continue
                found[item.entry.id][related.id] = Link(target, related.relation, related.note)
                inverse = INVERSE_RELATION[related.relation]
                found[related.id].setdefault(item.entry.id, Link(item, inverse, related.note))
        return {entry_id: _by_relation(links) for entry_id, links in found.items()}


def _by_relation(links: dict[str, Link]) -> dict[str, list[Link]]:
    """Links grouped by relation in page order, each group sorted by title."""
    grouped: dict[str, list[Link]] = {}
    for relation in RELATION_ORDER:
        chosen = [link for link in links.values() if link.relation == relation]
        if chosen:
            grouped[relation] = sorted(chosen, key=lambda link: link.target.entry.title)
    return grouped
