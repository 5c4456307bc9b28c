"""The marked regions of a reproducer: the fix, and the check that the fix kept the result.

A reproducer marks each with two comment lines, so the code a reader copies is exactly the
code that was proved, and the check shown under it is exactly the check that ran:

    # --- fix: start
    ...
    # --- fix: end
    ...
    # --- check: start
    ...
    # --- check: end

The runner confirms that the check ran to its end by replacing the check's end marker with
a statement (``mark_check_end``); line numbers stay the same, so tracebacks still point at
the reproducer's own lines.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

FIX = "fix"
CHECK = "check"
_MARKER = re.compile(r"^([ \t]*)(# --- (fix|check): (start|end))[ \t]*$", re.MULTILINE)


class RegionError(ValueError):
    """The markers of a region are missing, unbalanced or repeated."""


@dataclass(frozen=True)
class Region:
    """One marked region: its code and where it lies (1-based lines of the markers)."""

    name: str
    code: str  # dedented, without the marker lines
    start_line: int
    end_line: int
    indent: str  # the indentation of its first code line

    def holds(self, line: int) -> bool:
        """Whether a line of the reproducer lies inside the region, markers included."""
        return self.start_line <= line <= self.end_line


def find_region(source: str, name: str) -> Region:
    """The region called ``name`` (``fix`` or ``check``); ``RegionError`` if it is not
    marked exactly once or is empty."""
    start, end = f"# --- {name}: start", f"# --- {name}: end"
    markers = [match for match in _MARKER.finditer(source) if match.group(3) == name]
    kinds = [match.group(2) for match in markers]
    if not markers:
        raise RegionError(f"no {name} region: mark the {name} code between `{start}` and `{end}`")
    if kinds != [start, end]:
        raise RegionError(f"expected one `{start}` followed by one `{end}`, found {kinds}")
    body = source[markers[0].end() : markers[1].start()].strip("\n")
    if not body.strip():
        raise RegionError(f"the {name} region is empty")
    first_code = next(line for line in body.splitlines() if line.strip())
    return Region(
        name=name,
        code=textwrap.dedent(body),
        start_line=source.count("\n", 0, markers[0].start()) + 1,
        end_line=source.count("\n", 0, markers[1].start()) + 1,
        indent=first_code[: len(first_code) - len(first_code.lstrip())],
    )


def extract_fix_region(source: str) -> str:
    """The dedented code between the fix markers."""
    return find_region(source, FIX).code


def mark_check_end(source: str, statement: str) -> str:
    """``source`` with the check's end marker replaced by ``statement`` at the indentation
    of the check's first code line, so it runs exactly when the whole check has run."""
    region = find_region(source, CHECK)
    lines = source.split("\n")
    lines[region.end_line - 1] = region.indent + statement
    return "\n".join(lines)
