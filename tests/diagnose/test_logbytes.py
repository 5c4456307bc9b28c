"""The C helpers that read log blocks remove exactly what the ANSI regex matches and
count exactly the newlines, on any bytes, whether or not they hold escapes, in 16-byte
chunks or not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# Not skipped when missing: the test machines have a C compiler, so a missing helper
# means the build broke.
from failpedia.diagnose import _logbytes as logbytes
from failpedia.diagnose.blocks import count_newlines_python, strip_and_count_python
from hypothesis import given, settings
from hypothesis import strategies as st

# Bytes that make escape sequences and break them: ESC, the introducers, parameter,
# intermediate and final bytes, terminators, line ends, and ordinary text.
PIECES = [
    b"\x1b",
    b"[",
    b"]",
    b"\\",
    b"\x07",
    b"\n",
    b"\r",
    b"0",
    b"3",
    b";",
    b"?",
    b" ",
    b"/",
    b"m",
    b"K",
    b"@",
    b"~",
    b"A",
    b"Z",
    b"_",
    b"^",
    b"x",
    b"\xc3\xa9",
    b"\x7f",
]


@pytest.fixture(autouse=True, params=["avx2", "sse2"])
def simd_loop(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every test runs with the 64-byte AVX2 loop (where the CPU has AVX2) and without it,
    so that a machine with AVX2 checks the 16-byte loop too."""
    logbytes.use_avx2(request.param == "avx2")
    yield request.param
    logbytes.use_avx2(True)


log_bytes = st.lists(st.one_of(st.sampled_from(PIECES), st.binary(max_size=4)), max_size=60).map(
    b"".join
)


def _strip(function, data: bytes) -> tuple[bytes | None, int]:
    out = bytearray(len(data))
    written, newlines = function(memoryview(data), out)
    return None if written < 0 else bytes(out[:written]), newlines


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(log_bytes, st.integers(min_value=0, max_value=40), st.integers(min_value=1, max_value=3))
def test_strip_and_count_match_the_regex_and_bytes_count(
    data: bytes, plain: int, repeat: int
) -> None:
    """Escapes anywhere: after a run of plain 16-byte chunks, within or across chunks, or
    several in one; the expected values are the regex's and ``bytes.count``'s."""
    data = b"x\n" * plain + data * repeat
    stripped, newlines = _strip(logbytes.strip_and_count, data)
    assert (stripped, newlines) == _strip(strip_and_count_python, data)
    assert newlines == data.count(b"\n")
    in_place = bytearray(data)  # the way blocks are stripped: into their own buffer
    written, _ = logbytes.strip_and_count(in_place, in_place)
    assert bytes(in_place[:written]) == stripped if written >= 0 else in_place == data


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=4000, max_size=9000), st.integers(min_value=0, max_value=9000))
def test_long_blocks_count_every_newline(data: bytes, escape_at: int) -> None:
    """Past the chunks that one round of per-byte counters holds (255 of 16 bytes, 127 of
    64), with or without an escape sequence somewhere."""
    data = data.replace(b"\x1b", b"E").replace(b"\x00", b"\n")
    assert _strip(logbytes.strip_and_count, data) == (None, data.count(b"\n"))
    coloured = data[:escape_at] + b"\x1b[31m" + data[escape_at:]
    assert _strip(logbytes.strip_and_count, coloured) == (data, data.count(b"\n"))


@pytest.mark.parametrize("length", [16 * 255 + 17, 64 * 127 + 63, 64 * 127 * 3 + 5, 100_003])
def test_a_block_of_newlines_is_counted_whole(length: int) -> None:
    """Every byte a newline: each per-byte counter fills as fast as it can, so one summed
    too late overflows (the 16- and the 64-byte loops both)."""
    data = b"\n" * length
    assert _strip(logbytes.strip_and_count, data) == (None, length)
    assert _strip(logbytes.strip_and_count, data + b"\x1b[0m") == (data, length)
    assert logbytes.count_newlines(data) == length


@settings(max_examples=500, deadline=None)
@given(log_bytes)
def test_count_newlines_matches_bytes_count(data: bytes) -> None:
    padded = data * 37  # past the 255-byte chunks the counter works in
    assert logbytes.count_newlines(padded) == count_newlines_python(memoryview(padded))
    assert logbytes.count_newlines(data) == data.count(b"\n")


def test_strip_and_count_refuses_a_short_output_buffer() -> None:
    with pytest.raises(ValueError):
        logbytes.strip_and_count(b"\x1b[0mabc", bytearray(2))
    assert logbytes.strip_and_count(b"plain\n", bytearray(6)) == (-1, 1)
