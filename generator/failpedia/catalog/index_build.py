"""Compile the checked catalog into the signature index and the entry texts.

The one signature compiler: the site publishes its output as ``signatures.json``, the
wheel ships it with ``entries.json`` (what ``failpedia explain`` prints), and the CLI
builds the same index from a checkout's ``entries/``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from failpedia.catalog.catalog import Catalog
from failpedia.signatures.finding_order import published_finding_order
from failpedia.signatures.index_format import (
    ENTRIES_FILE,
    INDEX_FILE,
    INDEX_FORMAT,
    dump_json,
    entry_url,
)
from failpedia.signatures.line_rules import published_rules


def build_index(
    catalog: Catalog, site_url: str | None, repo_url: str | None = None
) -> dict[str, Any]:
    """The index as a JSON-ready dict; entries in catalog order."""
    entries = []
    for item in catalog.entries:
        links = catalog.links(item.entry.id)
        entries.append(
            {
                "id": item.entry.id,
                "title": item.entry.title,
                "category": item.entry.category,
                "kind": item.entry.kind,
                "role": item.entry.role,
                "summary": item.entry.summary,
                "url": entry_url(item.entry.category, item.entry.id),
                "causes": sorted(link.target.entry.id for link in links.get("causes", [])),
                "caused_by": sorted(link.target.entry.id for link in links.get("caused-by", [])),
                "patterns": [
                    {"source": pattern.canonical, "literals": list(pattern.literals)}
                    for pattern in item.patterns
                ],
            }
        )
    return {
        "format": INDEX_FORMAT,
        "site_url": site_url or "",
        "repo_url": repo_url or "",
        "rules": published_rules(),
        "order": published_finding_order(),
        "entries": entries,
    }


def build_entry_texts(catalog: Catalog) -> dict[str, Any]:
    """Every entry's fields, for ``failpedia explain`` away from the repository."""
    return {
        "format": INDEX_FORMAT,
        "entries": {
            item.entry.id: dataclasses.asdict(item.entry)
            | {"fix_code": item.fix_code, "check_code": item.check_code}
            for item in catalog.entries
        },
    }


def write_package_data(
    catalog: Catalog, site_url: str | None, out_dir: Path, repo_url: str | None = None
) -> list[Path]:
    """Write the index and the entry texts where the package looks for them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in (
        (INDEX_FILE, build_index(catalog, site_url, repo_url)),
        (ENTRIES_FILE, build_entry_texts(catalog)),
    ):
        path = out_dir / name
        path.write_text(dump_json(data), encoding="utf-8")
        written.append(path)
    return written
