"""The fix region of a reproducer: the code `--fixed` mode runs, shown on the entry's page.

A reproducer marks it with two comment lines, so the code a reader copies is exactly the
code that was proved:

    # --- fix: start
    ...
    # --- fix: end
"""

from __future__ import annotations

import re
import textwrap

START = "# --- fix: start"
END = "# --- fix: end"
_MARKER = re.compile(r"^[ \t]*(# --- fix: (?:start|end))[ \t]*$", re.MULTILINE)


class FixRegionError(ValueError):
    """The markers are missing, unbalanced or repeated."""


def extract_fix_region(source: str) -> str:
    """The dedented code between the markers."""
    markers = list(_MARKER.finditer(source))
    kinds = [match.group(1) for match in markers]
    if not markers:
        raise FixRegionError(f"no fix region: mark the fix code between `{START}` and `{END}`")
    if kinds != [START, END]:
        raise FixRegionError(f"expected one `{START}` followed by one `{END}`, found {kinds}")
    body = source[markers[0].end() : markers[1].start()].strip("\n")
    if not body.strip():
        raise FixRegionError("the fix region is empty")
    return textwrap.dedent(body)
