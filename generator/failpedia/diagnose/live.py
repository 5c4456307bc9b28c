"""Diagnose a command's output while it streams by: what ``failpedia run`` matches with.

``LiveDiagnosis`` takes the bytes of several streams (a command's stdout and stderr) in
chunks of any size, as they arrive, and puts each stream's complete lines through the
pipeline ``diagnose`` runs over a file: escapes removed, newlines counted and the probes
scanned (``blocks.prepare``), candidate lines with their context (``candidates``), the
exact pass and the tally (``matching``). A stream keeps only its unfinished last line
(cut, like a file's, past ``MAX_CARRY``), the lines a context still needs and what was
found, so memory stays flat however much the command prints.

Lines of different streams are ordered by when they arrived: every chunk fed gets the
next number, and a line takes the number of the chunk that completed it.

Until something is found, the error-like keywords are probes too, so that the most
error-like lines are at hand if nothing ever is. Once a finding is made they no longer
count (a diagnosis with findings shows none), and the scan goes on without them: on a
log full of near-misses of real messages, that leaves Hyperscan to reject those lines,
rather than Python.

One thread feeds a ``LiveDiagnosis``; it is not shared between threads.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from failpedia.diagnose.blocks import COMPILED, SLOW_READER_WARNING, Slot, block_end, prepare
from failpedia.diagnose.candidates import LineCollector, LineHit
from failpedia.diagnose.findings import Diagnosis, InputSummary
from failpedia.diagnose.matching import Matchers, Tally
from failpedia.diagnose.sources import LogInput
from failpedia.signatures.index_format import IndexFile, LazyIndex, SignatureIndex
from failpedia.signatures.line_rules import CONTEXT_LINES, ROOT_CAUSE_LINES


class _Stream:
    """One stream's state: its unfinished line in ``slot.raw[:filled]``, its lines so far,
    and which chunk brought the blocks that hits may still come from."""

    def __init__(self, name: str, before: int, after: int) -> None:
        self.log = LogInput(name, None, None)
        self.slot = Slot()
        self.filled = 0
        self.received = 0
        self.collector = LineCollector(before, after)
        # (lines before a block, the arrival of the chunk that completed it), oldest first.
        self.marks: deque[tuple[int, int]] = deque()

    def take(self, data: bytes | memoryview) -> int:
        """Append ``data`` to the unfinished line; how many bytes are now whole lines
        (0 while the line goes on)."""
        end = self.filled + len(data)
        raw = self.slot.raw
        if len(raw) < end:  # grow in place: the carried line stays where it is
            raw.extend(bytes(max(end, 2 * len(raw)) - len(raw)))
        raw[self.filled : end] = data
        self.filled = end
        self.received += len(data)
        return block_end(raw, end)

    def drop(self, size: int) -> None:
        """Forget the first ``size`` bytes, once scanned; the rest moves to the front."""
        raw = self.slot.raw
        rest = self.filled - size
        raw[:rest] = raw[size : self.filled]
        self.filled = rest

    def arrival_of(self, line_no: int) -> int:
        """The arrival of the chunk that completed line ``line_no`` (1-based). Hits come
        in line order, so the marks of earlier blocks are no longer needed."""
        self.forget_marks_before(line_no)
        return self.marks[0][1]

    def forget_marks_before(self, line_no: int) -> None:
        """Drop the marks of blocks that end before line ``line_no``."""
        marks = self.marks
        while len(marks) > 1 and marks[1][0] < line_no:
            marks.popleft()

    def summary(self) -> InputSummary:
        summary = InputSummary(self.log.name, None)
        collector = self.collector
        summary.bytes = self.received
        summary.lines = collector.lines + (1 if collector.ends_mid_line else 0)
        return summary


class LiveDiagnosis:
    """A diagnosis of streams named ``names``, fed chunk by chunk (``feed``), ordered and
    returned when they end (``finish``). The probes' engine is read from the cache or
    compiled when this is made; the index is parsed when a line first needs it."""

    def __init__(
        self,
        index: SignatureIndex | IndexFile,
        names: Sequence[str],
        context: int = CONTEXT_LINES,
        engine_name: str | None = None,
    ) -> None:
        lazy = LazyIndex(index)
        digest = lazy.digest
        self._index, self._engine_name, self._digest = lazy, engine_name, digest
        # One pass, as for standard input: the error-like lines are collected on the way.
        self._matchers = Matchers(lazy, True, engine_name, digest)
        self._find = self._matchers.engine.find
        self._error_probes = True  # whether _find still reports the error-like keywords
        self._tally = Tally(lazy, self._matchers, context)
        after = max(context, ROOT_CAUSE_LINES)
        self._streams = [_Stream(name, context, after) for name in names]
        self._arrivals = 0

    def feed(self, stream: int, data: bytes | memoryview) -> None:
        """Take the next bytes of stream number ``stream`` and check its lines now whole."""
        if not data:
            return
        self._arrivals += 1
        state = self._streams[stream]
        size = state.take(data)
        if size:
            self._scan(stream, state, size, last=False)
            state.drop(size)

    def finish(self) -> Diagnosis:
        """Every stream has ended: check what is left and order what was found."""
        for number, state in enumerate(self._streams):
            if state.filled:
                self._scan(number, state, state.filled, last=True)
                state.drop(state.filled)
            waiting, state.collector.waiting = state.collector.waiting, []
            for hit in waiting:
                self._add(number, state, hit)
        warnings = [self._matchers.warning] if self._matchers.warning else []
        if not COMPILED:
            warnings.append(SLOW_READER_WARNING)
        return self._tally.diagnosis(
            self._matchers.engine.name,
            [state.summary() for state in self._streams],
            warnings,
            [],
        )

    def _scan(self, number: int, state: _Stream, size: int, last: bool) -> None:
        collector = state.collector
        block = prepare(state.slot, size, self._find, last, size)
        state.marks.append((collector.lines, self._arrivals))
        for hit in collector.add(block):
            self._add(number, state, hit)
        waiting = collector.waiting
        state.forget_marks_before(waiting[0].line_no if waiting else collector.lines + 1)
        if self._error_probes and self._tally.findings:
            self._stop_looking_for_error_lines()

    def _stop_looking_for_error_lines(self) -> None:
        """Scan on with the signatures and the root-cause marker alone: their probes are
        numbered as before, so the tally reads the hits as it did."""
        self._error_probes = False
        try:
            matchers = Matchers(self._index, False, self._engine_name, self._digest)
        except Exception:  # noqa: BLE001 - the engine at hand still finds everything
            return
        self._find = matchers.engine.find

    def _add(self, number: int, state: _Stream, hit: LineHit) -> None:
        self._tally.add(hit, number, state.log, state.arrival_of(hit.line_no))
