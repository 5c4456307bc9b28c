"""What a diagnosis finds: occurrences of an entry, findings, error-like lines, inputs.

Plain classes and named tuples, not dataclasses: defining a dataclass costs start-up time
(and its module imports inspect), which ``failpedia diagnose`` is timed on.
"""

from __future__ import annotations

from typing import NamedTuple

from failpedia.signatures.index_format import IndexedEntry
from failpedia.signatures.line_rules import MAX_LOCATIONS, LogTime


class Occurrence:
    """One place an entry's signature matched: which input, line and segment, with the
    line's text, the match's span and the lines around it."""

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
    ) -> None:
        self.source, self.file, self.line, self.segment = source, file, line, segment
        self.rank, self.time, self.text, self.span = rank, time, text, span
        self.before, self.after = before, after

    @property
    def order(self) -> tuple[int, int, int]:
        return (self.source, self.line, self.segment)


# A year-less time (glog) is compared in the year assumed at the end; only whether that
# year is a leap year changes how two such times compare, so the earliest under each kind
# of year is kept until then.
LEAP_YEAR, COMMON_YEAR = 2000, 1970


def _earlier(item: Occurrence, kept: Occurrence | None, year: int) -> bool:
    """Whether ``item``, which comes after ``kept`` in the log, is earlier by time."""
    if kept is None:
        return True
    assert item.time is not None and kept.time is not None
    return item.time.seconds(year) < kept.time.seconds(year)


class Finding:
    """Every occurrence of one entry, counted, and where it ranks.

    Occurrences arrive in log order and are not all kept, so that memory stays flat
    however many lines match: the count and the ranks are exact, the first
    ``MAX_LOCATIONS`` occurrences are listed, and the candidates for the first by the
    ordering rules are kept (the first without a time, the earliest with a year, the
    earliest without one under a leap year and under a common year)."""

    __slots__ = (
        "entry",
        "url",
        "count",
        "rank_set",
        "locations",
        "in_root_block",
        "min_year",
        "untimed",
        "dated",
        "leap",
        "common",
        "level",
        "first",
        "first_time",
        "root_cause",
    )

    def __init__(self, entry: IndexedEntry, url: str) -> None:
        self.entry, self.url = entry, url
        self.count = 0
        self.rank_set: set[str] = set()
        self.locations: list[Occurrence] = []
        self.in_root_block = False
        self.min_year: int | None = None
        self.untimed: Occurrence | None = None
        self.dated: Occurrence | None = None
        self.leap: Occurrence | None = None
        self.common: Occurrence | None = None
        self.level = 0
        self.first: Occurrence | None = None
        self.first_time: float | None = None
        self.root_cause = False

    def add(self, item: Occurrence, in_root_block: bool) -> None:
        """Count an occurrence that comes after every one added before."""
        self.count += 1
        if item.rank is not None:
            self.rank_set.add(item.rank)
        self.in_root_block = self.in_root_block or in_root_block
        if len(self.locations) < MAX_LOCATIONS:
            self.locations.append(item)
        time = item.time
        if time is None:
            self.untimed = self.untimed or item
        elif time.year is not None:
            self.min_year = time.year if self.min_year is None else min(self.min_year, time.year)
            if _earlier(item, self.dated, time.year):
                self.dated = item
        else:
            if _earlier(item, self.leap, LEAP_YEAR):
                self.leap = item
            if _earlier(item, self.common, COMMON_YEAR):
                self.common = item

    def candidates(self, assumed_year: int) -> list[Occurrence]:
        """The occurrences one of which is first, in the year assumed for year-less times."""
        leap = assumed_year % 4 == 0 and (assumed_year % 100 != 0 or assumed_year % 400 == 0)
        kept = [self.untimed, self.dated, self.leap if leap else self.common]
        return [item for item in kept if item is not None]

    @property
    def ranks(self) -> list[str]:
        return sort_ranks(self.rank_set)


class ErrorLine(NamedTuple):
    score: int
    order: tuple[int, int, int]
    file: str
    line: int
    rank: str | None
    text: str


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
