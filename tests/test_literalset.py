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


@settings(max_examples=1000, deadline=None)
@given(literals_and_block(), st.data())
def test_any_first_windows_find_the_same(
    case: tuple[list[tuple[bytes, int]], bytes], data: st.DataObject
) -> None:
    """Wherever each literal's sampled windows start (the stride shrinks to fit), and
    when the chosen starts are given back."""
    literals, block = case
    firsts = [data.draw(st.integers(0, len(literal) - 8)) for literal, _ in literals]
    given_firsts = LiteralSet([(*pair, first)
                               for pair, first in zip(literals, firsts, strict=True)])
    assert given_firsts.firsts == firsts
    assert given_firsts.stride == min(len(literal) - first - 7
                                      for (literal, _), first in zip(literals, firsts, strict=True))
    assert sorted(given_firsts.find(block)) == every_occurrence(literals, block)
    chosen = LiteralSet(literals)
    again = LiteralSet([(*pair, first)
                        for pair, first in zip(literals, chosen.firsts, strict=True)])
    assert (again.firsts, again.stride) == (chosen.firsts, chosen.stride)
    assert sorted(again.find(block)) == sorted(chosen.find(block))


def test_literals_that_start_alike_are_sampled_where_they_differ() -> None:
    """Fifty literals with one long beginning and a short one that keeps the stride at 13:
    each is sampled where it differs, so no window stands for all fifty."""
    shared = b"RuntimeError: CUDA error: an illegal "
    literals = [(shared + b"memory access at 0x%016x" % (number * 0x9E3779B97F4A7C15 % 2**64),
                 number) for number in range(50)] + [(b"NCCL watchdog fired", 50)]
    chosen = LiteralSet(literals)
    assert chosen.stride == 12
    assert chosen.max_shared < 10  # a few hex addresses begin alike
    assert all(first >= len(shared) - 8 for first in chosen.firsts[:50])
    crowded = LiteralSet([(*pair, 0) for pair in literals])
    assert crowded.max_shared == 50
    block = b"\n".join(literal for literal, _ in literals) + b"\n" + shared * 20
    for found in (chosen.find(block), crowded.find(block)):
        assert sorted(found) == every_occurrence(literals, block)
    # The shared beginning, twenty times over: fifty comparisons wherever it is sampled.
    assert crowded.find(block, -1, 200) is None
    assert chosen.find(block, -1, 200) is not None
    assert sorted(crowded.find(block, -1, 10**6)) == every_occurrence(literals, block)


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
    huge = [(b"%039d" % number, number) for number in range(200_000)]
    assert LiteralSet(huge).stride == (1 << 20) // 200_000  # at most 2**20 windows
    assert LiteralSet(huge).find(b"x%039dy" % 123_456) == [(39, 123_456)]
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
    ([(b"long enough", 0, 4)], ValueError),  # no 8-byte window at 4
    ([(b"long enough", 0, -1)], ValueError),
    (None, TypeError),
])
def test_bad_literals_are_refused(literals: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        LiteralSet(literals)
