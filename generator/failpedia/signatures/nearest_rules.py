"""How an entry is found by wording when no signature matches: the one set of rules that
``failpedia diagnose``, ``failpedia run`` and the log page share.

The ranking is lunr's: lunr's Python port builds the index (BM25 weights for each term of
each entry's fields), and ``nearest.json`` holds, for each of its terms, the entries that
hold it with the term's weight summed over their fields (``term_weights``). That is all a
lunr query of plain terms reads (a field's boost is in its weights, and the query's vector
is the same for every field): an entry's score is the sum, over the query's terms, of the
term's count in the query times its weight in the entry, over the length of the query's
vector (``scores``, and the worker's copy of it).
The page's worker so reads a small table instead of loading lunr's index, which took it a
fifth of a second. Texts and log lines become terms the same way on both sides (the
lines of the highest error-like score, ``TERM``, lower-cased, each stemmed as lunr stems
a query's words), and results are ordered by score rounded to ``SCORE_DIGITS`` places,
then id, so float noise cannot reorder them.

Both stem words with the Porter stemmer, but lunr's Python port (0.8) and lunr.js (2.3.9)
differ at one step, a word's final ``y``: the port turns ``key``, ``array`` and ``display``
into ``kei``, ``arrai`` and ``displai`` where lunr.js keeps them, and keeps ``dry`` where
lunr.js writes ``dri``. The index is built, and the CLI queries it, with the port's
stemmer at that step made lunr.js's (``register_stemmer``), so a log line finds the same
entries with the same scores in the browser and on the command line.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any

NEAREST_FILE = "nearest.json"
# 3: each term's entries (by their position in ``ids``) and weights, in place of lunr's
# serialized index (format 2), which was four times the size and slow to load.
NEAREST_FORMAT = 3
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
# lunr.js's step 1c: a final y after a consonant that follows something becomes i.
_FINAL_Y = re.compile(r"^(.+?[^aeiou])y$")


@functools.cache
def register_stemmer() -> Callable[..., Any]:
    """lunr's Python stemmer with its final-``y`` step made lunr.js's, registered under
    lunr's own name for it (``stemmer``): an index built with it names it so, lunr.js
    reads that name as its stemmer, and ``Index.load`` in Python takes this one. Imports
    lunr, so it is called only where lunr is used."""
    from lunr.pipeline import Pipeline
    from lunr.stemmer import PorterStemmer

    class BrowserStemmer(PorterStemmer):  # type: ignore[misc]
        b: str  # the word being stemmed; k: the index of its last letter
        k: int

        def step1c(self) -> None:
            if _FINAL_Y.match(self.b[: self.k + 1]):
                self.b = self.b[: self.k] + "i" + self.b[self.k + 1 :]

    porter = BrowserStemmer()

    def stemmer(token: Any, i: int | None = None, tokens: Any = None) -> Any:
        return token.update(porter.stem)

    # What Pipeline.register_function does, without its warning that a name is taken.
    setattr(stemmer, "label", "stemmer")  # noqa: B010 (a function's attribute lunr reads)
    Pipeline.registered_functions["stemmer"] = stemmer
    return stemmer


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


def term_weights(serialized: dict[str, Any]) -> dict[str, list[float]]:
    """From lunr's serialized index: for each term, ``[entry, weight, entry, weight, ...]``,
    an entry by its position in ``ids`` and the weight the term has in its fields, summed
    and rounded to the places lunr keeps (``SCORE_DIGITS``)."""
    names = {int(posting["_index"]): term for term, posting in serialized["invertedIndex"]}
    summed: dict[str, dict[int, float]] = {}
    for field_ref, elements in serialized["fieldVectors"]:
        entry = int(field_ref.rsplit("/", 1)[1])
        for position in range(0, len(elements), 2):
            held = summed.setdefault(names[int(elements[position])], {})
            held[entry] = held.get(entry, 0.0) + elements[position + 1]
    return {
        term: [
            number for entry in sorted(held) for number in (entry, round(held[entry], SCORE_DIGITS))
        ]
        for term, held in sorted(summed.items())
    }


def scores(weights: dict[str, list[float]], stems: list[str]) -> dict[int, float]:
    """Each entry's score for a query of ``stems`` (its terms, stemmed): the sum of each
    stem's count times its weight in the entry, over the query vector's length, counting
    only the stems the index holds (lunr's score, summed over the fields)."""
    counts: dict[str, int] = {}
    for stem in stems:
        if stem in weights:
            counts[stem] = counts.get(stem, 0) + 1
    length = math.sqrt(sum(count * count for count in counts.values()))
    found: dict[int, float] = {}
    for stem, count in counts.items():
        held = weights[stem]
        for position in range(0, len(held), 2):
            entry = int(held[position])
            found[entry] = found.get(entry, 0.0) + count * held[position + 1]
    return {entry: total / length for entry, total in found.items()}


def rank(results: dict[int, float], ids: list[str]) -> list[tuple[str, float]]:
    """The first ``MAX_NEAREST`` of the entries' scores as ``(id, score)``, in the shared
    order; an entry is named by its position in ``ids``."""
    scale = 10**SCORE_DIGITS
    # floor(x * scale + 0.5) / scale: the same floating-point steps as the worker's
    # Math.floor(x * scale + 0.5) / scale, so both round every score alike.
    rounded = [
        (ids[entry], math.floor(score * scale + 0.5) / scale)
        for entry, score in results.items()
        if 0 <= entry < len(ids)
    ]
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
