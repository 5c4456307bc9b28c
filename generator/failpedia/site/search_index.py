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
# Each page's messages ({"format": 1, "pages": {location: tags}}), a few dozen KB: the
# search box lists the entries whose message is close to a pasted line (an alias, a line
# no pattern matches) from it at once, without waiting for the full-text index.
MESSAGES = Path("search") / "messages.json"
MESSAGES_FORMAT = 1


def drop_section_tags(site_dir: Path) -> int:
    """Remove ``tags`` from every section document of the index in ``site_dir``, and
    publish each page's tags in ``MESSAGES``; the bytes saved in the index (0 where the
    site has no index)."""
    path = site_dir / SEARCH_INDEX
    if not path.is_file():
        return 0
    before = path.read_bytes()
    data = json.loads(before)
    pages: dict[str, list[str]] = {}
    for doc in data.get("docs", []):
        location = str(doc.get("location", ""))
        if "#" in location:
            doc.pop("tags", None)
        elif doc.get("tags"):
            pages.setdefault(location, doc["tags"])
    # Written as the plugin writes it: compact, non-ASCII as \u escapes.
    after = json.dumps(data, separators=(",", ":")).encode()
    path.write_bytes(after)
    messages = {"format": MESSAGES_FORMAT, "pages": pages}
    (site_dir / MESSAGES).write_text(json.dumps(messages, separators=(",", ":")), "utf-8")
    return len(before) - len(after)
