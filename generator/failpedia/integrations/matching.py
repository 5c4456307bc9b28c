"""Match an exception with the index ``failpedia diagnose`` reads, loaded when an exception
is diagnosed (``excepthook`` imports this then, never before).

The traceback, as ``traceback`` formats it with its chain (``__cause__``, ``__context__``),
and the warnings recorded before it go through ``LiveDiagnosis``, the matcher
``failpedia run`` feeds a command's output to, as two streams: the warnings first, so
that a warning that started it all is ordered first. The text is ``failpedia run``'s.
"""

from __future__ import annotations

import traceback as tracebacks
from pathlib import Path
from types import TracebackType

from failpedia.diagnose.live import LiveDiagnosis
from failpedia.diagnose.output import exception_text
from failpedia.project.index_source import find_index_source, index_opener

STREAMS = ("warnings", "traceback")


def exception_findings(
    exception: BaseException,
    traceback: TracebackType | None,
    warning_lines: list[str],
    index: Path | None,
    entries: Path | None,
) -> str:
    """The findings of ``exception`` and the warnings before it, as printed under its
    traceback; empty when no entry matches. Raises ``IndexUnavailable`` when there is no
    index to read."""
    live = LiveDiagnosis(index_opener(find_index_source(index, entries))(), STREAMS, context=0)
    if warning_lines:
        live.feed(0, ("\n".join(warning_lines) + "\n").encode("utf-8", "backslashreplace"))
    if traceback is None:
        traceback = exception.__traceback__
    text = "".join(tracebacks.format_exception(type(exception), exception, traceback))
    live.feed(1, text.encode("utf-8", "backslashreplace"))
    subject = "this exception" + (" and the warnings before it" if warning_lines else "")
    return exception_text(live.finish(), subject)
