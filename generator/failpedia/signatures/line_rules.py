"""How a raw log line becomes the text that signatures are matched against: the one
module of log-line rules.

The same rules run in ``failpedia diagnose``, in ``failpedia verify`` (a reproducer's
output) and in the site's log page: every regular expression and limit below is published
in ``signatures.json`` (``published_rules``) and the page's worker takes them from there,
so all three read a line the same way (the page also takes the rules that redact what it
puts in an issue link, ``redaction``). A line (split on ``\\n``) loses its ANSI escape
sequences, is cut into segments at ``\\r`` (progress bars redraw a line with ``\\r``),
and each segment loses its prefixes (rank, host, timestamp) one after another; what the
prefixes said becomes the segment's rank and time. Segments are capped at ``LINE_CAP``
characters (code points, as Python counts them) before any pattern runs on them.

Every rule means the same in both engines: whitespace is ASCII (``BLANK``, ``[ \\t]``),
since Python's ``\\s`` and ``str.strip()`` and JavaScript's ``\\s`` and ``trim()`` disagree
beyond it, and Python compiles the rules with ``re.ASCII``, as JavaScript reads ``\\b``.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

LINE_CAP = 4096
MAX_PREFIXES = 6
# The most of an unfinished line a reader carries on while it waits for the line's end: a
# line longer than this (a progress bar redrawn with \r for hours) is cut after its last
# \r, or anywhere, and read on in pieces, so memory stays bounded. Bytes for the CLI,
# UTF-16 units for the log page: the same for ASCII.
MAX_CARRY = 8 << 20
# What a blank segment holds only of, and what a shown line loses at its end.
BLANK = " \t\n\v\f\r"

# Where torchrun's ChildFailedError names the failure it saw first, the lines after it that
# are read for the rank it names, and where that block ends.
ROOT_CAUSE_MARKER = "Root Cause (first observed failure)"
ROOT_CAUSE_LINES = 12
ROOT_CAUSE_RANK = r"^[ \t]*rank[ \t]*:[ \t]*([0-9]+)(?:[ \t]*\(local_rank:[ \t]*([0-9]+)\))?"
ROOT_CAUSE_END = r"^[ \t]*={10,}"

# How error-like a line is, for showing the likeliest lines when nothing matched:
# (score, literal keywords that make a line a candidate, regex that scores it).
ERROR_LIKE: list[tuple[int, list[str], str]] = [
    (5, ["Error", "Exception"], r"\b[A-Za-z_.]*(?:Error|Exception)\b:"),
    (
        4,
        ["Fatal", "FATAL", "fatal", "Segmentation fault", "core dumped", "Killed", "Aborted"],
        r"\b(?:FATAL|Fatal|fatal|Segmentation fault|core dumped|Killed|Aborted)\b",
    ),
    (
        3,
        ["error", "ERROR", "Error", "FAILED", "failed", "Failed"],
        r"\b(?:error|ERROR|Error|FAILED|failed|Failed)\b",
    ),
    (2, ["Traceback"], r"Traceback \(most recent call last\)"),
]
# How many lines are shown before and after a line, where no other number is asked for.
CONTEXT_LINES = 3
# How many error-like lines are shown when nothing matched.
MAX_ERROR_LINES = 5
# How many occurrences of one finding are listed (counts and ranks stay exact).
MAX_LOCATIONS = 50
# A log file named for its rank ("rank3.log", "train_rank-12.txt"): the rank of its lines
# that carry none. Case is ignored, in ASCII only.
RANK_IN_NAME = r"(?:^|[^A-Za-z])rank[_-]?([0-9]+)"

# CSI sequences (colours, cursor moves), OSC sequences (titles, links), two-byte escapes.
# The ESC is written once, before the alternatives: Python's re then finds each escape by
# its literal first byte, more than twice as fast on a colourful log.
ANSI = r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)|[@-Z\\-_])"

# Prefix rules, tried in order at the start of a segment until none applies. Each names
# what its groups read, in order: ``rank`` (a rank, or the host:pid that names a process),
# or the parts of a time (``TIME_PARTS``; a time without ``year`` has none in the log).
# The first rank and the first time a segment's prefixes give are its own. The same table,
# with what each group reads, drives the browser: no engine keys anything by a rule's name.
PREFIX_RULES: list[tuple[str, str, tuple[str, ...]]] = [
    # torchrun --tee: "[default3]:" (role + local rank) or "[rank3]:" with --role rank.
    ("torchrun", r"^[ \t]*\[[A-Za-z_]*?([0-9]+)\]:", ("rank",)),
    # srun -l / --label: "3: ".
    ("srun", r"^[ \t]*([0-9]+): ", ("rank",)),
    # NCCL: "host:pid:tid [device] NCCL INFO ..." -> host:pid names the process.
    ("nccl", r"^[ \t]*([A-Za-z0-9][A-Za-z0-9_.-]*:[0-9]+):[0-9]+ ", ("rank",)),
    # ISO 8601 and Python logging: "2024-05-01 12:00:00,123", "[2024-05-01T12:00:00.1Z]".
    (
        "iso",
        r"^[ \t]*\[?([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2}):([0-9]{2})"
        r"(?:[.,]([0-9]{1,9}))?(Z|[+-][0-9]{2}:?[0-9]{2})?\]?(?:[ \t]*[|-][ \t]*|[ \t]+|:[ \t]*|$)",
        ("year", "month", "day", "hour", "minute", "second", "fraction", "zone"),
    ),
    # glog, as torch's C++ and elastic loggers print it: "[E1030 12:34:56.789012 123 f.cpp:616] ".
    (
        "glog",
        r"^[ \t]*\[?[IWEF]([0-9]{2})([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?"
        r"(?: +[0-9]+)?(?: [^\] \t]+:[0-9]+)?\] ?",
        ("month", "day", "hour", "minute", "second", "fraction"),
    ),
    # Older glog without a time: "[E ProcessGroupNCCL.cpp:563] ".
    ("glog-short", r"^[ \t]*\[[IWEF] [^\] \t]+:[0-9]+\] ?", ()),
]
# What a prefix rule's group may read: a rank, or a part of a time. A time has at least
# ``month`` to ``second``; ``fraction`` (digits after the point) and ``zone`` (``Z``,
# ``+02:00``, ``-0500``) may be absent, ``year`` too (glog writes none).
RANK_PART = "rank"
TIME_PARTS = ("year", "month", "day", "hour", "minute", "second", "fraction", "zone")


def published_rules() -> dict[str, Any]:
    """Every rule and limit above, as ``signatures.json`` carries them for the log page."""
    # Imported here: the redactions are compiled through the pattern dialect, which
    # ``diagnose`` does not need to read a log.
    from failpedia.signatures.redaction import published_redactions

    return {
        "line_cap": LINE_CAP,
        "max_carry": MAX_CARRY,
        "blank": BLANK,
        "max_prefixes": MAX_PREFIXES,
        "ansi": ANSI,
        # [name, regex, what each group reads]: readers that know only [name, regex]
        # read the third element as absent.
        "prefixes": [[name, source, list(groups)] for name, source, groups in PREFIX_RULES],
        "root_cause_marker": ROOT_CAUSE_MARKER,
        "root_cause_lines": ROOT_CAUSE_LINES,
        "root_cause_rank": ROOT_CAUSE_RANK,
        "root_cause_end": ROOT_CAUSE_END,
        "error_like": [[score, source, literals] for score, literals, source in ERROR_LIKE],
        "context_lines": CONTEXT_LINES,
        "max_error_lines": MAX_ERROR_LINES,
        "max_locations": MAX_LOCATIONS,
        "rank_in_name": RANK_IN_NAME,
        "redactions": published_redactions(),
    }


_ANSI = re.compile(ANSI)
_RULES = [(re.compile(source, re.ASCII), groups) for _, source, groups in PREFIX_RULES]


class LogTime(NamedTuple):
    """A timestamp as a log wrote it; ``year`` is None where the format has none (glog).
    ``written`` is its text in the log, from the first digit of the date to the last of
    the time (and its zone): what is shown where the year is not known."""

    year: int | None
    month: int
    day: int
    hour: int
    minute: int
    second: int
    fraction: str = ""
    offset_minutes: int = 0
    written: str = ""

    def seconds(self, assumed_year: int) -> float:
        """Seconds since the epoch (UTC), with ``assumed_year`` where the log gave none."""
        import calendar  # with its imports, a few ms of start-up when no line has a time

        year = self.year if self.year is not None else assumed_year
        try:
            base = calendar.timegm(
                (year, self.month, self.day, self.hour, self.minute, self.second, 0, 0, 0)
            )
        except (ValueError, OverflowError):
            base = 0
        fraction = int(self.fraction) / 10 ** len(self.fraction) if self.fraction else 0.0
        return base - self.offset_minutes * 60 + fraction


class Segment(NamedTuple):
    """One piece of a log line, prefixes removed, with what the prefixes said."""

    text: str
    rank: str | None
    time: LogTime | None


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text) if "\x1b" in text else text


def _offset_minutes(zone: str | None) -> int:
    if not zone or zone == "Z":
        return 0
    digits = zone[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:4])
    return -minutes if zone[0] == "-" else minutes


def _written(match: re.Match[str]) -> str:
    """A time prefix's text in the log: from its first group to the end of its last."""
    end = max(match.end(group) for group in range(1, len(match.groups()) + 1))
    return match.string[match.start(1) : end]


