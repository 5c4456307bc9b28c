"""Run a reproducer so that the runner sees whether its check region ran to its end.

The check region asserts that the fixed program still computes what it should. A check
that was skipped (behind a condition, after an early ``sys.exit``) proves nothing, so the
runner does not trust the exit status alone: it starts the script through a small
bootstrap that replaces the region's end marker with a statement printing a line that
holds a token made for this run. Only a run that reached the end of the region prints it.
The marker is a comment, so line numbers, and every traceback, stay those of the script;
the bootstrap's own frame is left out of tracebacks.

The token must stay out of the script's reach until the end of the region, or a fixed
mode could print the line without running its check. So the bootstrap is never on a
command line (the interpreter's, ``sys.orig_argv``, ``/proc/<pid>/cmdline`` of the
launcher or the interpreter): the interpreter runs ``python - script`` and reads it from
standard input, a pipe that is drained before the script's first line runs, and the
bootstrap leaves no global behind that holds it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from failpedia.catalog.regions import CHECK, RegionError, find_region

PASSED_TEXT = "[failpedia] the check region ran to its end"

_BOOTSTRAP = """\
import os, sys
def _failpedia_excepthook(kind, value, trace, _original=sys.excepthook):
    if trace is not None and trace.tb_frame.f_code.co_filename == "<stdin>":
        trace = trace.tb_next
        value = value.with_traceback(trace)
    _original(kind, value, trace)
sys.excepthook = _failpedia_excepthook
del sys.argv[0]
sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
__file__ = sys.argv[0]
def _failpedia_script():
    del globals()["_failpedia_script"]
    with open(__file__, "rb") as file:
        lines = file.read().decode("utf-8").split("\\n")
    lines[{line} - 1] = {statement!r}
    return compile("\\n".join(lines), __file__, "exec", dont_inherit=True)
del _failpedia_excepthook, os, sys
exec(_failpedia_script())
"""


@dataclass(frozen=True)
class CheckedRun:
    """How to start a script whose check region is watched, and the line that says it
    ran to its end."""

    arguments: list[str]  # after the interpreter: ``- script``
    program: bytes  # the bootstrap, for the interpreter's standard input
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
    return CheckedRun(["-", script_path], bootstrap.encode(), passed_line)
