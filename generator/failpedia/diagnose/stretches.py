"""Scan a regular file on several threads: stretches of blocks, put back in log order.

A file is cut into stretches of whole blocks (``blocks.FileSpan``). Each worker takes
the next stretch and reads, strips, scans and collects its candidate lines alone, in one
buffer it keeps: a buffer still in the CPU's cache is read much faster than buffers
passed around between threads. The caller gets the current stretch's hits as they come;
later stretches hold theirs until their turn. Each stretch decodes its hits in batches and
holds at most about ``BUFFERED_HITS`` waiting for the caller, so memory stays flat however
many lines match. Before a hit is handed on, it gets the context that
lies across its stretch's edges: the lines before the stretch end the previous one, the
lines after it start the next.

Stretches are whole blocks, so the lines, numbers and context are exactly those of
reading the file's blocks in order on one thread.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator

from failpedia.diagnose.blocks import WORKERS, FileSpan, Scan, Slot, input_error, prepare
from failpedia.diagnose.candidates import LineCollector, LineHit, ScanStats

STRETCH_BLOCKS = 32
BUFFERED_HITS = 1024
HIT_BATCH = 256  # hits decoded and handed on at a time


class _Stretch:
    """Blocks ``first`` to ``end - 1`` of the file, and what scanning them found so far."""

    def __init__(self, number: int, first: int, end: int, final: bool) -> None:
        self.number, self.first, self.end, self.final = number, first, end, final
        self.hits: deque[LineHit] = deque()
        self.head: list[str] | None = None  # its first lines, once known
        self.collector: LineCollector | None = None  # set once it is scanned to the end
        self.error: BaseException | None = None


class _FileScan:
    def __init__(self, span: FileSpan, scan: Scan, before: int, after: int, workers: int) -> None:
        self.span, self.scan, self.before, self.after = span, scan, before, after
        blocks = span.blocks
        size = min(STRETCH_BLOCKS, max(1, -(-blocks // workers)))
        self.stretches = [
            _Stretch(number, first, min(first + size, blocks), first + size >= blocks)
            for number, first in enumerate(range(0, blocks, size))
        ]
        self.changed = threading.Condition()
        self.next = 0  # the next stretch a worker takes
        self.current = 0  # the stretch whose hits the caller is taking
        self.stopped = False
        self.threads = [
            threading.Thread(target=self._work, name=f"failpedia-scan-{number}", daemon=True)
            for number in range(min(workers, len(self.stretches)))
        ]
        for thread in self.threads:
            thread.start()

    def hits(self, stats: ScanStats) -> Iterator[LineHit]:
        """Every stretch's hits in order, with their context and line numbers completed."""
        tail: list[str] = []  # the last lines before the current stretch
        base = 0  # how many lines come before the current stretch
        ends_mid_line = False
        try:
            for stretch in self.stretches:
                with self.changed:
                    self.current = stretch.number
                    self.changed.notify_all()
                collector = None
                while collector is None:
                    with self.changed:
                        while not stretch.hits and stretch.collector is None:
                            if stretch.error is not None:
                                raise stretch.error
                            self.changed.wait()
                        batch = list(stretch.hits)
                        stretch.hits.clear()
                        collector = stretch.collector
                        self.changed.notify_all()  # room for a worker waiting to add more
                    for hit in batch:
                        yield self._placed(hit, base, tail)
                if collector.waiting:
                    following = self._lines_after(stretch.number)
                    for hit in collector.waiting:
                        hit.after.extend(following[: hit.missing_after])
                        hit.missing_after = 0
                        yield self._placed(hit, base, tail)
                base += collector.lines
                if self.before:
                    tail = (tail + collector.tail)[-self.before :]
                if collector.has_data:
                    ends_mid_line = collector.ends_mid_line
                stats.bytes += collector.bytes
            stats.lines = base + (1 if ends_mid_line else 0)
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers and wait for them: the caller closes the file next."""
        with self.changed:
            self.stopped = True
            self.changed.notify_all()
        for thread in self.threads:
            thread.join()

    def _placed(self, hit: LineHit, base: int, tail: list[str]) -> LineHit:
        """Number ``hit`` within the file, and give it the lines before its stretch that its
        context lacks (a stretch's collector cannot see them)."""
        hit.line_no += base
        if len(hit.before) < self.before:
            hit.before = (tail + hit.before)[-self.before :]
        return hit

    def _lines_after(self, number: int) -> list[str]:
        """The first ``after`` lines after stretch ``number``, fewer at the end of the file."""
        lines: list[str] = []
        for stretch in self.stretches[number + 1 :]:
            with self.changed:
                while stretch.head is None:
                    if stretch.error is not None:
                        raise stretch.error
                    self.changed.wait()
            lines.extend(stretch.head)
            if len(lines) >= self.after:
                break
        return lines[: self.after]

    def _work(self) -> None:
        slot = Slot()  # this worker's alone, so it stays in the CPU's cache
        while True:
            with self.changed:
                if self.stopped or self.next >= len(self.stretches):
                    return
                stretch = self.stretches[self.next]
                self.next += 1
            try:
                self._scan_stretch(stretch, slot)
            except BaseException as error:  # noqa: BLE001 - handed to the caller
                with self.changed:
                    stretch.error = input_error(error)
                    self.changed.notify_all()
                return  # every stretch before this one was taken already

    def _scan_stretch(self, stretch: _Stretch, slot: Slot) -> None:
        collector = LineCollector(self.before, self.after)
        low = self.span.block_start(stretch.first)
        for number in range(stretch.first, stretch.end):
            size, low_next = self.span.read(slot, low, number)
            last = stretch.final and number == stretch.end - 1
            batch: list[LineHit] = []
            for hit in collector.add(prepare(slot, size, self.scan, last, size)):
                batch.append(hit)
                if len(batch) == HIT_BATCH:
                    if not self._hand_on(stretch, collector, batch):
                        return
                    batch = []
            if not self._hand_on(stretch, collector, batch):
                return
            low = low_next
        with self.changed:
            if stretch.head is None:
                stretch.head = collector.head
            stretch.collector = collector
            self.changed.notify_all()

    def _hand_on(self, stretch: _Stretch, collector: LineCollector, batch: list[LineHit]) -> bool:
        """Queue a batch of the stretch's hits (and its head, once known), then wait while
        more than ``BUFFERED_HITS`` wait for the caller. False once scanning has stopped."""
        with self.changed:
            if self.stopped:
                return False
            if stretch.head is None and collector.head_complete:
                stretch.head = collector.head
                self.changed.notify_all()
            if batch:
                stretch.hits.extend(batch)
                self.changed.notify_all()
            while len(stretch.hits) > BUFFERED_HITS and not self.stopped:
                self.changed.wait()
            return not self.stopped


def scan_file(
    span: FileSpan,
    scan: Scan,
    before: int,
    after: int,
    stats: ScanStats,
    workers: int = WORKERS,
) -> Iterator[LineHit]:
    """A regular file's candidate lines in log order, each with up to ``before``/``after``
    lines of context, scanned on ``workers`` threads that start at once."""
    return _FileScan(span, scan, before, after, workers).hits(stats)
