"""The C helpers that read log blocks remove exactly what the ANSI regex matches and
count exactly the newlines, on any bytes."""

from __future__ import annotations

import pytest

# Not skipped when missing: the test machines have a C compiler, so a missing helper
# means the build broke.
from failpedia import _logbytes as logbytes
from failpedia.logblocks import count_newlines_python, strip_ansi_python
from hypothesis import given, settings
from hypothesis import strategies as st

# Bytes that make escape sequences and break them: ESC, the introducers, parameter,
# intermediate and final bytes, terminators, line ends, and ordinary text.
PIECES = [b"\x1b", b"[", b"]", b"\\", b"\x07", b"\n", b"\r", b"0", b"3", b";", b"?", b" ",
          b"/", b"m", b"K", b"@", b"~", b"A", b"Z", b"_", b"^", b"x", b"\xc3\xa9", b"\x7f"]
log_bytes = st.lists(
    st.one_of(st.sampled_from(PIECES), st.binary(max_size=4)), max_size=60
).map(b"".join)


def _strip(function, data: bytes) -> bytes | None:
    out = bytearray(len(data))
    written = function(memoryview(data), out)
    return None if written < 0 else bytes(out[:written])


@settings(max_examples=3000, deadline=None)
@given(log_bytes)
def test_strip_ansi_matches_the_regex(data: bytes) -> None:
    assert _strip(logbytes.strip_ansi, data) == _strip(strip_ansi_python, data)


@settings(max_examples=500, deadline=None)
@given(log_bytes)
def test_count_newlines_matches_bytes_count(data: bytes) -> None:
    padded = data * 37  # past the 255-byte chunks the counter works in
    assert logbytes.count_newlines(padded) == count_newlines_python(memoryview(padded))
    assert logbytes.count_newlines(data) == data.count(b"\n")


def test_strip_ansi_refuses_a_short_output_buffer() -> None:
    with pytest.raises(ValueError):
        logbytes.strip_ansi(b"\x1b[0mabc", bytearray(2))
    assert logbytes.strip_ansi(b"plain", bytearray(5)) == -1
