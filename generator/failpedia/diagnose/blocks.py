"""Cut a log's bytes into blocks that end at a line end, and prepare each for scanning.

A block ends at its last ``\\n``; the unfinished line is carried to the next block (a
line longer than ``MAX_CARRY`` is cut at a ``\\r``, or anywhere). Each block has its ANSI
escape sequences removed, its newlines counted and the engine's scan run over it, so
memory stays flat whatever the file's size.

``FileSpan`` reads a regular file's blocks by offset, so that stretches of one file can be
read and scanned on several threads at once (``stretches``). ``BlockReader`` reads a
stream (gzip, standard input) in order and prepares its blocks on ``WORKERS`` threads: the
C helpers in ``_logbytes`` and Hyperscan release the GIL, so they use every core. Blocks
live in buffers that are reused, because a fresh buffer per block costs a page fault
every 4 KiB, more than the work done on it.
"""

from __future__ import annotations

import io
import os
import queue
import re
import stat
import threading
from collections.abc import Callable, Iterator
from typing import BinaryIO, NamedTuple, cast

from failpedia.diagnose.sources import DECOMPRESS_ERRORS, InputError
from failpedia.signatures import line_rules
from failpedia.signatures.line_rules import ANSI

BLOCK_SIZE = 2 << 20
MAX_CARRY = line_rules.MAX_CARRY  # a module global here, so that tests can shrink it
PROBE_SIZE = 4096  # how much a worker reads at a time to find where its block starts
READ_PIECE = 64 << 10  # how much of a stream one read takes
WORKERS = max(
    1,
    min(
        8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    ),
)
SLOTS = 2 * WORKERS + 1  # one being filled and one waiting per worker, one being read

Scan = Callable[[memoryview], list[tuple[int, int]]]

_ANSI_BYTES = re.compile(ANSI.encode("ascii"))
_READ_ERRORS: tuple[type[BaseException], ...] = (OSError, *DECOMPRESS_ERRORS)


def strip_and_count_python(data: memoryview, out: bytearray) -> tuple[int, int]:
    """``_logbytes.strip_and_count`` in Python: the same results, several times slower."""
    raw = bytes(data)
    if b"\x1b" not in raw:
        return -1, raw.count(b"\n")
    clean = _ANSI_BYTES.sub(b"", raw)
    out[: len(clean)] = clean
    return len(clean), clean.count(b"\n")


def count_newlines_python(data: memoryview) -> int:
    return bytes(data).count(b"\n")


try:
    from failpedia.diagnose._logbytes import (  # type: ignore[import-untyped]
        count_newlines,
        strip_and_count,
    )

    COMPILED = True
except ImportError:  # built without a C compiler
    COMPILED = False
    strip_and_count, count_newlines = strip_and_count_python, count_newlines_python

# What a diagnosis warns when the C helpers are missing.
SLOW_READER_WARNING = (
    "the compiled log reader (failpedia.diagnose._logbytes) was not built when "
    "failpedia was installed; reading logs in Python, several times slower"
)


class Candidate(NamedTuple):
    """A line the scan flagged: where it starts in the block, how many lines of the block
    come before it, and which probes fired on it."""

    start: int
    lines_before: int
    probes: frozenset[int]


class Block(NamedTuple):
    """``data[:size]`` is one block of the log, ANSI removed; ``newlines`` counts its
    ``\\n``; ``candidates`` are the lines the scan flagged, in order; ``last`` marks the
    end of the log. ``data`` may be a reused buffer: read it before handing the block back
    (``BlockReader.release``) or reading the next one."""

    data: bytearray
    size: int
    newlines: int
    candidates: list[Candidate]
    last: bool
    read_bytes: int
    slot: Slot | None = None


class Slot:
    """A buffer that a read fills and that escapes are then removed from, in place."""

    def __init__(self) -> None:
        self.raw = bytearray(2 * BLOCK_SIZE)

    def fit(self, size: int) -> None:
        """Make room for a block of ``size`` bytes."""
        if len(self.raw) < size:
            self.raw = bytearray(size)


def prepare(slot: Slot, size: int, scan: Scan, last: bool, read_bytes: int) -> Block:
    """Strip, count and scan the block of ``size`` bytes that a read left in ``slot.raw``
    (stripped in place: one buffer per worker stays in the CPU's cache better than two)."""
    data = slot.raw
    stripped, newlines = strip_and_count(memoryview(data)[:size], data)
    size = size if stripped < 0 else stripped
    view = memoryview(data)[:size]
    candidates = _candidates(data, scan(view))
    return Block(data, size, newlines, candidates, last, read_bytes, slot)


