"""Turn scanned blocks into candidate lines with their context.

Blocks come from ``blocks`` (line-aligned, ANSI removed, newlines counted, scanned).
Only candidate lines are decoded, with the lines around them. A block may live in a
reused buffer, so everything a hit needs from it is decoded before the buffer goes back.

``LineCollector`` follows one stretch of consecutive blocks. A stream has one; a regular
file is cut into stretches scanned in parallel (``stretches``), each with its own
collector, whose hits are then given the context that lies across the stretch's edges.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from failpedia.diagnose.blocks import Block, BlockReader, Candidate
from failpedia.diagnose.coarse import Engine


class LineHit:
    """A candidate line: 1-based number, decoded text (ANSI removed), probes that fired,
    the lines before and after it, and how many lines after it are still to come."""

    __slots__ = ("line_no", "text", "probes", "before", "after", "missing_after")

    def __init__(
        self,
        line_no: int,
        text: str,
        probes: frozenset[int],
        before: list[str],
        after: list[str] | None = None,
        missing_after: int = 0,
    ) -> None:
        self.line_no, self.text, self.probes = line_no, text, probes
        self.before, self.after = before, after if after is not None else []
        self.missing_after = missing_after


class ScanStats:
    """How many bytes and lines an input held."""

    __slots__ = ("bytes", "lines")

    def __init__(self) -> None:
        self.bytes = 0
        self.lines = 0


def _decode(raw: bytes | bytearray) -> str:
    return raw.decode("utf-8", "replace")


def _line(data: bytearray, start: int, stop: int, decoded: dict[int, str] | None) -> str:
    """The line ``data[start:stop]``, decoded once per block where ``decoded`` is given:
    in a block where every line matches, each is the text of one hit and the context of
    a dozen others, and one string serves them all."""
    if decoded is None:
        return _decode(data[start:stop])
    text = decoded.get(start)
    if text is None:
        text = decoded[start] = _decode(data[start:stop])
    return text


class LineCollector:
    """Candidate lines, with up to ``before``/``after`` lines of context, from consecutive
    blocks. Line numbers count from the first block given.

    A hit near the end of the blocks seen waits for the lines that follow it; ``waiting``
    holds such hits, in order, once the blocks run out. ``tail`` holds the last
    ``before`` lines and ``head`` the first ``after``, for the stretches either side."""

    def __init__(self, before: int, after: int) -> None:
        self.before, self.after = before, after
        self.lines = 0  # newlines in the blocks given so far
        self.bytes = 0
        self.tail: list[str] = []
        self.head: list[str] = []
        self.head_complete = after == 0
        self.waiting: list[LineHit] = []
        self.has_data = False
        self.ends_mid_line = False

    def add(self, block: Block) -> Iterator[LineHit]:
        """The hits of ``block`` (and of earlier ones) whose context is complete, in order.

        Each hit is decoded as it is taken, so that a block where every line matches never
        holds all its hits at once: the block's buffer must stay as it is, and the
        iterator be exhausted, before the next block is added."""
        data, size, done = block.data, block.size, block.last
        self.bytes += block.read_bytes
        if not size:
            return
        if not self.head_complete:
            self.head.extend(_first_lines(data, size, self.after - len(self.head), done))
            self.head_complete = len(self.head) >= self.after or done
        if self.waiting:
            yield from _complete(self.waiting, data, size, done)
        if block.candidates:
            for hit in _lines_of(
                data, size, block.candidates, self.lines, self.tail, self.before, self.after, done
            ):
                if hit.missing_after or self.waiting:
                    self.waiting.append(hit)
                else:
                    yield hit
        self.lines += block.newlines
        self.has_data = True
        self.ends_mid_line = data[size - 1] != 0x0A
        self.tail = _update_tail(self.tail, data, size, self.before)


def scan_stream(
    stream: BinaryIO, engine: Engine, before: int, after: int, stats: ScanStats
) -> Iterator[LineHit]:
    """Yield a stream's candidate lines in log order, each with up to ``before``/``after``
    lines of context."""
    collector = LineCollector(before, after)
    reader = BlockReader(stream, engine.find)
    try:
        for block in reader:
            yield from collector.add(block)
            reader.release(block)  # its hits are all decoded
    finally:  # also where the stream broke off: what was read before counts
        stats.bytes = collector.bytes
        stats.lines = collector.lines + (1 if collector.ends_mid_line else 0)
    yield from collector.waiting


def _first_lines(
    data: bytearray,
    size: int,
    count: int,
    done: bool,
    position: int = 0,
    decoded: dict[int, str] | None = None,
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
        lines.append(_line(data, position, stop, decoded))
        position = stop + 1
    return lines


def _complete(waiting: list[LineHit], data: bytearray, size: int, done: bool) -> Iterator[LineHit]:
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
) -> Iterator[LineHit]:
    decoded: dict[int, str] = {}
    for candidate in candidates:
        start = candidate.start
        end = data.find(b"\n", start, size)
        end = size if end == -1 else end
        following = _first_lines(data, size, after, done, end + 1, decoded) if after else []
        missing = 0 if done else after - len(following)
        yield LineHit(
            base_line + candidate.lines_before + 1,
            _line(data, start, end, decoded),
            candidate.probes,
            _lines_before(data, start, before, tail, decoded),
            following,
            missing,
        )


def _lines_before(
    data: bytearray, start: int, count: int, tail: list[str], decoded: dict[int, str]
) -> list[str]:
    lines: list[str] = []
    position = start
    while position > 0 and len(lines) < count:
        previous = data.rfind(b"\n", 0, position - 1) + 1
        lines.insert(0, _line(data, previous, position - 1, decoded))
        position = previous
    if len(lines) < count and tail:
        lines = tail[-(count - len(lines)) :] + lines
    return lines
