"""Cut a log's byte stream into blocks that end at a line end, and scan them in parallel.

A block ends at its last ``\\n``; the unfinished line is carried to the next block (a
line longer than ``MAX_CARRY`` is cut at a ``\\r``, or anywhere). Each block has its ANSI
escape sequences removed, its newlines counted and the engine's scan run over it, so
memory stays flat whatever the file's size.

Blocks are read in order under a lock; removing escapes, counting and scanning then run
on ``WORKERS`` threads at once: the C helpers in ``_logbytes`` and Hyperscan release the
GIL, so they use every core. The consumer receives blocks in log order. Blocks live in a
few buffers that are reused, because a fresh buffer per block costs a page fault every
4 KiB, more than the work done on it.
"""

from __future__ import annotations

import gzip
import queue
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from .logline import ANSI
from .logsource import InputError

BLOCK_SIZE = 1 << 20
MAX_CARRY = 8 << 20
WORKERS = 2
SLOTS = 2 * WORKERS + 1  # one being filled and one waiting per worker, one being read

Scan = Callable[[memoryview], list[tuple[int, int]]]

_ANSI_BYTES = re.compile(ANSI.encode("ascii"))


def strip_ansi_python(data: memoryview, out: bytearray) -> int:
    """``_logbytes.strip_ansi`` in Python: the same results, several times slower."""
    raw = bytes(data)
    if b"\x1b" not in raw:
        return -1
    clean = _ANSI_BYTES.sub(b"", raw)
    out[: len(clean)] = clean
    return len(clean)


def count_newlines_python(data: memoryview) -> int:
    return bytes(data).count(b"\n")


try:
    from ._logbytes import count_newlines, strip_ansi

    COMPILED = True
except ImportError:  # built without a C compiler
    COMPILED = False
    strip_ansi, count_newlines = strip_ansi_python, count_newlines_python


@dataclass
class Block:
    """``data[:size]`` is one block of the log, ANSI removed; ``newlines`` counts its
    ``\\n``; ``hits`` is what the scan found in it; ``last`` marks the end of the log.
    ``data`` is a reused buffer: read it before handing the block back with
    ``BlockReader.release``."""

    data: bytearray
    size: int
    newlines: int
    hits: list[tuple[int, int]]
    last: bool
    read_bytes: int
    slot: _Slot


class _Slot:
    """A buffer that a read fills and one for its stripped copy (never longer)."""

    def __init__(self) -> None:
        self.raw = bytearray(2 * BLOCK_SIZE)
        self.clean = bytearray(2 * BLOCK_SIZE)

    def fit(self, carry: int) -> None:
        """Make room for ``carry`` carried bytes and a full read after them."""
        if len(self.raw) < carry + BLOCK_SIZE:
            self.raw = bytearray(carry + BLOCK_SIZE)
            self.clean = bytearray(carry + BLOCK_SIZE)


class _Pending:
    """A block in log order whose preparation may still be running on a worker."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.block: Block | None = None
        self.error: BaseException | None = None

    def fail(self, error: BaseException) -> _Pending:
        self.error = error
        self.done.set()
        return self


def _cut(data: bytearray, total: int) -> int:
    """Where the block ends: after its last ``\\n``; or 0, to carry the unfinished line
    on, until it passes ``MAX_CARRY`` and is cut after its last ``\\r`` (a progress bar
    redrawn for hours) or, holding none, anywhere."""
    cut = data.rfind(b"\n", 0, total) + 1
    if cut == 0 and total > MAX_CARRY:
        cut = data.rfind(b"\r", 0, total) + 1 or total
    return cut


def _input_error(error: BaseException) -> BaseException:
    if isinstance(error, (OSError, EOFError, gzip.BadGzipFile)):
        return InputError(f"cannot decompress: {error}")
    return error


class BlockReader:
    """Iterate over a stream's blocks in order, each prepared and scanned by a worker."""

    def __init__(self, stream: BinaryIO, scan: Scan, workers: int = WORKERS) -> None:
        self._stream = stream
        self._scan = scan
        self._lock = threading.Lock()  # reads, the carry and the order of blocks
        self._carry = b""
        self._finished = False
        self._free: queue.Queue[_Slot | None] = queue.Queue()
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

    def _take_slot(self) -> _Slot | None:
        try:
            return self._free.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if self._slots < SLOTS:
                self._slots += 1
                return _Slot()
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
                    taken = self._fill(slot)
                except BaseException as error:  # noqa: BLE001 - handed to the consumer
                    self._finished = True
                    self._ready.put(_Pending().fail(_input_error(error)))
                    self._ready.put(None)
                    return
                if taken is None:
                    return
                pending, size, read, last = taken
            try:
                pending.block = self._prepare(slot, size, read, last)
            except BaseException as error:  # noqa: BLE001 - handed to the consumer
                pending.fail(error)
                continue
            pending.done.set()

    def _fill(self, slot: _Slot) -> tuple[_Pending, int, int, bool] | None:
        """Read the next block into ``slot`` (holding the lock); queue its place in the
        order. None at the end of the stream with nothing left to scan."""
        carry, read_total = self._carry, 0
        while True:
            slot.fit(len(carry))
            raw = slot.raw
            raw[: len(carry)] = carry
            read = self._stream.readinto(memoryview(raw)[len(carry) : len(carry) + BLOCK_SIZE])
            read_total += read
            total = len(carry) + read
            last = read == 0
            cut = total if last else _cut(raw, total)
            carry = bytes(raw[cut:total])
            if cut or last:
                break
        self._carry = carry
        if last:
            self._finished = True
        if cut == 0:
            self._ready.put(None)
            return None
        pending = _Pending()
        self._ready.put(pending)
        if last:
            self._ready.put(None)
        return pending, cut, read_total, last

    def _prepare(self, slot: _Slot, size: int, read: int, last: bool) -> Block:
        stripped = strip_ansi(memoryview(slot.raw)[:size], slot.clean)
        data = slot.raw if stripped < 0 else slot.clean
        size = size if stripped < 0 else stripped
        view = memoryview(data)[:size]
        return Block(data, size, count_newlines(view), self._scan(view), last, read, slot)
