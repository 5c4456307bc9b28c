"""Names the site itself uses, which entry and category ids must not take.

Entry pages live at ``<category>/<id>/`` and category pages at ``<category>/``, beside
the site's own pages and files: ``index`` is every folder's page, ``coverage`` and the
hand-written pages in ``docs/`` sit at the top, the theme's files under ``assets``. An id
that takes one of these names makes two pages claim one address.
"""

from __future__ import annotations

from pathlib import Path

_SITE_NAMES = {
    "index": "the page of every folder",
    "coverage": "the coverage page",
    "assets": "the site's scripts, styles and images",
    "search": "the search index",
    "404": "the page shown for a missing address",
    "signatures": "the signature index, signatures.json",
    "nearest": "the index of entries by wording, nearest.json",
    "sitemap": "the sitemap",
}


def reserved_names(docs_dir: Path | None) -> dict[str, str]:
    """Each reserved name and what the site uses it for: its own pages and files, and the
    top-level names in ``docs_dir`` (hand-written pages, asset folders)."""
    names = dict(_SITE_NAMES)
    if docs_dir is not None and docs_dir.is_dir():
        for path in sorted(docs_dir.iterdir()):
            stem = path.name.split(".", 1)[0].lower()
            names.setdefault(stem, f"docs/{path.name}")
    return names
