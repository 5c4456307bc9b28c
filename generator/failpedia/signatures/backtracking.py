"""How much a pattern can backtrack: the dialect's check on repeats, optional parts and
alternatives.

Python's ``re`` and the browser's ``RegExp`` backtrack: where a match fails, they try every
other way the pattern has of matching the text read so far. The dialect (``dialect``)
feeds this module each part of a pattern, left to right, and refuses a pattern as soon as
that work can grow out of bounds:

- A *wide* repeat (``* + {n,}``, or ``{n,m}`` whose count can vary by more than
  ``NARROW_SPAN``) can take a whole line. Two wide repeats that can take the same
  characters, with nothing required between them that the first cannot match
  (``\\d*\\d*``, ``.*\\s+``, ``.{0,99}.{0,99}``), try every split of a stretch between
  them: work that grows with a power of the line's length. Refused.
- Each narrow choice (``?``, a ``{n,m}`` with a small span, a group whose alternatives
  can start alike, an optional group) multiplies the ways to try. Beside a wide repeat
  that can take the same characters, each way is tried at every length the repeat can
  take, so that product stays at most ``MAX_TRIES_BESIDE_WIDE``; elsewhere at most
  ``MAX_TRIES``; and the ways that different stretches multiply into, over the whole
  pattern (``x?x-x?x-x?x...``), stay at most ``MAX_WAYS``.

Parts are tracked in *runs*: elastic parts (repeats whose count varies) that can still
trade characters. A new elastic part joins every run whose characters it shares; a
required character that a run cannot match seals that run, since nothing after it can
take the run's characters back.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace

NARROW_SPAN = 10
MAX_TRIES = 256
MAX_TRIES_BESIDE_WIDE = 2
MAX_WAYS = 64

POLYNOMIAL = (
    "this repeat can match the same characters as an earlier one with nothing required in "
    "between that the first cannot match (as in '\\d*\\d*', '.*\\s+' or '.{0,99}.{0,99}'; "
    f"a repeat whose count can vary by more than {NARROW_SPAN} counts as unbounded), which "
    "backtracks polynomially on long lines; put a required character between them, e.g. "
    "'\\d+x\\d+', or merge them into one class"
)
TOO_MANY_WAYS = (
    "with this part the pattern has more than {limit} ways to try on one stretch of a line "
    "(optional parts, repeats of varying count and alternatives that start alike, that can "
    "match the same characters{where}), and backtracking tries them all on a line that "
    "almost matches; make alternatives start differently, put required characters between "
    "optional parts, or use fewer of them"
)


class BacktrackingError(ValueError):
    """A part that makes the pattern backtrack too much; the message says what to change."""


@dataclass(frozen=True)
class Chars:
    """The characters a part can match: an ASCII set, and whether any non-ASCII one."""

    ascii: frozenset[str]
    other: bool = False

    def __or__(self, other: Chars) -> Chars:
        return Chars(self.ascii | other.ascii, self.other or other.other)

    def overlaps(self, other: Chars) -> bool:
        return bool(self.ascii & other.ascii) or (self.other and other.other)

    def negated(self) -> Chars:
        return Chars(ALL_ASCII - self.ascii, True)

    @staticmethod
    def of(text: str) -> Chars:
        return Chars(frozenset(c for c in text if ord(c) < 128), any(ord(c) >= 128 for c in text))


ALL_ASCII = frozenset(chr(code) for code in range(128))
NO_CHARS = Chars(frozenset())
_run_ids = itertools.count()


@dataclass(frozen=True)
class _Run:
    """Elastic parts that can trade characters: what they match, whether one is wide,
    ``tries`` (the product of the narrow parts' choices) and ``largest`` (the largest
    of those choices: the count of one part follows from the others')."""

    chars: Chars
    wide: bool
    tries: int
    largest: int
    id: int

    @property
    def ways(self) -> int:
        """How many ways the run can match one stretch of text."""
        return self.tries if self.wide else self.tries // self.largest


def _new_run(chars: Chars, wide: bool, tries: int, largest: int) -> _Run:
    return _Run(chars, wide, tries, largest, next(_run_ids))


class Backtracking:
    """The runs of one alternative of a pattern so far, and the ways of the sealed ones."""

    def __init__(self) -> None:
        self.runs: list[_Run] = []
        self.sealed_ways = 1

    def copy(self) -> Backtracking:
        other = Backtracking()
        other.runs = list(self.runs)
        other.sealed_ways = self.sealed_ways
        return other

    @property
    def ways(self) -> int:
        total = self.sealed_ways
        for run in self.runs:
            total *= run.ways
        return total

    def require(self, chars: Chars) -> None:
        """A character from ``chars`` must come next: seal the runs that cannot match it."""
        kept = []
        for run in self.runs:
            if run.chars.overlaps(chars):
                kept.append(run)
            else:
                self.sealed_ways *= run.ways
        self.runs = kept

    def repeat(self, chars: Chars, low: int, high: int | None) -> None:
        """A single character or class repeated ``low`` to ``high`` times (None: no bound)."""
        if low:
            self.require(chars)
        if high == low:
            return
        wide = high is None or high - low > NARROW_SPAN
        choices = 1 if wide or high is None else high - low + 1
        self._join(chars, wide, choices)

    @classmethod
    def after_group(
        cls, branches: Sequence[Backtracking], choices: int, chars: Chars
    ) -> Backtracking:
        """The state after a group, from the state at the end of each of its ``branches``
        (and the state before it, for an optional group); ``choices`` is how many of its
        ways one text can start, and ``chars`` what it can match."""
        joined: list[_Run] = []
        for run in {run.id: run for branch in branches for run in branch.runs}.values():
            merged = run
            for other in [other for other in joined if other.chars.overlaps(run.chars)]:
                joined.remove(other)
                merged = _either(merged, other)
            joined.append(merged)
        if choices > 1:  # beside a wide repeat, each is tried at every length it takes
            joined = [
                replace(run, tries=run.tries * choices)
                if run.wide and run.chars.overlaps(chars)
                else run
                for run in joined
            ]
        state = cls()
        state.runs = joined
        state.sealed_ways = max(branch.sealed_ways for branch in branches) * choices
        state._check(joined)
        return state

    def _join(self, chars: Chars, wide: bool, choices: int) -> None:
        overlapping = [run for run in self.runs if run.chars.overlaps(chars)]
        tries, largest, merged_chars = choices, choices, chars
        for run in overlapping:
            if run.wide and wide:
                raise BacktrackingError(POLYNOMIAL)
            wide = wide or run.wide
            tries *= run.tries
            largest = max(largest, run.largest)
            merged_chars = merged_chars | run.chars
        merged = _new_run(merged_chars, wide, tries, largest)
        self.runs = [run for run in self.runs if run not in overlapping] + [merged]
        self._check([merged])

    def _check(self, changed: list[_Run]) -> None:
        for run in changed:
            if run.wide and run.tries > MAX_TRIES_BESIDE_WIDE:
                where = " as a repeat of any count beside it"
                raise BacktrackingError(
                    TOO_MANY_WAYS.format(limit=MAX_TRIES_BESIDE_WIDE, where=where)
                )
            if not run.wide and run.tries > MAX_TRIES:
                raise BacktrackingError(TOO_MANY_WAYS.format(limit=MAX_TRIES, where=""))
        if self.ways > MAX_WAYS:
            raise BacktrackingError(TOO_MANY_WAYS.format(limit=MAX_WAYS, where=""))


def _either(first: _Run, second: _Run) -> _Run:
    """One run standing for two that different alternatives leave: the larger of each."""
    return _new_run(
        first.chars | second.chars,
        first.wide or second.wide,
        max(first.tries, second.tries),
        max(first.largest, second.largest),
    )


def alike_alternatives(heads: Sequence[Sequence[Chars]]) -> int:
    """The most alternatives of a group that one text can start, from each alternative's
    leading fixed characters: two differ once one position holds characters that cannot
    be alike (where one runs out first, as ``torch`` in ``torchvision``, they are alike)."""

    def alike(first: Sequence[Chars], second: Sequence[Chars]) -> bool:
        return all(one.overlaps(two) for one, two in zip(first, second, strict=False))

    return max(sum(alike(head, other) for other in heads) for head in heads)
