"""The signature index: what a log matcher needs to know about every entry, in one file.

Compiled from the catalog once and read by everything that matches logs: the site
publishes it as ``signatures.json`` for the log page, the wheel ships it (with the entry
texts that ``failpedia explain`` prints) so ``failpedia diagnose`` works without the
repository, and the CLI compiles the same file from ``entries/`` inside a checkout.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from . import logline

if TYPE_CHECKING:  # the catalog (YAML, models) is only loaded to compile an index
    from .catalog import Catalog

INDEX_FORMAT = 1
INDEX_FILE = "signatures.json"
ENTRIES_FILE = "entries.json"
PACKAGE_DATA = "data"

# Where torchrun's ChildFailedError names the failure it saw first.
ROOT_CAUSE_MARKER = "Root Cause (first observed failure)"
# How error-like a line is, for showing the likeliest lines when nothing matched:
# (score, literal keywords that make a line a candidate, regex that scores it).
ERROR_LIKE: list[tuple[int, list[str], str]] = [
    (5, ["Error", "Exception"], r"\b[A-Za-z_.]*(?:Error|Exception)\b:"),
    (4, ["Fatal", "FATAL", "fatal", "Segmentation fault", "core dumped", "Killed", "Aborted"],
     r"\b(?:FATAL|Fatal|fatal|Segmentation fault|core dumped|Killed|Aborted)\b"),
    (3, ["error", "ERROR", "Error", "FAILED", "failed", "Failed"],
     r"\b(?:error|ERROR|Error|FAILED|failed|Failed)\b"),
    (2, ["Traceback"], r"Traceback \(most recent call last\)"),
]


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


class SignatureIndex(NamedTuple):
    site_url: str
    entries: tuple[IndexedEntry, ...]

    def url(self, entry: IndexedEntry) -> str:
        return self.site_url.rstrip("/") + "/" + entry.url if self.site_url else entry.url


def entry_url(category: str, entry_id: str) -> str:
    """The entry page's path below the site root (mkdocs' directory URLs)."""
    return f"{category}/{entry_id}/"


def build_index(catalog: Catalog, site_url: str | None) -> dict[str, Any]:
    """The index as a JSON-ready dict; entries in catalog order."""
    entries = []
    for item in catalog.entries:
        links = catalog.links(item.entry.id)
        entries.append({
            "id": item.entry.id,
            "title": item.entry.title,
            "category": item.entry.category,
            "kind": item.entry.kind,
            "role": item.entry.role,
            "url": entry_url(item.entry.category, item.entry.id),
            "causes": sorted(link.target.entry.id for link in links.get("causes", [])),
            "caused_by": sorted(link.target.entry.id for link in links.get("caused-by", [])),
            "patterns": [
                {"source": pattern.canonical, "literals": list(pattern.literals)}
                for pattern in item.patterns
            ],
        })
    return {
        "format": INDEX_FORMAT,
        "site_url": site_url or "",
        "rules": {
            "line_cap": logline.LINE_CAP,
            "max_prefixes": logline.MAX_PREFIXES,
            "ansi": logline.ANSI,
            "prefixes": [list(rule) for rule in logline.PREFIX_RULES],
            "root_cause_marker": ROOT_CAUSE_MARKER,
            "error_like": [[score, source] for score, _, source in ERROR_LIKE],
        },
        "entries": entries,
    }


def build_entry_texts(catalog: Catalog) -> dict[str, Any]:
    """Every entry's fields, for ``failpedia explain`` away from the repository."""
    import dataclasses  # the catalog's models; not needed to read an index

    return {
        "format": INDEX_FORMAT,
        "entries": {
            item.entry.id: dataclasses.asdict(item.entry) | {"fix_code": item.fix_code}
            for item in catalog.entries
        },
    }


def dump_json(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=False) + "\n"