def block_end(data: bytearray, total: int) -> int:
    """Where the block ends: after its last ``\\n``; or 0, to carry the unfinished line
    on, until it passes ``MAX_CARRY`` and is cut after its last ``\\r`` (a progress bar
    redrawn for hours) or, holding none, anywhere."""
    cut = data.rfind(b"\n", 0, total) + 1
    if cut == 0 and total > MAX_CARRY:
        cut = data.rfind(b"\r", 0, total) + 1 or total
    return cut


def input_error(error: BaseException) -> BaseException:
    """A read or decompression failure as an ``InputError`` the CLI reports by name."""
    if isinstance(error, DECOMPRESS_ERRORS):
        return InputError(f"cannot decompress: {error}")
    if isinstance(error, OSError):
        return InputError(f"cannot read: {error.strerror or error}")
    return error


class FileSpan(NamedTuple):
    """A regular file, read by offset, so that any thread can read any of its blocks.
    Block ``k`` spans from ``line_start(k * BLOCK_SIZE)`` to
    ``line_start((k + 1) * BLOCK_SIZE)``, which a reader finds on its own."""

    fd: int
    start: int
    end: int

    @classmethod
    def of(cls, stream: BinaryIO) -> FileSpan | None:
        """The span from the stream's position to the end, if it is a regular file."""
        if not hasattr(os, "preadv") or not isinstance(stream, io.BufferedReader):
            return None
        try:
            fd = stream.fileno()
            info = os.fstat(fd)
            start = stream.tell()
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(info.st_mode) or info.st_size <= start:
            return None
        return cls(fd, start, info.st_size)

    @property
    def blocks(self) -> int:
        return -(-(self.end - self.start) // BLOCK_SIZE)

    def block_start(self, number: int) -> int:
        """Where block ``number`` starts in the file."""
        return self.line_start(number * BLOCK_SIZE)

    def line_start(self, offset: int) -> int:
        """The first line start at or after ``offset`` from the start (after the first
        ``\\n`` from ``offset - 1`` on); a line longer than ``MAX_CARRY`` is cut
        ``MAX_CARRY`` bytes on. Always grows with ``offset``, so blocks never overlap."""
        position = self.start + offset
        if position <= self.start or position >= self.end:
            return min(max(position, self.start), self.end)
        cursor = position - 1
        limit = min(self.end, cursor + MAX_CARRY)
        while cursor < limit:
            chunk = os.pread(self.fd, min(PROBE_SIZE, limit - cursor), cursor)
            if not chunk:  # truncated since it was opened
                return cursor
            found = chunk.find(b"\n")
            if found != -1:
                return cursor + found + 1
            cursor += len(chunk)
        return limit

    def read(self, slot: Slot, low: int, number: int) -> tuple[int, int]:
        """Read block ``number``, which starts at ``low`` (its ``block_start``), into
        ``slot``: how many bytes it holds, and where the next block starts."""
        high = self.block_start(number + 1)
        size = max(0, high - low)
        slot.fit(size)
        view = memoryview(slot.raw)
        done = 0
        while done < size:
            got = os.preadv(self.fd, [view[done:size]], low + done)
            if got == 0:  # truncated since it was opened
                break
            done += got
        return done, high


class _Pending:
    """A block of a stream, in log order, whose preparation may still be running on a
    worker: the stream's first ``size`` bytes in the slot."""

    def __init__(self, size: int = 0, read: int = 0, last: bool = False) -> None:
        self.size, self.read, self.last = size, read, last
        self.done = threading.Event()
        self.block: Block | None = None
        self.error: BaseException | None = None

    def fail(self, error: BaseException) -> _Pending:
        self.error = error
        self.done.set()
        return self


class BlockReader:
    """Iterate over a stream's blocks in order, each prepared and scanned by a worker.

    The stream is read in order under a lock; the worker that read a block prepares it
    after letting go of the lock, while the other reads the next."""

    def __init__(self, stream: BinaryIO, scan: Scan, workers: int = WORKERS) -> None:
        # Every stream diagnose opens (a file, gzip, standard input) is buffered binary I/O.
        self._stream = cast(io.BufferedIOBase, stream)
        self._scan = scan
        self._lock = threading.Lock()  # the order of blocks, the stream's reads and carry
        self._carry = b""
        self._finished = False
        self._error: BaseException | None = None  # what ended the stream early
        self._free: queue.LifoQueue[Slot | None] = queue.LifoQueue()  # warmest buffer first
        self._slots = 0  # made when first needed: a small log needs one
        self._ready: queue.Queue[_Pending | None] = queue.Queue()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._work, name=f"failpedia-scan-{number}", daemon=True)
            for number in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def __iter__(self) -> Iterator[Block]:
        try:
            while True:
                pending = self._ready.get()
                if pending is None:
                    return
                pending.done.wait()
                if pending.error is not None:
                    raise pending.error
                assert pending.block is not None
                yield pending.block
        finally:
            self.close()

    def release(self, block: Block) -> None:
        """Give a block's buffers back to be filled again."""
        self._free.put(block.slot)

    def close(self) -> None:
        self._stop.set()
        for _ in self._threads:
            self._free.put(None)

    def _take_slot(self) -> Slot | None:
        try:
            return self._free.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if self._slots < SLOTS:
                self._slots += 1
                return Slot()
        return self._free.get()

    def _work(self) -> None:
        while True:
            slot = self._take_slot()
            if slot is None or self._stop.is_set():
                return
            with self._lock:
                if self._finished:
                    return
                try:
                    pending = self._fill(slot)
                except BaseException as error:  # noqa: BLE001 - handed to the consumer
                    self._finished = True
                    self._ready.put(_Pending().fail(input_error(error)))
                    self._ready.put(None)
                    return
                if pending is None:
                    return
            try:  # outside the lock: the other workers read meanwhile
                pending.block = prepare(slot, pending.size, self._scan, pending.last, pending.read)
            except BaseException as error:  # noqa: BLE001 - handed to the consumer
                pending.fail(input_error(error))
                continue
            pending.done.set()

    def _fill(self, slot: Slot) -> _Pending | None:
        """Read the next block of a stream into ``slot`` (holding the lock) and queue its
        place in the order. None at the end of the stream with nothing left to scan."""
        carry, read_total = self._carry, 0
        while True:
            slot.fit(len(carry) + BLOCK_SIZE)
            raw = slot.raw
            raw[: len(carry)] = carry
            read, last = self._read(memoryview(raw)[len(carry) : len(carry) + BLOCK_SIZE])
            read_total += read
            total = len(carry) + read
            cut = total if last else block_end(raw, total)
            carry = bytes(raw[cut:total])
            if cut or last:
                break
        self._carry = carry
        if last:
            self._finished = True
        if cut:
            pending: _Pending | None = _Pending(size=cut, read=read_total, last=last)
            self._ready.put(pending)
        else:
            pending = None
        if last:  # after the last block, the error that ended the stream, if one did
            if self._error is not None:
                self._ready.put(_Pending().fail(self._error))
            self._ready.put(None)
        return pending

    def _read(self, view: memoryview) -> tuple[int, bool]:
        """Fill ``view`` from the stream: how many bytes, and whether the stream ended.

        In pieces of at most ``READ_PIECE`` bytes, one buffered read each: where a gzip
        stream is damaged, a read that fails loses what it decompressed, so the log is
        scanned up to the last piece before the damage, as its end; the error is kept, to
        be raised after it."""
        filled = 0
        while filled < len(view):
            try:
                got = self._stream.readinto1(view[filled : filled + READ_PIECE])
            except _READ_ERRORS as error:
                self._error = input_error(error)
                return filled, True
            if not got:
                return filled, True
            filled += got
        return filled, False


def _candidates(data: bytearray, hits: list[tuple[int, int]]) -> list[Candidate]:
    """Group the scan's hits by line, in order, each line numbered within the block (here,
    on the worker, rather than on the thread that reads the results)."""
    if not hits:
        return []
    by_start: dict[int, set[int]] = {}
    for position, probe in hits:
        by_start.setdefault(data.rfind(b"\n", 0, position) + 1, set()).add(probe)
    result = []
    view = memoryview(data)
    counted_to = lines = 0
    shared: dict[frozenset[int], frozenset[int]] = {}  # lines that match alike share one set
    for start in sorted(by_start):
        lines += count_newlines(view[counted_to:start])
        counted_to = start
        probes = frozenset(by_start[start])
        result.append(Candidate(start, lines, shared.setdefault(probes, probes)))
    return result
