"""What a diagnosis finds: occurrences of an entry, findings, error-like lines, inputs.

Plain classes and named tuples, not dataclasses: defining a dataclass costs start-up time
(and its module imports inspect), which ``failpedia diagnose`` is timed on.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from failpedia.diagnose.nearest import NearestEntry
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
    count and the ranks are exact, the ``MAX_LOCATIONS`` first in order are listed, and,
    for each input, those that may prove the earliest (``first_of``): its first
    occurrence, and the earliest in time (the earliest with a year, and the earliest
    without one under a leap year and under a common year: which comes first depends on
    the year assumed for those without one, known at the end).

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
        "opening",
        "in_root_block",
        "min_year",
        "level",
        "leads",
        "first",
        "first_time",
        "root_cause",
    )

    def __init__(self, entry: IndexedEntry, url: str) -> None:
        self.entry, self.url = entry, url
        self.count = 0
        self.rank_set: set[str] = set()
        self.kept: list[tuple[tuple[int, int, int], Occurrence]] = []  # (place, occurrence)
        # (input, "dated" | "leap" | "common"): (seconds, place, occurrence) of the earliest
        # so far in that input, and each input's first occurrence.
        self.earliest: dict[tuple[int, str], tuple[float, tuple[int, int, int], Occurrence]] = {}
        self.opening: dict[int, Occurrence] = {}
        self.in_root_block = False
        self.min_year: int | None = None
        self.level = 0
        self.leads = False  # causes another finding of the diagnosis: set when ordered
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
        self.opening.setdefault(item.source, item)
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
        best = self.earliest.get((item.source, kind))
        if best is None or key < best[:2]:
            self.earliest[item.source, kind] = (*key, item)

    @property
    def locations(self) -> list[Occurrence]:
        """The first ``MAX_LOCATIONS`` occurrences, in order."""
        return [item for _, item in sorted(self.kept, key=lambda kept: kept[0])[:MAX_LOCATIONS]]

    def first_of(self, assumed_year: int) -> tuple[Occurrence, float | None]:
        """The earliest occurrence, with the time it is ordered by (None: no time), with
        ``assumed_year`` for year-less times.

        In one input, lines were written in order: occurrences with a time compare by
        their times, one without a time comes no earlier than the occurrence with a time
        before it, and one before every occurrence with a time comes first (a traceback's
        last line, printed before a logger repeats it with a time). So an input's earliest
        is its first occurrence where that has no time, else its earliest time. Across
        inputs, the earliest time each shows for this entry decides, then their order (of
        arrival, for a command's stdout and stderr)."""

        def seconds(item: Occurrence) -> float:
            assert item.time is not None
            return item.time.seconds(assumed_year)

        kinds = ("dated", "leap" if is_leap(assumed_year) else "common")
        best: tuple[float, tuple[int, int, int, int], Occurrence] | None = None
        for source, opening in self.opening.items():
            timed = [
                (seconds(self.earliest[source, kind][2]), self.earliest[source, kind][1], kind)
                for kind in kinds
                if (source, kind) in self.earliest
            ]
            earliest = min(timed) if timed else None
            first = (
                opening
                if earliest is None or opening.time is None
                else self.earliest[source, earliest[2]][2]
            )
            key = (earliest[0] if earliest is not None else math.inf, first.order, first)
            if best is None or key[:2] < best[:2]:
                best = key
        assert best is not None
        return best[2], (None if best[0] == math.inf else best[0])

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
    skipped: list[str]  # files in a folder given that were not read (binary), each named
    # When nothing matched: the entries nearest in wording to the error-like lines.
    nearest: tuple[NearestEntry, ...] = ()


def sort_ranks(ranks: set[str]) -> list[str]:
    """Numeric ranks in numeric order, then any host:pid labels by name."""
    return sorted(ranks, key=lambda rank: (0, int(rank), "") if rank.isdigit() else (1, 0, rank))


class RootCause:
    """What torchrun's "Root Cause (first observed failure)" blocks named."""

    __slots__ = ("ranks", "blocks")

    def __init__(self) -> None:
        self.ranks: set[str] = set()
        self.blocks: set[tuple[int, int]] = set()  # (source, line) inside
