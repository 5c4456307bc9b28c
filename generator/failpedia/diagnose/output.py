"""Print a diagnosis: for people (text) and for programs (``--json``, a stable shape).

The text shows a log's control characters (``visible``) rather than sending them to the
terminal; the JSON keeps every character exactly, escaped as JSON escapes it.

JSON shape, ``format`` 1 (fields are only ever added, never renamed or removed)::

    {
      "format": 1,
      "engine": "hyperscan" | "literal",
      "inputs": [{"name": str, "rank": str|null, "bytes": int, "lines": int}],
      "findings": [{                       # initiating failure first
        "id": str, "title": str, "url": str, "category": str, "kind": str,
        "role": "initiating" | "downstream" | "wrapper",
        "summary": str,                    # the entry's quick answer (Markdown)
        "count": int,                      # matching line segments, all inputs
        "ranks": [str],                    # numeric ranks first, then host:pid labels
        "root_cause": bool,                # on the rank torchrun named as root cause
        "first": {"file": str, "line": int, "rank": str|null, "time": str|null,
                  "time_text": str|null, "text": str, "match": [start, end],
                  "before": [str], "after": [str]},
        "locations": [{"file": str, "line": int, "rank": str|null, "time": str|null,
                       "time_text": str|null}]
      }],
      "unmatched": [{"file": str, "line": int, "rank": str|null, "score": int, "text": str,
                     "before": [str], "after": [str]}],
      "warnings": [str], "problems": [str],
      "skipped": [str]                     # files in a folder not read, "path: why"
    }

``time_text`` is the time as the log wrote it (``2024-06-11 03:00:05,123``, glog's
``0611 03:00:05.123456``); ``time`` is that time in ISO 8601, UTC, sortable, and null
where the log gives no year (glog): no year is made up for it.
``locations`` lists at most ``MAX_LOCATIONS`` occurrences, in log order; ``unmatched`` is
filled only when there are no findings.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from failpedia.diagnose.findings import Diagnosis, Finding, Occurrence
from failpedia.signatures.finding_order import ROLE_TEXT, starter_text

JSON_FORMAT = 1


def format_time(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    whole = int(seconds // 1)
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
    millis = int(round((seconds - whole) * 1000))
    return f"{text}.{min(millis, 999):03d}Z" if millis else f"{text}Z"


def _iso_time(item: Occurrence) -> str | None:
    """The occurrence's time in ISO 8601, UTC, where the log gives its year."""
    time = item.time
    return format_time(time.seconds(time.year)) if time and time.year is not None else None


def time_shown(item: Occurrence) -> str | None:
    """The occurrence's time for people: ISO 8601 where the log gives the year, else the
    time as written, said to have no year."""
    if item.time is None:
        return None
    return _iso_time(item) or f"{item.time.written} (no year in the log)"


def _location(item: Occurrence) -> dict[str, Any]:
    return {
        "file": item.file,
        "line": item.line,
        "rank": item.rank,
        "time": _iso_time(item),
        "time_text": item.time.written if item.time is not None else None,
    }


def finding_json(finding: Finding) -> dict[str, Any]:
    first = finding.first
    assert first is not None
    entry = finding.entry
    return {
        "id": entry.id,
        "title": entry.title,
        "url": finding.url,
        "category": entry.category,
        "kind": entry.kind,
        "role": entry.role,
        "summary": entry.summary,
        "count": finding.count,
        "ranks": finding.ranks,
        "root_cause": finding.root_cause,
        "first": _location(first)
        | {
            "text": first.text,
            "match": list(first.span),
            "before": first.before,
            "after": first.after,
        },
        "locations": [_location(item) for item in finding.locations],
    }