def _log_time(parts: dict[str, str | None], match: re.Match[str]) -> LogTime:
    """The time a prefix's groups give (``TIME_PARTS``), as the log wrote it."""
    year = parts.get("year")
    return LogTime(
        int(year) if year is not None else None,
        int(parts["month"] or 0),
        int(parts["day"] or 0),
        int(parts["hour"] or 0),
        int(parts["minute"] or 0),
        int(parts["second"] or 0),
        parts.get("fraction") or "",
        _offset_minutes(parts.get("zone")),
        _written(match),
    )


def parse_segment(raw: str) -> Segment:
    """Strip a segment's prefixes, reading rank and time from them (the first of each)."""
    text = raw
    rank: str | None = None
    time: LogTime | None = None
    for _ in range(MAX_PREFIXES):
        for rule, groups in _RULES:
            match = rule.match(text)
            if not match or match.end() == 0:
                continue
            parts = dict(zip(groups, match.groups(), strict=True))
            if RANK_PART in parts:
                found = parts[RANK_PART]
                if rank is None and found is not None:
                    rank = str(int(found)) if found.isdigit() else found
            elif "month" in parts and time is None:
                time = _log_time(parts, match)
            text = text[match.end() :]
            break
        else:
            break
    return Segment(text[:LINE_CAP], rank, time)


def split_line(line: str) -> list[Segment]:
    """The non-blank segments of one line (ANSI removed, split at carriage returns)."""
    return [parse_segment(part) for part in strip_ansi(line).split("\r") if part.strip(BLANK)]


def display_text(line: str) -> str:
    """How a context line is shown: what a terminal would show last, capped."""
    parts = [part for part in strip_ansi(line).split("\r") if part.strip(BLANK)]
    return (parts[-1] if parts else "").rstrip(BLANK)[:LINE_CAP]
