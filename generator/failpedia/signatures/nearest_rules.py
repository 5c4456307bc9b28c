"""How an entry is found by wording when no signature matches: the one set of rules that
``failpedia diagnose``, ``failpedia run`` and the log page share.

The ranking itself is lunr's (the Python port builds and queries the index, lunr.js
queries it in the browser): ``nearest.json`` holds lunr's serialized index, which both read
unchanged, and the rules below, which the page's worker takes from that file. Texts and
log lines become terms the same way on both sides (the lines of the highest error-like
score, ``TERM``, lower-cased, joined by
spaces, so lunr's own tokenizer has nothing left to split), and results are ordered by
score rounded to ``SCORE_DIGITS`` places, then id, so float noise cannot reorder them.
"""

from __future__ import annotations

import math
import re
from typing import Any

NEAREST_FILE = "nearest.json"
NEAREST_FORMAT = 1
# A term: a letter, then letters and digits (dotted names, paths and snake_case split up,
# numbers, addresses and sizes dropped, since they differ from one log to the next).
TERM = r"[A-Za-z][A-Za-z0-9]+"
# The most distinct terms a query takes from the log's error-like lines, in their order.
MAX_QUERY_TERMS = 48
# How many entries are listed.
MAX_NEAREST = 3
SCORE_DIGITS = 3
# lunr's fields and their boosts: the title says what the failure is, the messages are
# its wording (signatures, real sightings, aliases), the quick answer and the mechanism
# name what it involves (a build, a file, a setting) in the words other messages use.
FIELDS: tuple[tuple[str, int], ...] = (
    ("title", 1),
    ("messages", 1),
    ("summary", 1),
    ("mechanism", 1),
)
# The least error-like score (``line_rules.ERROR_LIKE``) a line needs to be looked up: a
# line with an error word, not a bare ``Traceback`` header, whose words every entry shares.
MIN_QUERY_SCORE = 3

_TERM = re.compile(TERM, re.ASCII)


def most_error_like(lines: list[tuple[int, str]]) -> list[str]:
    """The texts of the lines with the highest error-like score (``line_rules.ERROR_LIKE``),
    if it reaches ``MIN_QUERY_SCORE``: an exception's line, not a ``failed`` beside it."""
    top = max((score for score, _ in lines), default=0)
    return [text for score, text in lines if score == top] if top >= MIN_QUERY_SCORE else []


def terms_of(texts: list[str], limit: int | None = None) -> list[str]:
    """The distinct lower-cased terms of ``texts``, in order of first appearance."""
    seen: dict[str, None] = {}
    for text in texts:
        for match in _TERM.finditer(text):
            seen.setdefault(match.group().lower())
            if limit is not None and len(seen) >= limit:
                return list(seen)
    return list(seen)


def rank(results: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The first ``MAX_NEAREST`` of lunr's ``(id, score)`` results, in the shared order."""
    scale = 10**SCORE_DIGITS
    # floor(x * scale + 0.5) / scale: the same floating-point steps as the worker's
    # Math.round(x * scale) / scale, so both round every score alike.
    rounded = [(ref, math.floor(score * scale + 0.5) / scale) for ref, score in results]
    return sorted(rounded, key=lambda item: (-item[1], item[0]))[:MAX_NEAREST]


def published_nearest_rules() -> dict[str, Any]:
    """The rules above, as ``nearest.json`` carries them for the log page."""
    return {
        "term": TERM,
        "min_query_score": MIN_QUERY_SCORE,
        "max_query_terms": MAX_QUERY_TERMS,
        "max_nearest": MAX_NEAREST,
        "score_digits": SCORE_DIGITS,
    }