def _scrubbed(value: Any, scrub: Callable[[str], str]) -> Any:
    """``value`` with ``scrub`` applied to every string in it."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [_scrubbed(item, scrub) for item in value]
    if isinstance(value, dict):
        return {key: _scrubbed(item, scrub) for key, item in value.items()}
    return value


def diagnosis_json(diagnosis: Diagnosis, scrub: Callable[[str], str] | None = None) -> str:
    """The diagnosis for machines; with ``scrub``, every string of it passes through that
    (``failpedia run`` redacts what may be attached to a CI run or an issue)."""
    data: dict[str, Any] = {
        "format": JSON_FORMAT,
        "engine": diagnosis.engine,
        "inputs": [
            {"name": item.name, "rank": item.rank, "bytes": item.bytes, "lines": item.lines}
            for item in diagnosis.inputs
        ],
        "findings": [finding_json(item) for item in diagnosis.findings],
        "unmatched": [
            {
                "file": item.file,
                "line": item.line,
                "rank": item.rank,
                "score": item.score,
                "text": item.text,
                "before": item.before,
                "after": item.after,
            }
            for item in diagnosis.error_lines
        ],
        "nearest": [item._asdict() for item in diagnosis.nearest],
        "warnings": diagnosis.warnings,
        "problems": diagnosis.problems,
        "skipped": diagnosis.skipped,
    }
    if scrub is not None:
        data = _scrubbed(data, scrub)
    return json.dumps(data, indent=2, ensure_ascii=False)


def _caret(code: int) -> str:
    """How ``cat -v`` shows a control character: ^[ for ESC, ^? for DEL, M-^[ for CSI."""
    if code >= 0x80:
        return "M-" + _caret(code - 0x80)
    return "^?" if code == 0x7F else "^" + chr(code + 0x40)


# Every C0 control but tab, DEL and every C1 control: what a terminal would act on.
_VISIBLE = {code: _caret(code) for code in [*range(0x20), *range(0x7F, 0xA0)] if code != 0x09}


def visible(text: str) -> str:
    """``text`` with the control characters a terminal acts on (escape sequences that
    survive the ANSI stripping, such as ESC c, backspaces, bells) shown, not executed."""
    return text.translate(_VISIBLE)


def rank_ranges(ranks: list[str]) -> str:
    """``["0", "1", "2", "5", "h:1"]`` -> ``"0-2,5,h:1"``."""
    parts: list[str] = []
    numbers = [int(rank) for rank in ranks if rank.isdigit()]
    start: int | None = None
    previous = -1
    for number in [*numbers, None]:
        if start is not None and (number is None or number != previous + 1):
            parts.append(str(start) if start == previous else f"{start}-{previous}")
            start = None
        if number is not None:
            start = number if start is None else start
            previous = number
    parts.extend(rank for rank in ranks if not rank.isdigit())
    return ",".join(parts)


def _size(count: int) -> str:
    if count < 1000:
        return f"{count} bytes"
    size = float(count)
    for unit in ("KB", "MB"):
        size /= 1000
        if size < 1000:
            return f"{size:.1f} {unit}"
    return f"{size / 1000:.1f} GB"


def diagnosis_text(diagnosis: Diagnosis, quick_answer: bool = True) -> str:
    """What ``diagnose`` prints: each finding with its entry's quick answer under its title
    (without, for ``--brief``), then where it was first seen."""
    total_bytes = sum(item.bytes for item in diagnosis.inputs)
    total_lines = sum(item.lines for item in diagnosis.inputs)
    logs = len(diagnosis.inputs)
    scanned = (
        f"{logs} log{'s' * (logs != 1)}, {_size(total_bytes)}, "
        f"{total_lines:,} line{'s' * (total_lines != 1)}"
    )
    out: list[str] = []
    count = len(diagnosis.findings)
    if count:
        out.append(
            f"{count} known failure{'s' * (count != 1)} in {scanned}; "
            + starter(diagnosis, "this log" if logs == 1 else "these logs")
        )
    else:
        out.append(f"No known failure in {scanned}.")
    out.extend(_findings_text(diagnosis, quick_answer))
    out.extend(_error_lines_text(diagnosis))
    return "\n".join(visible(line) for line in out)


def starter(diagnosis: Diagnosis, where: str) -> str:
    """What the summary line says of the failure that started it all
    (``finding_order.STARTER_TEXT``, which the log page reads from ``signatures.json``)."""
    return starter_text([finding.entry.role for finding in diagnosis.findings], where)


def _error_lines_text(diagnosis: Diagnosis) -> list[str]:
    """The most error-like lines, shown when no entry matched."""
    if not diagnosis.error_lines:
        return []
    out = ["", "The most error-like lines (no entry matches them):"]
    for item in diagnosis.error_lines:
        rank = f" [rank {item.rank}]" if item.rank is not None else ""
        out.append(f"  {item.file}:{item.line}{rank}: {item.text}")
    if diagnosis.nearest:
        out += ["", "Not matches, only the entries nearest in wording to these lines:"]
        for near in diagnosis.nearest:
            out += [f"  - {near.title}", f"    {near.id}: {near.url}"]
    return out


def run_text(diagnosis: Diagnosis, outcome: str) -> str:
    """What ``failpedia run`` prints once the command has ended (``outcome`` says how):
    every finding with its entry's quick answer, the one that started it first; or, when
    none matched, the most error-like lines."""
    total_lines = sum(item.lines for item in diagnosis.inputs)
    count = len(diagnosis.findings)
    if count:
        out = [
            f"failpedia: {count} known failure{'s' * (count != 1)} in the output "
            f"({outcome}); " + starter(diagnosis, "this output")
        ]
    else:
        lines = f"{total_lines:,} line{'s' * (total_lines != 1)}"
        out = [f"failpedia: no known failure in the output ({lines}; {outcome})."]
    out.extend(_findings_text(diagnosis, quick_answer=True))
    out.extend(_error_lines_text(diagnosis))
    return "\n".join(visible(line) for line in out)


def exception_text(diagnosis: Diagnosis, subject: str) -> str:
    """What ``failpedia.hook``, the notebook extension and the trainer callbacks print under
    a traceback (``subject`` names what was read: "this exception"): every finding as
    ``failpedia run`` prints it, with its entry's quick answer; empty when none matched,
    so an unknown exception gets nothing added under it."""
    count = len(diagnosis.findings)
    if not count:
        return ""
    out = [
        f"failpedia: {count} known failure{'s' * (count != 1)} in {subject}; "
        + starter(diagnosis, subject)
    ]
    out.extend(_findings_text(diagnosis, quick_answer=True))
    return "\n".join(visible(line) for line in out)


def _findings_text(diagnosis: Diagnosis, quick_answer: bool) -> list[str]:
    """Every finding, numbered, each after a blank line."""
    out: list[str] = []
    for number, finding in enumerate(diagnosis.findings, start=1):
        out.append("")
        out.extend(_finding_text(number, finding, quick_answer))
    return out


_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def plain_summary(summary: str) -> str:
    """An entry's summary (Markdown) as one line of plain text: links reduced to their
    text, emphasis marks dropped, every run of whitespace one space."""
    return _LINK.sub(r"\1", " ".join(summary.split())).replace("**", "")


def _quick_answer(summary: str) -> list[str]:
    """An entry's summary as terminal text, wrapped under its finding."""
    import textwrap  # imported only when a finding is printed; diagnose's start-up is timed

    return textwrap.wrap(plain_summary(summary), 88, initial_indent="   ", subsequent_indent="   ")


def _finding_text(number: int, finding: Finding, quick_answer: bool = False) -> list[str]:
    first = finding.first
    assert first is not None
    entry = finding.entry
    role = ROLE_TEXT.get(entry.role, entry.role)
    lines = [f"{number}. {entry.title}", f"   {entry.id} ({role}): {finding.url}"]
    if quick_answer and entry.summary:
        lines.extend(_quick_answer(entry.summary))
    where = f"{first.file}:{first.line}"
    if first.rank is not None:
        where += f", rank {first.rank}"
    stamp = time_shown(first)
    if stamp:
        where += f", {stamp}"
    lines.append(f"   first at {where}")
    width = len(str(first.line + len(first.after)))
    for offset, text in enumerate(first.before, start=-len(first.before)):
        lines.append(f"     {first.line + offset:>{width}} | {text}")
    lines.append(f"   > {first.line:>{width}} | {first.text.rstrip()}")
    for offset, text in enumerate(first.after, start=1):
        lines.append(f"     {first.line + offset:>{width}} | {text}")
    times = finding.count
    ranks = finding.ranks
    if times > 1 or len(ranks) > 1:
        spread = f" on ranks {rank_ranges(ranks)}" if len(ranks) > 1 else ""
        lines.append(f"   seen {times} times{spread}")
    if finding.root_cause:
        lines.append("   torchrun names this rank as the root cause (first observed failure)")
    return lines
