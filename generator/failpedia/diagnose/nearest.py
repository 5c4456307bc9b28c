"""The entries nearest in wording to a log's most error-like lines, for when no signature
matched: never findings, only where to look next.

Ranked over ``nearest.json`` (lunr's weights, built by ``catalog.index_build.build_nearest``;
the log page's worker ranks over the same file), with the query, the scores and the order
that ``signatures.nearest_rules`` defines for both.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from failpedia.signatures.index_format import SignatureIndex
from failpedia.signatures.nearest_rules import (
    MAX_QUERY_TERMS,
    NEAREST_FORMAT,
    most_error_like,
    rank,
    register_stemmer,
    scores,
    terms_of,
)


class NearestEntry(NamedTuple):
    id: str
    title: str
    url: str
    summary: str  # the entry's quick answer, as the site's search lists it beside the title
    score: float


def nearest_entries(
    lines: list[tuple[int, str]], data: dict[str, Any] | None, index: SignatureIndex
) -> list[NearestEntry]:
    """Up to ``MAX_NEAREST`` entries of ``index`` nearest to the error-like ``lines``
    (``(score, text)``, in log order); none without a usable ``nearest.json`` (``data``)
    or without a term to look for."""
    terms = terms_of(most_error_like(lines), MAX_QUERY_TERMS)
    if not terms or not isinstance(data, dict) or data.get("format") != NEAREST_FORMAT:
        return []
    ids, weights = data.get("ids"), data.get("terms")
    if not isinstance(ids, list) or not isinstance(weights, dict):
        return []
    from lunr.token import Token  # loaded only when nothing matched

    stem = register_stemmer()  # the query's words stemmed as the index's were, and as in lunr.js
    try:
        found = rank(scores(weights, [str(stem(Token(term))) for term in terms]), ids)
    except (TypeError, ValueError, IndexError):
        return []
    entries = {entry.id: entry for entry in index.entries}
    return [
        NearestEntry(
            ref, entries[ref].title, index.url(entries[ref]), entries[ref].summary or "", score
        )
        for ref, score in found
        if ref in entries
    ]
