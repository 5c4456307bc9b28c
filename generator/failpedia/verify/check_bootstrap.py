"""Run a reproducer so that the runner sees whether its check region ran to its end.

The check region asserts that the fixed program still computes what it should. A check
that was skipped (behind a condition, after an early ``sys.exit``) proves nothing, so the
runner does not trust the exit status alone: it starts the script through a small
bootstrap that replaces the region's end marker with a statement printing a line that
holds a token made for this run. Only a run that reached the end of the region prints it.
The marker is a comment, so line numbers, and every traceback, stay those of the script;
the bootstrap's own frame is left out of tracebacks.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from failpedia.catalog.regions import CHECK, RegionError, find_region

PASSED_TEXT = "[failpedia] the check region ran to its end"

_BOOTSTRAP = """\
import os, sys
def _failpedia_excepthook(kind, value, trace, _original=sys.excepthook):
    if trace is not None and trace.tb_frame.f_code.co_filename == "<string>":
        trace = trace.tb_next
        value = value.with_traceback(trace)
    _original(kind, value, trace)
sys.excepthook = _failpedia_excepthook
del sys.argv[0]
sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
with open(sys.argv[0], "rb") as _failpedia_file:
    _failpedia_lines = _failpedia_file.read().decode("utf-8").split("\\n")
_failpedia_lines[{line} - 1] = {statement!r}
_failpedia_code = compile("\\n".join(_failpedia_lines), sys.argv[0], "exec", dont_inherit=True)
__file__ = sys.argv[0]
del _failpedia_lines, _failpedia_file, _failpedia_excepthook, os, sys
exec(_failpedia_code)
"""


@dataclass(frozen=True)
class CheckedRun:
    """How to start a script whose check region is watched, and the line that says it
    ran to its end."""

    arguments: list[str]  # after the interpreter: ``-c BOOTSTRAP script``
    passed_line: str


def watched_run(script_path: str, source: str) -> CheckedRun | None:
    """The arguments that run ``script_path`` with its check region watched, or None when
    the script has no well-formed check region (the validator reports that)."""
    try:
        region = find_region(source, CHECK)
    except RegionError:
        return None
    passed_line = f"{PASSED_TEXT} ({secrets.token_hex(8)})"
    written = ("\n" + passed_line + "\n").encode()
    statement = f"{region.indent}__import__('os').write(2, {written!r})"
    bootstrap = _BOOTSTRAP.format(line=region.end_line, statement=statement)
    return CheckedRun(["-c", bootstrap, script_path], passed_line)
