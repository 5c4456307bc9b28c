"""The exact pass over candidate lines, and what it adds up to: one ``Tally`` per diagnosis.

``Matchers`` are the probes of a diagnosis (every signature pattern, torchrun's root-cause
marker, and the error-like keywords where wanted) with the engine that finds them. A
``Tally`` takes each candidate line the engine reports, from whichever input, and keeps
the findings (one per entry, every occurrence), the ranks torchrun named as the root
cause, and the most error-like lines with their context; ``diagnosis`` orders it all.
``failpedia diagnose`` (files, ``diagnosis``) and ``failpedia run`` (a command's output
as it streams, ``live``) feed the same tally, so they find the same things the same way.
"""

from __future__ import annotations

import heapq
import re

from failpedia.diagnose.candidates import LineHit
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
from failpedia.diagnose.sources import LogInput
from failpedia.signatures.index_format import LazyIndex, SignatureIndex
from failpedia.signatures.line_rules import (
    BLANK,
    ERROR_LIKE,
    MAX_ERROR_LINES,
    ROOT_CAUSE_END,
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
# whenever Matchers changes which probes it makes of an index, or how they are numbered.
_PROBE_FORM = "probes-2"
# Probe numbers: torchrun's root-cause marker, the error-like keywords, then the
# signature patterns in the index's order. They do not depend on the index's size, so an
# engine read from the cache is used before the index is parsed, and a set of probes
# without the error-like keywords numbers the patterns as a set with them does.
ROOT_PROBE = 0
ERROR_PROBES = frozenset(range(ROOT_PROBE + 1, ROOT_PROBE + 1 + len(ERROR_LIKE)))
FIRST_PATTERN = ROOT_PROBE + 1 + len(ERROR_LIKE)


class Matchers:
    """The probes of one run: torchrun's root-cause marker, the error-like keywords where
    wanted, every signature pattern; and the engine that finds them."""

    def __init__(
        self,
        index: LazyIndex,
        with_error_like: bool,
        engine_name: str | None,
        digest: str | None = None,
        engine: Engine | None = None,
    ) -> None:
        self._index = index
        # Each pattern is compiled for the exact check the first time its probe fires: a
        # log touches few of them, and compiling thousands up front costs seconds.
        self._pattern_of: list[tuple[int, str]] | None = None
        self._compiled: dict[int, ExactPattern] = {}
        self.root_probe = ROOT_PROBE
        self.error_probes: frozenset[int] = ERROR_PROBES if with_error_like else frozenset()
        self.warning: str | None = None
        identity = probe_identity(digest, with_error_like)
        if engine is None and engine_name != "literal" and identity is not None:
            engine = HyperscanEngine.cached(identity)
        if engine is None:
            probes = [Probe(None, (ROOT_CAUSE_MARKER,), ROOT_PROBE)]
            if with_error_like:
                for number, (_, keywords, _) in enumerate(ERROR_LIKE, start=ROOT_PROBE + 1):
                    probes.append(Probe(None, tuple(keywords), number))
            patterns = (pattern for entry in index.get().entries for pattern in entry.patterns)
            for number, pattern in enumerate(patterns, start=FIRST_PATTERN):
                probes.append(Probe(pattern.canonical, pattern.literals, number))
            engine, self.warning = make_engine(probes, engine_name, identity)
        self.engine: Engine = engine

    @property
    def pattern_of(self) -> list[tuple[int, str]]:
        """``(entry number, canonical pattern)`` of each pattern probe, from
        ``FIRST_PATTERN`` on: the index is parsed here, when first needed."""
        if self._pattern_of is None:
            self._pattern_of = [
                (entry_index, pattern.canonical)
                for entry_index, entry in enumerate(self._index.get().entries)
                for pattern in entry.patterns
            ]
        return self._pattern_of

    def entry_of(self, probe: int) -> int | None:
        """The entry number a probe's pattern belongs to; None for the internal probes."""
        if probe < FIRST_PATTERN:
            return None
        return self.pattern_of[probe - FIRST_PATTERN][0]

    def exact(self, probe: int) -> ExactPattern:
        compiled = self._compiled.get(probe)
        if compiled is None:
            canonical = self.pattern_of[probe - FIRST_PATTERN][1]
            compiled = self._compiled[probe] = ExactPattern(canonical)
        return compiled


def probe_identity(digest: str | None, with_error_like: bool) -> str | None:
    """What names the probes ``Matchers`` makes of the index file with ``digest``, so that
    their compiled form is found in the cache before the file is parsed."""
    if digest is None:
        return None
    return "\0".join(
        [_PROBE_FORM, digest, str(with_error_like), ROOT_CAUSE_MARKER, repr(ERROR_LIKE)]
    )


class Tally:
    """What the candidate lines of every input add up to, as they are checked.

    ``source`` numbers the input a line comes from; ``arrival`` orders lines of different
    inputs that were read at the same time (a command's stdout and stderr) by when they
    came, and is 0 where inputs are read one after another."""

    def __init__(self, index: LazyIndex, matchers: Matchers, context: int) -> None:
        self._index, self.matchers, self.context = index, matchers, context
        self.findings: dict[int, Finding] = {}
        self.root = RootCause()
        self._scorers = [(score, re.compile(source, re.ASCII)) for score, _, source in ERROR_LIKE]
        self._errors: list[tuple[int, tuple[int, ...], ErrorLine]] = []  # a min-heap

    @property
    def index(self) -> SignatureIndex:
        return self._index.get()

    @property
    def has_error_lines(self) -> bool:
        return bool(self._errors)

    def add(self, hit: LineHit, source: int, log: LogInput, arrival: int = 0) -> None:
        """Check one candidate line against everything its probes stand for."""
        matchers = self.matchers
        if matchers.root_probe in hit.probes:
            self._read_root_cause(hit, source)
        if matchers.error_probes & hit.probes:
            self.add_error_lines(hit, source, log, arrival)
        self._match(hit, source, log, arrival)

    def add_error_lines(self, hit: LineHit, source: int, log: LogInput, arrival: int = 0) -> None:
        """Keep the line's error-like segments among the ``MAX_ERROR_LINES`` most
        error-like seen so far (the highest score, then the latest). Once something is
        found they are not needed: a diagnosis with findings shows none."""
        if self.findings:
            return
        context = self.context
        for number, segment in enumerate(split_line(hit.text)):
            score = max(
                (value for value, regex in self._scorers if regex.search(segment.text)), default=0
            )
            if not score:
                continue
            order = (arrival, source, hit.line_no, number)
            if len(self._errors) >= MAX_ERROR_LINES and (score, order) <= self._errors[0][:2]:
                continue
            item = ErrorLine(
                score,
                order,
                log.name,
                hit.line_no,
                segment.rank if segment.rank is not None else log.rank,
                segment.text.strip(BLANK),
                _context(hit.before[-context:] if context else []),
                _context(hit.after[:context] if context else []),
            )
            if len(self._errors) < MAX_ERROR_LINES:
                heapq.heappush(self._errors, (score, order, item))
            else:
                heapq.heapreplace(self._errors, (score, order, item))

    def diagnosis(
        self,
        engine: str,
        inputs: list[InputSummary],
        warnings: list[str],
        problems: list[str],
    ) -> Diagnosis:
        """The findings, the one that started it first; error-like lines only if none."""
        findings = list(self.findings.values())
        assumed_year = assumed_year_of(findings)
        ordered = order_findings(findings, self.index, self.root, assumed_year) if findings else []
        error_lines = sorted((item for _, _, item in self._errors), key=lambda item: item.order)
        return Diagnosis(
            engine,
            inputs,
            ordered,
            error_lines if not ordered else [],
            assumed_year,
            warnings,
            problems,
            [],
        )

    def _match(self, hit: LineHit, source: int, log: LogInput, arrival: int) -> None:
        matchers = self.matchers
        by_entry: dict[int, list[ExactPattern]] = {}
        # In the entry's order of patterns (probes are numbered in it): the first that
        # matches gives the span shown, as on the log page, whatever order a set keeps.
        for probe in sorted(hit.probes):
            entry_index = matchers.entry_of(probe)
            if entry_index is not None:
                by_entry.setdefault(entry_index, []).append(matchers.exact(probe))
        if not by_entry:
            return
        context = self.context
        segments: list[Segment] = split_line(hit.text)
        for entry_index in sorted(by_entry):
            for number, segment in enumerate(segments):
                span = next(
                    (
                        found
                        for exact in by_entry[entry_index]
                        if (found := exact.search(segment.text))
                    ),
                    None,
                )
                if span is None:
                    continue
                entry = self.index.entries[entry_index]
                finding = self.findings.get(entry_index)
                if finding is None:
                    finding = self.findings[entry_index] = Finding(entry, self.index.url(entry))
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
                        hit.before[-context:] if context else [],
                        hit.after[:context],
                        arrival,
                    ),
                    (source, hit.line_no) in self.root.blocks,
                )

    def _read_root_cause(self, hit: LineHit, source: int) -> None:
        """Read the rank named in a "Root Cause (first observed failure)" block."""
        for offset, line in enumerate(hit.after, start=1):
            text = parse_segment(display_text(line)).text
            self.root.blocks.add((source, hit.line_no + offset))
            if _ROOT_END.match(text):
                break
            match = _ROOT_RANK.match(text)
            if match:
                self.root.ranks.update(rank for rank in match.groups() if rank is not None)


def _context(lines: list[str]) -> list[str]:
    return [display_text(line) for line in lines]
