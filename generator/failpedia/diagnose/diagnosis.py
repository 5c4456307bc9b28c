"""Find the catalog's failures in logs and put the one that started it all first.

Every candidate line the engine reports is split into segments (``line_rules``) and
checked with the exact patterns (``matching``, which ``failpedia run`` shares through
``live``); a segment counts once per entry. Occurrences of one entry are
grouped into one finding (the same error on 64 ranks is one finding with 64 ranks), and
findings are ordered (``ordering``) by the keys ``signatures.finding_order`` lists: role,
causal level (relations from the catalog, in both directions), what the failure does to
the run, torchrun's root cause (findings on the rank that ``ChildFailedError``'s "Root
Cause (first observed failure)" names, or inside that block), the earliest time a prefix
gave (a year-less glog time takes the earliest year the findings' other timestamps show,
or 1970), then the place of first appearance (for a command's stdout and stderr, read side
by side, the order in which their lines arrived).

A finding's time and place there are those of its earliest occurrence, the one shown
as "first at" (``Finding.first_of``): in one input, a line without a time before every
line with one (a traceback's last line, before a logger repeats it), else the earliest
time; across inputs, the earliest time. A time without a year is shown as the log wrote
it: the year assumed for it only orders it.

The site's log page implements the same rules, read from the same ``signatures.json``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from failpedia.diagnose.blocks import COMPILED, SLOW_READER_WARNING, FileSpan
from failpedia.diagnose.candidates import LineHit, ScanStats, scan_stream
from failpedia.diagnose.coarse import Engine, HyperscanEngine
from failpedia.diagnose.findings import Diagnosis, InputSummary
from failpedia.diagnose.matching import Matchers, Tally, probe_identity
from failpedia.diagnose.sources import InputError, LogInput, open_input
from failpedia.diagnose.stretches import scan_file
from failpedia.signatures.index_format import IndexFile, LazyIndex, SignatureIndex
from failpedia.signatures.line_rules import CONTEXT_LINES, ROOT_CAUSE_LINES


def diagnose(
    inputs: list[LogInput],
    index: SignatureIndex | IndexFile,
    context: int = CONTEXT_LINES,
    engine_name: str | None = None,
) -> Diagnosis:
    """Scan every input and return the ordered findings (or, if none, error-like lines).

    Given an index file not yet parsed, whose compiled probes are in the cache, the
    first input is scanned at once, and the file is parsed when the first candidate line
    needs its entries: never, for a log with none."""
    has_stdin = any(not item.rereadable for item in inputs)
    problems: list[str] = []
    summaries = [InputSummary(item.name, item.rank) for item in inputs]
    after = max(context, ROOT_CAUSE_LINES)
    lazy = LazyIndex(index)
    digest, engine, started = lazy.digest, None, None
    identity = probe_identity(digest, has_stdin)
    if engine_name != "literal" and inputs and identity is not None:
        engine = HyperscanEngine.cached(identity)
        if engine is not None:
            started = _scan(inputs[0], engine, context, after, summaries[0], problems)
    matchers = Matchers(lazy, has_stdin, engine_name, digest, engine)
    warnings = [matchers.warning] if matchers.warning else []
    if not COMPILED:
        warnings.append(SLOW_READER_WARNING)
    tally = Tally(lazy, matchers, context)
    for source, log in enumerate(inputs):
        hits = (
            started
            if source == 0 and started is not None
            else _scan(log, matchers.engine, context, after, summaries[source], problems)
        )
        for hit in hits:
            tally.add(hit, source, log)
    if not tally.findings and not tally.has_error_lines and not has_stdin and not problems:
        # Nothing matched: read the files again for the most error-like lines.
        error_matchers = Matchers(lazy, True, engine_name, digest)
        for source, log in enumerate(inputs):
            scratch = InputSummary(log.name, log.rank)
            for hit in _scan(log, error_matchers.engine, context, context, scratch, problems):
                if error_matchers.error_probes & hit.probes:
                    tally.add_error_lines(hit, source, log)
    return tally.diagnosis(matchers.engine.name, summaries, warnings, problems)


def _scan(
    log: LogInput,
    engine: Engine,
    before: int,
    after: int,
    summary: InputSummary,
    problems: list[str],
) -> Iterator[LineHit]:
    """Open ``log`` and start scanning it (a regular file's workers start at once); the
    returned iterator yields its hits, then records its size in ``summary``."""
    stats = ScanStats()
    try:
        stream = open_input(log)
    except InputError as error:
        problems.append(str(error))
        return iter(())
    try:
        span = FileSpan.of(stream)
        hits = (
            scan_file(span, engine.find, before, after, stats)
            if span is not None
            else scan_stream(stream, engine, before, after, stats)
        )
    except BaseException:
        if log.path is not None:
            stream.close()
        raise
    return _hits_then_close(hits, log, stream, stats, summary, problems)


def _hits_then_close(
    hits: Iterator[LineHit],
    log: LogInput,
    stream: BinaryIO,
    stats: ScanStats,
    summary: InputSummary,
    problems: list[str],
) -> Iterator[LineHit]:
    try:
        yield from hits
    except InputError as error:
        problems.append(f"{log.name}: {error}")
    finally:
        if log.path is not None:
            stream.close()
        summary.bytes, summary.lines = stats.bytes, stats.lines
