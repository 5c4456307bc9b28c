"""The exact check finds what ``re.search`` finds with the whole pattern, on any text: the
literal prefix it looks for with ``str.find`` and the rest it compiles on its own give the
same first match and span."""

from __future__ import annotations

import re

import pytest
from failpedia.diagnose.exact import ExactPattern, split_literal_prefix
from failpedia.project.index_source import find_index_source, load_index
from hypothesis import assume, given, settings
from hypothesis import strategies as st

ALPHABET = "ab .:()[]|+*?{}\\-_019\n"

# Pieces of canonical patterns: literal text (escaped where special), classes, escapes,
# quantified pieces, groups with alternation, anchors.
literal = st.text(alphabet=ALPHABET, min_size=1, max_size=4).map(re.escape)
atom = st.one_of(
    literal,
    st.sampled_from(
        ["[0-9]", "[ab]", "[^a]", "[]a]", "[\\]b]", "\\d", "\\w", "\\s", "\\b", ".", "a", "b", " "]
    ),
)
quantified = st.tuples(atom, st.sampled_from(["", "", "+", "*", "?", "{1,2}", "+?", "*?"])).map(
    "".join
)  # after a literal run, the quantifier takes its last character
group = st.lists(
    st.lists(quantified, min_size=1, max_size=3).map("".join), min_size=1, max_size=3
).map(lambda branches: "(?:" + "|".join(branches) + ")")
piece = st.one_of(quantified, quantified, group)
pattern = st.one_of(
    st.lists(piece, min_size=1, max_size=6).map("".join),
    st.tuples(
        st.lists(piece, min_size=1, max_size=3).map("".join),
        st.lists(piece, min_size=1, max_size=3).map("".join),
    ).map("|".join),
    st.lists(piece, min_size=1, max_size=4).map(lambda parts: "^" + "".join(parts) + "$"),
)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(pattern, st.text(alphabet=ALPHABET, max_size=40))
def test_the_exact_check_finds_what_re_search_finds(source: str, text: str) -> None:
    try:
        regex = re.compile(source, re.ASCII)
    except re.error:  # such as a quantified \b: not a pattern at all
        assume(False)
    match = regex.search(text)
    assert ExactPattern(source).search(text) == (match.span() if match else None)


def test_every_catalog_pattern_agrees_on_its_own_signature_texts() -> None:
    """The catalog's patterns, on their literal prefix repeated around noise."""
    for entry in load_index(find_index_source()).entries:
        for item in entry.patterns:
            prefix, _ = split_literal_prefix(item.canonical)
            regex = re.compile(item.canonical, re.ASCII)
            for text in (prefix, f"x {prefix} y", prefix * 2, f"{prefix}123 (size 4.5)"):
                match = regex.search(text)
                assert ExactPattern(item.canonical).search(text) == (
                    match.span() if match else None
                ), item.canonical


def test_the_literal_prefix_stops_where_the_pattern_stops_being_literal() -> None:
    assert split_literal_prefix(r"CUDA error: out of memory \(\d+\)") == (
        "CUDA error: out of memory (",
        r"\d+\)",
    )
    assert split_literal_prefix("step [0-9]+") == ("step ", "[0-9]+")
    assert split_literal_prefix("ab+c") == ("a", "b+c")  # the quantified b is the rest's
    assert split_literal_prefix("abc|abd") == ("", "abc|abd")
    assert split_literal_prefix("(?:a|b)c") == ("", "(?:a|b)c")
    assert split_literal_prefix(r"a\.b(?:c|d)") == ("a.b", "(?:c|d)")


def test_a_prefix_found_where_the_rest_fails_is_looked_for_again_overlapping() -> None:
    assert ExactPattern("aa[b]").search("aaab") == (1, 4)
    assert ExactPattern("ab[0-9]+").search("ab ab12") == (3, 7)
    assert ExactPattern("ab[0-9]+").search("ab ab") is None
