"""What a diagnosis finds: occurrences of an entry, findings, error-like lines, inputs.

Plain classes and named tuples, not dataclasses: defining a dataclass costs start-up time
(and its module imports inspect), which ``failpedia diagnose`` is timed on.
"""

from __future__ import annotations

from typing import NamedTuple

from failpedia.signatures.index_format import IndexedEntry
from failpedia.signatures.line_rules import MAX_LOCATIONS, LogTime, display_text


class Occurrence:
    """One place an entry's signature matched: which input, line and segment, with the
    line's text, the match's span and the lines around it (as read: shown as
    ``display_text`` makes them). ``arrival`` orders lines of
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
        "_before",
        "_after",
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
        self._before, self._after = before, after
        self.arrival = arrival

    # The context as shown (``display_text``), made only for the occurrences shown: most
    # are counted and dropped (``Finding.add``).
    @property
    def before(self) -> list[str]:
        return [display_text(line) for line in self._before]

    @property
    def after(self) -> list[str]:
        return [display_text(line) for line in self._after]

    @property
    def order(self) -> tuple[int, int, int, int]:
        return (self.arrival, self.source, self.line, self.segment)


# A year-less time (glog) is compared in the year assumed at the end; only whether that
# year is a leap year changes how two such times compare, so the earliest under each kind
# of year is kept until then.
LEAP_YEAR, COMMON_YEAR = 2000, 1970


def is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


class Finding:
    """Every occurrence of one entry, counted, and where it ranks.

    Occurrences are not all kept, so that memory stays flat however many lines match: the
    count and the ranks are exact, the ``MAX_LOCATIONS`` first in order are listed, and
    those that may prove the earliest in time are kept (the earliest with a year, and the
    earliest without one under a leap year and under a common year: which comes first
    depends on the year assumed for those without one, known at the end).

    Each input's occurrences are added in log order (the pieces of a line cut past
    ``MAX_CARRY`` too, which share its number); inputs read side by side (a command's
    stdout and stderr) interleave a little out of order, so an occurrence's place is its
    arrival, its input, then when it was added."""

    __slots__ = (
        "entry",
        "url",
        "count",
        "rank_set",
        "kept",
        "earliest",
        "in_root_block",
        "min_year",
        "level",
        "first",
        "first_time",
        "root_cause",
    )

    def __init__(self, entry: IndexedEntry, url: str) -> None:
        self.entry, self.url = entry, url
        self.count = 0
        self.rank_set: set[str] = set()
        self.kept: list[tuple[tuple[int, int, int], Occurrence]] = []  # (place, occurrence)
        # "dated", "leap", "common": (seconds, place, occurrence) of the earliest so far.
        self.earliest: dict[str, tuple[float, tuple[int, int, int], Occurrence]] = {}
        self.in_root_block = False
        self.min_year: int | None = None
        self.level = 0
        self.first: Occurrence | None = None
        self.first_time: float | None = None
        self.root_cause = False  # on a rank torchrun named, or in its block: set when ordered

    def add(self, item: Occurrence, in_root_block: bool = False) -> None:
        """Count ``item`` and keep it if it is among those a diagnosis can show."""
        self.count += 1
        if item.rank is not None:
            self.rank_set.add(item.rank)
        if in_root_block:
            self.in_root_block = True
        place = (item.arrival, item.source, self.count)
        self.kept.append((place, item))
        if len(self.kept) >= 2 * MAX_LOCATIONS:  # items may come a little out of order
            self.kept.sort(key=lambda kept: kept[0])
            del self.kept[MAX_LOCATIONS:]
        time = item.time
        if time is None:
            return
        if time.year is not None:
            self.min_year = time.year if self.min_year is None else min(self.min_year, time.year)
            self._keep_earliest("dated", time.year, place, item)
        else:
            self._keep_earliest("leap", LEAP_YEAR, place, item)
            self._keep_earliest("common", COMMON_YEAR, place, item)

    def _keep_earliest(
        self, kind: str, year: int, place: tuple[int, int, int], item: Occurrence
    ) -> None:
        assert item.time is not None
        key = (item.time.seconds(year), place)
        best = self.earliest.get(kind)
        if best is None or key < best[:2]:
            self.earliest[kind] = (*key, item)

    @property
    def locations(self) -> list[Occurrence]:
        """The first ``MAX_LOCATIONS`` occurrences, in order."""
        return [item for _, item in sorted(self.kept, key=lambda kept: kept[0])[:MAX_LOCATIONS]]

    def candidates(self, assumed_year: int) -> list[Occurrence]:
        """The occurrences one of which is the first, in the year assumed for year-less
        times: the first in order, the earliest with a year, and the earliest without one
        under a year of the assumed year's kind."""
        kinds = ("dated", "leap" if is_leap(assumed_year) else "common")
        candidates = [self.earliest[kind][2] for kind in kinds if kind in self.earliest]
        if self.kept:
            candidates.append(min(self.kept, key=lambda kept: kept[0])[1])
        return candidates

    @property
    def ranks(self) -> list[str]:
        return sort_ranks(self.rank_set)


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
