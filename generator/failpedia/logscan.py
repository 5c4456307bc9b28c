"""Stream a log through an engine and hand back the candidate lines with their context.

Blocks come from ``logblocks`` (line-aligned, ANSI removed, newlines counted). Each is
scanned once by the engine; only candidate lines are decoded, with the lines around
them. A block lives in a reused buffer, so everything a hit needs from it is decoded
before the buffer goes back.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from .logblocks import BlockReader, Candidate
from .matcher import Engine


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


def _decode(raw: bytes | bytearray) -> str:
    return raw.decode("utf-8", "replace")


def scan_stream(
    stream: BinaryIO, engine: Engine, before: int, after: int, stats: ScanStats
) -> Iterator[LineHit]:
    """Yield candidate lines in log order, each with up to ``before``/``after`` lines."""
    base_line = 0
    tail: list[str] = []
    waiting: list[LineHit] = []
    ends_mid_line = False
    reader = BlockReader(stream, engine.find)
    for block in reader:
        stats.bytes += block.read_bytes
        data, size, done = block.data, block.size, block.last
        ready: list[LineHit] = []
        if size:
            if waiting:
                ready.extend(_complete(waiting, data, size, done))
            if block.candidates:
                for hit in _lines_of(data, size, block.candidates, base_line, tail, before, after,
                                     done):
                    if hit.missing_after or waiting:
                        waiting.append(hit)
                    else:
                        ready.append(hit)
            base_line += block.newlines
            ends_mid_line = data[size - 1] != 0x0A
            tail = _update_tail(tail, data, size, before)
        reader.release(block)  # nothing below reads the buffer
        yield from ready
    stats.lines = base_line + (1 if ends_mid_line else 0)
    yield from waiting


def _first_lines(
    data: bytearray, size: int, count: int, done: bool, position: int = 0
) -> list[str]:
    """Up to ``count`` complete lines of ``data[:size]`` from ``position`` (at the end of
    the log, a last line without a newline counts as complete)."""
    lines: list[str] = []
    while len(lines) < count and position < size:
        stop = data.find(b"\n", position, size)
        if stop == -1:
            if not done:
                break
            stop = size
        lines.append(_decode(data[position:stop]))
        position = stop + 1
    return lines


def _complete(
    waiting: list[LineHit], data: bytearray, size: int, done: bool
) -> Iterator[LineHit]:
    """Give waiting hits the lines they still lack from the start of ``data``, then yield,
    in order, those at the front that are complete."""
    lines = _first_lines(data, size, max(hit.missing_after for hit in waiting), done)
    for hit in waiting:
        if hit.missing_after:
            take = lines[: hit.missing_after]
            hit.after.extend(take)
            hit.missing_after = 0 if done else hit.missing_after - len(take)
    while waiting and not waiting[0].missing_after:
        yield waiting.pop(0)


def _update_tail(tail: list[str], data: bytearray, size: int, count: int) -> list[str]:
    """The last ``count`` complete lines seen so far, for context across block ends."""
    end = data.rfind(b"\n", 0, size)
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
    data: bytearray,
    size: int,
    candidates: list[Candidate],
    base_line: int,
    tail: list[str],
    before: int,
    after: int,
    done: bool,
) -> list[LineHit]:
    result = []
    for candidate in candidates:
        start = candidate.start
        end = data.find(b"\n", start, size)
        end = size if end == -1 else end
        following = _first_lines(data, size, after, done, end + 1) if after else []
        missing = 0 if done else after - len(following)
        result.append(LineHit(base_line + candidate.lines_before + 1, _decode(data[start:end]),
                              candidate.probes, _lines_before(data, start, before, tail),
                              following, missing))
    return result


def _lines_before(data: bytearray, start: int, count: int, tail: list[str]) -> list[str]:
    lines: list[str] = []
    position = start
    while position > 0 and len(lines) < count:
        previous = data.rfind(b"\n", 0, position - 1) + 1
        lines.insert(0, _decode(data[previous : position - 1]))
        position = previous
    if len(lines) < count and tail:
        lines = tail[-(count - len(lines)):] + lines
    return lines
