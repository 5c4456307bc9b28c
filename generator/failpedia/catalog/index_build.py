"""Compile the checked catalog into the signature index and the entry texts.

The one signature compiler: the site publishes its output as ``signatures.json``, the
wheel ships it with ``entries.json`` (what ``failpedia explain`` prints) and
``nearest.json`` (the entries nearest in wording, when no signature matches), and the CLI
builds the same from a checkout's ``entries/``.
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
from failpedia.signatures.issue_forms import published_issue_forms
from failpedia.signatures.line_rules import published_rules
from failpedia.signatures.nearest_rules import (
    FIELDS,
    NEAREST_FILE,
    NEAREST_FORMAT,
    published_nearest_rules,
    register_stemmer,
    term_weights,
    terms_of,
)


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
        "issue_forms": published_issue_forms(),
        "entries": entries,
        # Old ids of renamed and merged entries: old links and `explain OLD_ID` still work.
        "retired": {
            old_id: {"into": item.new_id, "reason": item.reason, "date": item.date}
            for old_id, item in sorted(catalog.retired.items())
        },
    }


def build_nearest(catalog: Catalog) -> dict[str, Any]:
    """``nearest.json``: the weights of lunr's index of every entry's title, wording
    (signatures, real sightings, aliases), quick answer and mechanism, term by term, with
    the rules that turn a log's lines into a query (``signatures.nearest_rules``)."""
    # Only when the file is written, never on diagnose's start-up.
    from lunr import lunr
    from lunr.builder import Builder
    from lunr.stop_word_filter import stop_word_filter
    from lunr.trimmer import trimmer

    # lunr's default pipelines, with the stemmer the page's lunr.js stems alike with.
    stemmer = register_stemmer()
    builder = Builder()
    builder.pipeline.add(trimmer, stop_word_filter, stemmer)
    builder.search_pipeline.add(stemmer)

    documents = [
        {
            "id": str(position),
            "title": " ".join(terms_of([item.entry.title])),
            "messages": " ".join(
                terms_of(
                    [
                        *(signature.text for signature in item.entry.signatures),
                        *(
                            sighting.line
                            for signature in item.entry.signatures
                            for sighting in signature.seen_in
                        ),
                        *(alias.text for alias in item.entry.aliases),
                    ]
                )
            ),
            "summary": " ".join(terms_of([item.entry.summary])),
            "mechanism": " ".join(terms_of([item.entry.mechanism])),
        }
        for position, item in enumerate(catalog.entries)
    ]
    index = lunr(
        ref="id",
        fields=[{"field_name": name, "boost": boost} for name, boost in FIELDS],
        documents=documents,
        builder=builder,
    )
    return {
        "format": NEAREST_FORMAT,
        "rules": published_nearest_rules(),
        "ids": [item.entry.id for item in catalog.entries],
        "terms": term_weights(index.serialize()),
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
        (NEAREST_FILE, build_nearest(catalog)),
    ):
        path = out_dir / name
        path.write_text(dump_json(data), encoding="utf-8")
        written.append(path)
    return written
