"""The failures people hit most often, for the home page: counted from the project's
corpus of real logs (``benchmarks/realworld/cases/*.yaml``, one log pasted into a public
thread per file, labelled with the entry that explains it), not chosen by hand."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from failpedia.catalog.bounded_read import RefusedFile, read_bounded
from failpedia.catalog.catalog import Catalog, CatalogEntry
from failpedia.catalog.yaml_source import YamlSyntaxError, parse_yaml

MAX_CASE_BYTES = 200_000


def most_common(
    catalog: Catalog, cases_dir: Path | None, limit: int = 8
) -> list[tuple[CatalogEntry, int]]:
    """Catalog entries by how many real logs they explain, most first (ties by title)."""
    if cases_dir is None or not cases_dir.is_dir():
        return []
    counts: Counter[str] = Counter()
    for path in sorted(cases_dir.glob("*.yaml")):
        try:  # cases come by pull request too: read bounded, parsed without alias expansion
            text = read_bounded(path, within=cases_dir, limit=MAX_CASE_BYTES).decode("utf-8")
            data = parse_yaml(text).value
        except (RefusedFile, UnicodeDecodeError, YamlSyntaxError):
            continue
        expected = data.get("expected") if isinstance(data, dict) else None
        if isinstance(expected, str) and expected in catalog.by_id:
            counts[expected] += 1
    ranked = sorted(counts.items(), key=lambda pair: (-pair[1], catalog.by_id[pair[0]].entry.title))
    return [(catalog.by_id[entry_id], count) for entry_id, count in ranked[:limit]]
