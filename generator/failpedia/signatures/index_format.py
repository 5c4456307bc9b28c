"""The signature index format: what a log matcher needs to know about every entry.

``signatures.json`` is compiled from the catalog once (``catalog.index_build``) and read by
everything that matches logs: the site's log page, ``failpedia diagnose`` from the wheel
or from a checkout. This module reads and writes the format; it needs nothing else of
ours, so reading an index costs ``diagnose`` no YAML, no models and no templates.

Besides the entries, the index carries the rules a matcher follows, as data, so that the
log page's worker runs them instead of a copy of them: ``rules`` (how a line is read:
``signatures.line_rules``, with the redaction policy), ``order`` (the keys findings are
sorted by, and the ranks and wording of roles and kinds: ``signatures.finding_order``) and
``issue_forms`` (the form a link about an unknown failure fills: ``signatures.issue_forms``).
The Python matcher reads the same tables from those modules, whose values are what is
published; the worker reads the index built with the site it came with.

Format 1 only ever gains fields, never loses or renames one: an entry's ``summary`` (the
quick answer ``failpedia run`` prints), the index's ``repo_url`` (where issue forms
live) and ``retired`` (old ids of renamed and merged entries) came later, and a reader
takes their absence as empty; so did ``issue_forms``, ``order.keys`` and the third
element of each ``rules.prefixes`` rule (what each of its groups reads), which the worker
needs and finds in the index built beside it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, NamedTuple

INDEX_FORMAT = 1
INDEX_FILE = "signatures.json"
ENTRIES_FILE = "entries.json"


class IndexUnavailable(Exception):
    """No usable signature index; the message says what to do."""


# Named tuples, not dataclasses: ``failpedia diagnose`` builds thousands of these at start-up,
# and a dataclass costs more to define and to build (its module imports inspect, too).
class IndexedPattern(NamedTuple):
    canonical: str
    literals: tuple[str, ...]


class IndexedEntry(NamedTuple):
    id: str
    title: str
    category: str
    kind: str
    role: str
    url: str
    causes: tuple[str, ...]
    caused_by: tuple[str, ...]
    patterns: tuple[IndexedPattern, ...]
    summary: str = ""  # the quick answer (Markdown); absent from indexes built before it


# Why an id was retired (``entries/retired.yaml``), as pages and the CLI say it.
RETIRED_REASONS = {"renamed": "renamed to", "merged": "merged into"}


def retired_text(old_id: str, into: str, reason: str, date: str) -> str:
    """``old-id was renamed to new-id on 2026-12-07``: one wording for every output."""
    return f"{old_id} was {RETIRED_REASONS.get(reason, reason)} {into} on {date}"


class Successor(NamedTuple):
    """The entry that took the place of a retired id (a renamed or merged entry's)."""

    into: str
    reason: str  # ``renamed`` or ``merged``
    date: str


class SignatureIndex(NamedTuple):
    site_url: str
    entries: tuple[IndexedEntry, ...]
    repo_url: str = ""  # where issues about the catalog go; empty when the site names none
    # old id -> what took its place, sorted by old id; empty in indexes built before it
    retired: tuple[tuple[str, Successor], ...] = ()

    def url(self, entry: IndexedEntry) -> str:
        return self.site_url.rstrip("/") + "/" + entry.url if self.site_url else entry.url

    def successor(self, entry_id: str) -> Successor | None:
        """What took the place of a retired id, or None when the id is not retired."""
        return next((item for old_id, item in self.retired if old_id == entry_id), None)


def entry_url(category: str, entry_id: str) -> str:
    """The entry page's path below the site root (mkdocs' directory URLs)."""
    return f"{category}/{entry_id}/"


# Characters that could start markup, written as JSON escapes: the values read back the
# same, and the file holds nothing a browser or a page that embeds it reads as a tag.
_MARKUP_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def dump_json(data: dict[str, Any]) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    return text.translate(_MARKUP_ESCAPES) + "\n"


def parse_index(data: Any, origin: str) -> SignatureIndex:
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT:
        raise IndexUnavailable(f"{origin}: not a signature index of format {INDEX_FORMAT}")
    try:
        entries = tuple(
            IndexedEntry(
                id=item["id"],
                title=item["title"],
                category=item["category"],
                kind=item["kind"],
                role=item["role"],
                url=item["url"],
                causes=tuple(item["causes"]),
                caused_by=tuple(item["caused_by"]),
                patterns=tuple(
                    IndexedPattern(pattern["source"], tuple(pattern["literals"]))
                    for pattern in item["patterns"]
                ),
                summary=str(item.get("summary") or ""),
            )
            for item in data["entries"]
        )
        retired = tuple(
            (str(old_id), Successor(str(item["into"]), str(item["reason"]), str(item["date"])))
            for old_id, item in sorted((data.get("retired") or {}).items())
        )
    except (KeyError, TypeError, AttributeError) as error:
        raise IndexUnavailable(f"{origin}: malformed signature index ({error})") from None
    return SignatureIndex(
        site_url=data.get("site_url") or "",
        entries=entries,
        repo_url=data.get("repo_url") or "",
        retired=retired,
    )


class IndexFile(NamedTuple):
    """A signature index file, read but not yet parsed: its bytes name the signatures it
    holds (``digest``), so a matcher compiled from it can be found before parsing it."""

    origin: str
    data: bytes
    known_digest: str | None = None  # where the reader already hashed the bytes (the cache)

    @property
    def digest(self) -> str:
        return self.known_digest or hashlib.sha256(self.data).hexdigest()

    def load(self) -> SignatureIndex:
        try:
            data = json.loads(self.data)
        except ValueError as error:
            raise IndexUnavailable(
                f"{self.origin}: cannot read the signature index: {error}"
            ) from None
        return parse_index(data, self.origin)


class LazyIndex:
    """An index parsed the first time something needs it. ``diagnose`` scans with the
    engine compiled for the file's digest; a log with no candidate line (an empty one, a
    healthy one) never needs the entries, so at thousands of entries it does not pay to
    parse them."""

    __slots__ = ("_file", "_parsed", "digest")

    def __init__(self, index: SignatureIndex | IndexFile) -> None:
        self._file = index if isinstance(index, IndexFile) else None
        self._parsed = index if isinstance(index, SignatureIndex) else None
        self.digest = index.digest if isinstance(index, IndexFile) else None

    def get(self) -> SignatureIndex:
        if self._parsed is None:
            assert self._file is not None  # one of the two is always there
            self._parsed = self._file.load()
        return self._parsed
