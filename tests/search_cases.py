"""What the search tests type: the repository's catalog, and for each entry the
identifying line of each signature and each alias, with the entry page it belongs to."""

from __future__ import annotations

from failpedia.catalog.validate import load_catalog
from sitebuild import REPO

CATALOG, _ = load_catalog(REPO / "entries", REPO)


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
