"""The site search's full-text index (``search/search_index.json``, written by the theme's
search plugin), made smaller after the plugin writes it.

The plugin copies a page's front-matter ``tags`` (on entry pages: the entry's signature
lines and aliases, ``render.search_terms``) into the document of every section of the
page, about twenty per entry page: a third of the index was those copies. They are kept
on the page's own document only (its location has no ``#``), which is the one that
carries the page's messages into the ranking and that the browser reads them from
(``docs/assets/search-paste.js``, ``messagesByPage``).
"""

from __future__ import annotations

import json
from pathlib import Path

SEARCH_INDEX = Path("search") / "search_index.json"


def drop_section_tags(site_dir: Path) -> int:
    """Remove ``tags`` from every section document of the index in ``site_dir``; the
    bytes saved (0 where the site has no index)."""
    path = site_dir / SEARCH_INDEX
    if not path.is_file():
        return 0
    before = path.read_bytes()
    data = json.loads(before)
    for doc in data.get("docs", []):
        if "#" in str(doc.get("location", "")):
            doc.pop("tags", None)
    # Written as the plugin writes it: compact, non-ASCII as \u escapes.
    after = json.dumps(data, separators=(",", ":")).encode()
    path.write_bytes(after)
    return len(before) - len(after)
