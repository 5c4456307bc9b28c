"""What a diagnosis finds: occurrences of an entry, findings, error-like lines, inputs.

Plain classes and named tuples, not dataclasses: defining a dataclass costs start-up time
(and its module imports inspect), which ``failpedia diagnose`` is timed on.
"""

from __future__ import annotations

from typing import NamedTuple

from failpedia.signatures.index_format import IndexedEntry
from failpedia.signatures.line_rules import LogTime


class Occurrence:
    """One place an entry's signature matched: which input, line and segment, with the
    line's text, the match's span and the lines around it. ``arrival`` orders lines of
    inputs read side by side (a command's stdout and stderr) by when they came; it is 0
    for inputs read one after another."""

    __slots__ = (
        "source",
        "file",
        "line",
        "segment",
        "rank",
        "time",
        "text",
        "span",
        "before",
        "after",
        "root_cause",
        "arrival",
    )

    def __init__(
        self,
        source: int,
        file: str,
        line: int,
        segment: int,
        rank: str | None,
        time: LogTime | None,
        text: str,
        span: tuple[int, int],
        before: list[str],
        after: list[str],
        arrival: int = 0,
    ) -> None:
        self.source, self.file, self.line, self.segment = source, file, line, segment
        self.rank, self.time, self.text, self.span = rank, time, text, span
        self.before, self.after = before, after
        self.root_cause = False
        self.arrival = arrival

    @property
    def order(self) -> tuple[int, int, int, int]:
        return (self.arrival, self.source, self.line, self.segment)


class Finding:
    """Every occurrence of one entry, and where it ranks."""

    __slots__ = ("entry", "url", "occurrences", "level", "first", "first_time")

    def __init__(self, entry: IndexedEntry, url: str) -> None:
        self.entry, self.url = entry, url
        self.occurrences: list[Occurrence] = []
        self.level = 0
        self.first: Occurrence | None = None
        self.first_time: float | None = None

    @property
    def ranks(self) -> list[str]:
        return sort_ranks({item.rank for item in self.occurrences if item.rank is not None})

    @property
    def root_cause(self) -> bool:
        return any(item.root_cause for item in self.occurrences)


class ErrorLine(NamedTuple):
    """An error-like line no entry matched, with the lines around it."""

    score: int
    order: tuple[int, ...]
    file: str
    line: int
    rank: str | None
    text: str
    before: list[str] = []
    after: list[str] = []


class InputSummary:
    __slots__ = ("name", "rank", "bytes", "lines")

    def __init__(self, name: str, rank: str | None) -> None:
        self.name, self.rank = name, rank
        self.bytes = self.lines = 0


class Diagnosis(NamedTuple):
    engine: str
    inputs: list[InputSummary]
    findings: list[Finding]
    error_lines: list[ErrorLine]
    assumed_year: int
    warnings: list[str]
    problems: list[str]


def sort_ranks(ranks: set[str]) -> list[str]:
    """Numeric ranks in numeric order, then any host:pid labels by name."""
    return sorted(ranks, key=lambda rank: (0, int(rank), "") if rank.isdigit() else (1, 0, rank))


class RootCause:
    """What torchrun's "Root Cause (first observed failure)" blocks named."""

    __slots__ = ("ranks", "blocks")

    def __init__(self) -> None:
        self.ranks: set[str] = set()
        self.blocks: set[tuple[int, int]] = set()  # (source, line) inside