def write_package_data(catalog: Catalog, site_url: str | None, out_dir: Path) -> list[Path]:
    """Write the index and the entry texts where the package looks for them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in ((INDEX_FILE, build_index(catalog, site_url)),
                       (ENTRIES_FILE, build_entry_texts(catalog))):
        path = out_dir / name
        path.write_text(dump_json(data), encoding="utf-8")
        written.append(path)
    return written


def parse_index(data: Any, origin: str) -> SignatureIndex:
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT:
        raise IndexUnavailable(f"{origin}: not a signature index of format {INDEX_FORMAT}")
    try:
        entries = tuple(
            IndexedEntry(
                id=item["id"], title=item["title"], category=item["category"],
                kind=item["kind"], role=item["role"], url=item["url"],
                causes=tuple(item["causes"]), caused_by=tuple(item["caused_by"]),
                patterns=tuple(
                    IndexedPattern(pattern["source"], tuple(pattern["literals"]))
                    for pattern in item["patterns"]
                ),
            )
            for item in data["entries"]
        )
    except (KeyError, TypeError) as error:
        raise IndexUnavailable(f"{origin}: malformed signature index ({error})") from None
    return SignatureIndex(site_url=data.get("site_url") or "", entries=entries)


def packaged_file(name: str) -> Path | None:
    """A data file installed with the package (wheel installs), or None."""
    # Beside this module, not through importlib.resources: the wheel installs it as plain
    # files, and importlib.resources costs diagnose's start-up 10 ms of imports.
    candidate = Path(__file__).resolve().parent / PACKAGE_DATA / name
    return candidate if candidate.is_file() else None


def source_tree_root() -> Path | None:
    """The repository this package runs from (editable installs), or None."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "entries" / "categories.yaml").is_file() else None


def compile_catalog(entries_dir: Path) -> tuple[Catalog, str | None]:
    """Load and check the catalog in ``entries_dir``; refuse it with every problem listed."""
    from .siteconfig import read_site_config  # only needed inside a checkout
    from .validator import load_catalog

    root = entries_dir.resolve().parent
    catalog, problems = load_catalog(entries_dir, root)
    if problems:
        raise IndexUnavailable(f"{len(problems)} problem(s) in entries:\n{problems.report()}")
    return catalog, read_site_config(root / "mkdocs.yml").site_url


class IndexFile(NamedTuple):
    """A signature index file, read but not yet parsed: its bytes name the signatures it
    holds (``digest``), so a matcher compiled from it can be found before parsing it."""

    origin: str
    data: bytes

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def load(self) -> SignatureIndex:
        try:
            data = json.loads(self.data)
        except ValueError as error:
            raise IndexUnavailable(
                f"{self.origin}: cannot read the signature index: {error}"
            ) from None
        return parse_index(data, self.origin)


def open_index(
    index_file: Path | None = None, entries_dir: Path | None = None
) -> IndexFile | SignatureIndex:
    """The index file to read (given, or shipped with the package), or else the index
    compiled from an entries folder or the checkout's."""
    if index_file is None and entries_dir is None:
        index_file = packaged_file(INDEX_FILE)
    if index_file is not None:
        try:
            return IndexFile(str(index_file), index_file.read_bytes())
        except OSError as error:
            raise IndexUnavailable(
                f"{index_file}: cannot read the signature index: {error.strerror or error}"
            ) from None
    if entries_dir is None:
        root = source_tree_root()
        if root is None:
            raise IndexUnavailable(
                "no signature index: this installation ships none; pass --entries DIR or "
                "--index signatures.json"
            )
        entries_dir = root / "entries"
    catalog, site_url = compile_catalog(entries_dir)
    return parse_index(build_index(catalog, site_url), str(entries_dir))


def load_index(index_file: Path | None = None, entries_dir: Path | None = None) -> SignatureIndex:
    """The index from a file, from an entries folder, from the package, or from the checkout."""
    index = open_index(index_file, entries_dir)
    return index.load() if isinstance(index, IndexFile) else index


def load_entry_texts(entries_dir: Path | None = None) -> dict[str, dict[str, Any]]:
    """Every entry's fields by id: packaged with the wheel, or read from the checkout."""
    if entries_dir is None:
        packaged = packaged_file(ENTRIES_FILE)
        if packaged is not None:
            return json.loads(packaged.read_text(encoding="utf-8"))["entries"]
        root = source_tree_root()
        if root is None:
            raise IndexUnavailable(
                "no entry texts: this installation ships none; pass --entries DIR"
            )
        entries_dir = root / "entries"
    catalog, _ = compile_catalog(entries_dir)
    return build_entry_texts(catalog)["entries"]
