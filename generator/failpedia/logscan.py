"""Stream a log through an engine and hand back the candidate lines with their context.

The log is read in blocks cut at line ends (at a carriage return where a progress bar
drew a very long line, and anywhere once a line passes ``MAX_CARRY``), so memory stays
flat whatever the file's size. Each block is scanned once by the engine; only candidate
lines are decoded, with the lines around them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from .logline import ANSI
from .logsource import iter_blocks
from .matcher import Engine

BLOCK_SIZE = 8 << 20
MAX_CARRY = 8 << 20
_ANSI_BYTES = re.compile(ANSI.encode("ascii"))


@dataclass
class LineHit:
    """A candidate line: 1-based number, decoded text (ANSI removed), probes that fired."""

    line_no: int
    text: str
    probes: set[int]
    before: list[str]
    after: list[str] = field(default_factory=list)
    missing_after: int = 0


@dataclass
class ScanStats:
    bytes: int = 0
    lines: int = 0


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def scan_stream(
    stream: BinaryIO, engine: Engine, before: int, after: int, stats: ScanStats
) -> Iterator[LineHit]:
    """Yield candidate lines in log order, each with up to ``before``/``after`` lines."""
    carry = b""
    base_line = 0
    tail: list[str] = []
    waiting: list[LineHit] = []
    blocks = iter_blocks(stream, BLOCK_SIZE)
    done = False
    ends_mid_line = False
    while not done:
        block = next(blocks, None)
        if block is None:
            done = True
            data, carry = carry, b""
            if not data:
                break
        else:
            stats.bytes += len(block)
            data = carry + block if carry else block
            cut = data.rfind(b"\n") + 1 or data.rfind(b"\r") + 1
            if cut == 0 and len(data) > MAX_CARRY:
                cut = len(data)
            data, carry = data[:cut], data[cut:]
            if not data:
                continue
        if b"\x1b" in data:
            data = _ANSI_BYTES.sub(b"", data)
        if waiting:
            yield from _complete(waiting, data, done)
        hits = engine.find(data)
        if hits:
            for hit in _lines_of(data, hits, base_line, tail, before, after, done):
                if hit.missing_after or waiting:
                    waiting.append(hit)
                else:
                    yield hit
        base_line += data.count(b"\n")
        ends_mid_line = not data.endswith(b"\n")
        tail = _update_tail(tail, data, before)
    stats.lines = base_line + (1 if ends_mid_line else 0)
    yield from waiting


def _first_lines(data: bytes, count: int, done: bool, position: int = 0) -> list[str]:
    """Up to ``count`` complete lines of ``data`` from ``position`` (at the end of the log,
    a last line without a newline counts as complete)."""
    lines: list[str] = []
    while len(lines) < count and position < len(data):
        stop = data.find(b"\n", position)
        if stop == -1:
            if not done:
                break
            stop = len(data)
        lines.append(_decode(data[position:stop]))
        position = stop + 1
    return lines


def _complete(waiting: list[LineHit], data: bytes, done: bool) -> Iterator[LineHit]:
    """Give waiting hits the lines they still lack from the start of ``data``, then yield,
    in order, those at the front that are complete."""
    lines = _first_lines(data, max(hit.missing_after for hit in waiting), done)
    for hit in waiting:
        if hit.missing_after:
            take = lines[: hit.missing_after]
            hit.after.extend(take)
            hit.missing_after = 0 if done else hit.missing_after - len(take)
    while waiting and not waiting[0].missing_after:
        yield waiting.pop(0)


def _update_tail(tail: list[str], data: bytes, count: int) -> list[str]:
    """The last ``count`` complete lines seen so far, for context across block ends."""
    end = data.rfind(b"\n")
    if not count or end == -1:
        return tail
    recent: list[str] = []
    start = -1
    while len(recent) < count:  # walk back line by line: no copy of the whole block
        start = data.rfind(b"\n", 0, end) + 1
        recent.insert(0, _decode(data[start:end]))
        if start == 0:
            break
        end = start - 1
    return (tail + recent)[-count:] if start == 0 else recent


def _lines_of(
    data: bytes,
    hits: list[tuple[int, int]],
    base_line: int,
    tail: list[str],
    before: int,
    after: int,
    done: bool,
) -> list[LineHit]:
    by_start: dict[int, set[int]] = {}
    for position, probe in hits:
        start = data.rfind(b"\n", 0, position) + 1
        by_start.setdefault(start, set()).add(probe)
    result = []
    counted_to = 0
    line_no = base_line + 1
    for start in sorted(by_start):
        line_no += data.count(b"\n", counted_to, start)
        counted_to = start
        end = data.find(b"\n", start)
        end = len(data) if end == -1 else end
        following = _first_lines(data, after, done, end + 1) if after else []
        missing = 0 if done else after - len(following)
        result.append(LineHit(line_no, _decode(data[start:end]), by_start[start],
                              _lines_before(data, start, before, tail), following, missing))
    return result


def _lines_before(data: bytes, start: int, count: int, tail: list[str]) -> list[str]:
    lines: list[str] = []
    position = start
    while position > 0 and len(lines) < count:
        previous = data.rfind(b"\n", 0, position - 1) + 1
        lines.insert(0, _decode(data[previous : position - 1]))
        position = previous
    if len(lines) < count and tail:
        lines = tail[-(count - len(lines)):] + lines
    return lines
