"""Find the catalog's failures in logs and put the one that started it all first.

Every candidate line the engine reports is split into segments (``logline``) and checked
with the exact patterns; a segment counts once per entry. Occurrences of one entry are
grouped into one finding (the same error on 64 ranks is one finding with 64 ranks), and
findings are ordered by, in turn:

1. role: entries that initiate a failure before those that follow from one;
2. causal level: an entry comes after every found entry that causes it (relations from
   the catalog, in both directions);
3. torchrun's root cause: findings seen on the rank that ``ChildFailedError``'s "Root
   Cause (first observed failure)" names, or inside that block, come first;
4. the earliest time a prefix gave (a year-less glog time takes the earliest year the
   findings' other timestamps show, or 1970);
5. the order of first appearance in the input (``ordering``).

The site's log page implements the same rules over the same ``signatures.json``.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterator
from typing import BinaryIO

from failpedia.diagnose.blocks import COMPILED, FileSpan
from failpedia.diagnose.candidates import LineHit, ScanStats, scan_stream
from failpedia.diagnose.coarse import Engine, HyperscanEngine, Probe, make_engine
from failpedia.diagnose.exact import ExactPattern
from failpedia.diagnose.findings import (
    Diagnosis,
    ErrorLine,
    Finding,
    InputSummary,
    Occurrence,
    RootCause,
)
from failpedia.diagnose.ordering import assumed_year_of, order_findings
from failpedia.diagnose.sources import InputError, LogInput, open_input
from failpedia.diagnose.stretches import scan_file
from failpedia.signatures.index_format import IndexFile, SignatureIndex
from failpedia.signatures.line_rules import (
    BLANK,
    ERROR_LIKE,
    MAX_ERROR_LINES,
    ROOT_CAUSE_END,
    ROOT_CAUSE_LINES,
    ROOT_CAUSE_MARKER,
    ROOT_CAUSE_RANK,
    Segment,
    display_text,
    parse_segment,
    split_line,
)

_ROOT_RANK = re.compile(ROOT_CAUSE_RANK, re.ASCII)
_ROOT_END = re.compile(ROOT_CAUSE_END, re.ASCII)
# Part of the name under which an index file's compiled probes are cached: change it
# whenever _Matchers changes which probes it makes of an index, or in which order.
_PROBE_FORM = "probes-1"


class _Matchers:
    """The probes of one run: every signature pattern, then the internal ones."""

    def __init__(
        self,
        index: SignatureIndex,
        with_error_like: bool,
        engine_name: str | None,
        digest: str | None = None,
        engine: Engine | None = None,
    ) -> None:
        # Each pattern is compiled for the exact check the first time its probe fires: a
        # log touches few of them, and compiling thousands up front costs seconds.
        self.pattern_of: list[tuple[int, str]] = []
        self._compiled: dict[int, ExactPattern] = {}
        probes: list[Probe] = []
        for entry_index, entry in enumerate(index.entries):
            for pattern in entry.patterns:
                probes.append(Probe(pattern.canonical, pattern.literals))
                self.pattern_of.append((entry_index, pattern.canonical))
        self.root_probe = len(probes)
        probes.append(Probe(None, (ROOT_CAUSE_MARKER,)))
        self.error_probes: set[int] = set()
        if with_error_like:
            for _, literals, _ in ERROR_LIKE:
                self.error_probes.add(len(probes))
                probes.append(Probe(None, tuple(literals)))
        self.warning: str | None = None
        if engine is None:
            engine, self.warning = make_engine(
                probes, engine_name, _probe_identity(digest, with_error_like)
            )
        self.engine: Engine = engine

    def exact(self, probe: int) -> ExactPattern:
        compiled = self._compiled.get(probe)
        if compiled is None:
            compiled = self._compiled[probe] = ExactPattern(self.pattern_of[probe][1])
        return compiled


def _probe_identity(digest: str | None, with_error_like: bool) -> str | None:
    """What names the probes ``_Matchers`` makes of the index file with ``digest``, so that
    their compiled form is found in the cache before the file is parsed."""
    if digest is None:
        return None
    return "\0".join(
        [_PROBE_FORM, digest, str(with_error_like), ROOT_CAUSE_MARKER, repr(ERROR_LIKE)]
    )


def _error_scorers() -> list[tuple[int, re.Pattern[str]]]:
    return [(score, re.compile(source, re.ASCII)) for score, _, source in ERROR_LIKE]


def diagnose(
    inputs: list[LogInput],
    index: SignatureIndex | IndexFile,
    context: int = 3,
    engine_name: str | None = None,
) -> Diagnosis:
    """Scan every input and return the ordered findings (or, if none, error-like lines).

    Given an index file not yet parsed, whose compiled probes are in the cache, the
    first input is already being scanned while the file is parsed."""
    has_stdin = any(not item.rereadable for item in inputs)
    problems: list[str] = []
    summaries = [InputSummary(item.name, item.rank) for item in inputs]
    after = max(context, ROOT_CAUSE_LINES)
    digest, engine, started = None, None, None
    if isinstance(index, IndexFile):
        digest = index.digest
        identity = _probe_identity(digest, has_stdin)
        if engine_name != "literal" and inputs and identity is not None:
            engine = HyperscanEngine.cached(identity)
            if engine is not None:
                started = _scan(inputs[0], engine, context, after, summaries[0], problems)
        index = index.load()
    matchers = _Matchers(index, has_stdin, engine_name, digest, engine)
    warnings = [matchers.warning] if matchers.warning else []
    if not COMPILED:
        warnings.append(
            "the compiled log reader (failpedia.diagnose._logbytes) was not built when "
            "failpedia was installed; reading logs in Python, several times slower"
        )
    findings: dict[int, Finding] = {}
    root = RootCause()
    scorers = _error_scorers()
    error_heap: list[tuple[int, tuple[int, int, int], ErrorLine]] = []
    for source, log in enumerate(inputs):
        hits = (
            started
            if source == 0 and started is not None
            else _scan(log, matchers.engine, context, after, summaries[source], problems)
        )
        for hit in hits:
            if matchers.root_probe in hit.probes:
                _read_root_cause(hit, source, root)
            if matchers.error_probes & hit.probes:
                _collect_error_lines(hit, source, log, scorers, error_heap)
            _match_hit(hit, source, log, index, matchers, findings, root, context)
    assumed_year = assumed_year_of(list(findings.values()))
    ordered = order_findings(list(findings.values()), index, root, assumed_year)
    if not ordered and not error_heap and not has_stdin and not problems:
        error_matchers = _Matchers(index, True, engine_name, digest)
        for source, log in enumerate(inputs):
            scratch = InputSummary(log.name, log.rank)
            for hit in _scan(log, error_matchers.engine, 0, 0, scratch, problems):
                if error_matchers.error_probes & hit.probes:
                    _collect_error_lines(hit, source, log, scorers, error_heap)
    error_lines = sorted((item for _, _, item in error_heap), key=lambda item: item.order)
    return Diagnosis(
        matchers.engine.name,
        summaries,
        ordered,
        error_lines if not ordered else [],
        assumed_year,
        warnings,
        problems,
    )


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


def _match_hit(
    hit: LineHit,
    source: int,
    log: LogInput,
    index: SignatureIndex,
    matchers: _Matchers,
    findings: dict[int, Finding],
    root: RootCause,
    context: int,
) -> None:
    by_entry: dict[int, list[ExactPattern]] = {}
    for probe in hit.probes:
        if probe < len(matchers.pattern_of):
            entry_index = matchers.pattern_of[probe][0]
            by_entry.setdefault(entry_index, []).append(matchers.exact(probe))
    if not by_entry:
        return
    segments: list[Segment] = split_line(hit.text)
    for entry_index in sorted(by_entry):
        for number, segment in enumerate(segments):
            span = next(
                (found for exact in by_entry[entry_index] if (found := exact.search(segment.text))),
                None,
            )
            if span is None:
                continue
            entry = index.entries[entry_index]
            finding = findings.get(entry_index)
            if finding is None:
                finding = findings[entry_index] = Finding(entry, index.url(entry))
            finding.add(
                Occurrence(
                    source,
                    log.name,
                    hit.line_no,
                    number,
                    segment.rank if segment.rank is not None else log.rank,
                    segment.time,
                    segment.text,
                    span,
                    [display_text(line) for line in hit.before[-context:]] if context else [],
                    [display_text(line) for line in hit.after[:context]] if context else [],
                ),
                (source, hit.line_no) in root.blocks,
            )


def _read_root_cause(hit: LineHit, source: int, root: RootCause) -> None:
    """Read the rank named in a "Root Cause (first observed failure)" block."""
    for offset, line in enumerate(hit.after, start=1):
        text = parse_segment(display_text(line)).text
        root.blocks.add((source, hit.line_no + offset))
        if _ROOT_END.match(text):
            break
        match = _ROOT_RANK.match(text)
        if match:
            root.ranks.update(rank for rank in match.groups() if rank is not None)


def _collect_error_lines(
    hit: LineHit,
    source: int,
    log: LogInput,
    scorers: list[tuple[int, re.Pattern[str]]],
    heap: list[tuple[int, tuple[int, int, int], ErrorLine]],
) -> None:
    for number, segment in enumerate(split_line(hit.text)):
        score = max((value for value, regex in scorers if regex.search(segment.text)), default=0)
        if not score:
            continue
        order = (source, hit.line_no, number)
        rank = segment.rank if segment.rank is not None else log.rank
        item = ErrorLine(score, order, log.name, hit.line_no, rank, segment.text.strip(BLANK))
        if len(heap) < MAX_ERROR_LINES:
            heapq.heappush(heap, (score, order, item))
        elif (score, order) > heap[0][:2]:
            heapq.heapreplace(heap, (score, order, item))
