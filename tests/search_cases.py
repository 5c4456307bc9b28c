"""What the search tests type: the repository's catalog, and for each entry the
identifying line of each signature and each alias, with the entry page it belongs to; and
the site search's own code run on a built site in Node (``tests/site/search_page.js``),
which answers them all in one process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from failpedia.catalog.validate import load_catalog
from sitebuild import REPO

CATALOG, _ = load_catalog(REPO / "entries", REPO)
SEARCH_PAGE_JS = REPO / "tests" / "site" / "search_page.js"


def signature_cases() -> list[tuple[str, str, str]]:
    """(entry page path, label, text): each signature's identifying line and each alias."""
    cases = []
    for item in CATALOG.entries:
        url = f"{item.entry.category}/{item.entry.id}/"
        for index, line in enumerate(item.signature_lines()):
            cases.append((url, f"{item.entry.id}-signature{index}", line))
        for index, alias in enumerate(item.entry.aliases):
            cases.append((url, f"{item.entry.id}-alias{index}", alias.text))
    return cases


def causes(url: str) -> list[str]:
    """The pages of the entries the catalog names as causes of the entry at ``url``, or as
    confused with it (the same message, printed by another failure)."""
    entry_id = url.rstrip("/").rsplit("/", 1)[-1]
    links = CATALOG.links(entry_id)
    return [
        f"{link.target.entry.category}/{link.target.entry.id}/"
        for relation in ("caused-by", "confused-with")
        for link in links.get(relation, [])
    ]


def search_in_node(
    site: Path, queries: list[str], *, typed: bool = False, full_text: bool = False
) -> list[dict[str, Any]]:
    """What the search page shows for each query, from the site's own search scripts run
    in Node: each query pasted (or ``typed``) into an empty box. Each answer has ``owners``
    (the entries listed above the full-text results), ``first`` (the first result's page
    path), ``answers`` and ``fix_links`` (each listed entry's quick answer and fix link),
    and, where the full-text search ran (always with ``full_text``), ``pages`` and
    ``count``."""
    request = json.dumps({"queries": queries, "typed": typed, "full_text": full_text})
    done = subprocess.run(
        ["node", str(SEARCH_PAGE_JS), str(site)],
        input=request,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found
