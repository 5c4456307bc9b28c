"""The sampled literal finder reports every occurrence of every literal, exactly once,
wherever it lies in the block, whatever the literals' lengths, and stops where told."""

from __future__ import annotations

import pytest

# Not skipped when missing: the test machines have a C compiler, so a missing module
# means the build broke.
from failpedia._literalset import LiteralSet
from hypothesis import given, settings
from hypothesis import strategies as st

# Few letters, so literals overlap, share windows and occur inside one another.
ALPHABET = b"ab\n "
literal_bytes = st.binary(min_size=8, max_size=40).map(
    lambda raw: bytes(ALPHABET[byte % len(ALPHABET)] for byte in raw)
)


def every_occurrence(literals: list[tuple[bytes, int]], data: bytes) -> list[tuple[int, int]]:
    """What find must report, by bytes.find: (position of the last byte, id)."""
    found = []
    for literal, ident in literals:
        position = data.find(literal)
        while position != -1:
            found.append((position + len(literal) - 1, ident))
            position = data.find(literal, position + 1)
    return sorted(found)


@st.composite
def literals_and_block(draw: st.DrawFn) -> tuple[list[tuple[bytes, int]], bytes]:
    literals = draw(st.lists(literal_bytes, min_size=1, max_size=12))
    if draw(st.booleans()):  # the same literal under a second id
        literals.append(literals[0])
    pairs = [(literal, ident) for ident, literal in enumerate(literals)]
    pieces = draw(st.lists(
        st.one_of(st.sampled_from(literals), literal_bytes,
                  st.binary(max_size=30).map(lambda raw: bytes(
                      ALPHABET[byte % len(ALPHABET)] for byte in raw))),
        max_size=30,
    ))
    return pairs, b"".join(pieces)


@settings(max_examples=3000, deadline=None)
@given(literals_and_block(), st.integers(min_value=0, max_value=9), st.integers(0, 9))
def test_find_reports_what_bytes_find_finds(
    case: tuple[list[tuple[bytes, int]], bytes], lead: int, trail: int
) -> None:
    """Occurrences at the block's first and last bytes too (``lead``/``trail`` shift them
    against the sampled windows)."""
    literals, block = case
    data = b"x" * lead + block + b"y" * trail
    found = LiteralSet(literals).find(data)
    assert sorted(found) == every_occurrence(literals, data)
    assert len(found) == len(set(found))  # each occurrence once


@settings(max_examples=500, deadline=None)
@given(literals_and_block(), st.integers(min_value=0, max_value=6))
def test_find_stops_past_the_limit(
    case: tuple[list[tuple[bytes, int]], bytes], limit: int
) -> None:
    literals, data = case
    expected = every_occurrence(literals, data)
    found = LiteralSet(literals).find(memoryview(data), limit)
    if len(expected) > limit:
        assert found is None
    else:
        assert found is not None and sorted(found) == expected


def test_windows_are_sampled_the_shortest_literal_apart() -> None:
    """Seven bytes less than the shortest literal, so a long set looks at few places."""
    assert LiteralSet([(b"x" * 30, 0), (b"y" * 12, 1)]).stride == 5
    assert LiteralSet([(b"z" * 500, 0)]).stride == 64  # capped: the tables stay small
    assert LiteralSet([]).find(b"anything at all") == []


def test_many_long_literals_in_a_long_block() -> None:
    """Thousands of literals, a bitmap of many words and a table with collisions."""
    literals = [(f"E{number:04d} the worker failed at step ".encode(), number)
                for number in range(3000)]
    lines = [f"noise {number} " * 5 + f"E{number * 7 % 3000:04d} the worker failed at step 3"
             for number in range(2000)]
    data = "\n".join(lines).encode()
    found = LiteralSet(literals).find(bytearray(data))
    assert sorted(found) == every_occurrence(literals, data)
    assert len(found) == 2000


@pytest.mark.parametrize(("literals", "error"), [
    ([(b"short", 0)], ValueError),
    ([("not bytes at all", 0)], TypeError),
    ([b"no id here"], TypeError),
    (None, TypeError),
])
def test_bad_literals_are_refused(literals: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        LiteralSet(literals)
