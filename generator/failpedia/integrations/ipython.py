"""``%load_ext failpedia``: in IPython and Jupyter, the entries matching an exception that
ends a cell, rendered under its traceback.

IPython's custom exception handler (``set_custom_exc``) takes every ``Exception`` a cell
raises: it shows the traceback as IPython does without it (``showtraceback``, or the
handler that was set before, for the exceptions that one took), then displays the
findings: plain text, the same text as under a script's traceback, and in a notebook that
text as HTML with its links clickable. The cell still fails: the execution reply carries
the error, so ``nbclient`` and "Run all" stop there as before. Warnings shown before the
exception are matched with it.
"""

from __future__ import annotations

import html
import re
from types import TracebackType
from typing import Any

from failpedia.integrations.excepthook import findings_text, record_warnings

# The shells this extension is loaded in, by id: the handler and the exception types that
# were set before, to put back on unload.
_previous: dict[int, tuple[tuple[type[BaseException], ...], Any]] = {}

_URL = re.compile(r"https?://[^\s<>\"']+")


def load(shell: Any) -> None:
    """Take the shell's exceptions (loading twice changes nothing)."""
    if id(shell) in _previous:
        return
    record_warnings()
    previous_types: tuple[type[BaseException], ...] = tuple(shell.custom_exceptions)
    previous_handler = shell.CustomTB
    _previous[id(shell)] = (previous_types, previous_handler)

    def handler(
        shell: Any,
        kind: type[BaseException],
        exception: BaseException,
        traceback: TracebackType | None,
        tb_offset: int | None = None,
    ) -> None:
        if previous_types and isinstance(exception, previous_types):
            previous_handler(kind, exception, traceback, tb_offset=tb_offset)
        else:  # what ``run_code`` calls where no custom handler takes the exception
            shell.showtraceback(
                (kind, exception, traceback), tb_offset=tb_offset, running_compiled_code=True
            )
        if isinstance(exception, Exception):
            display_findings(findings_text(exception, traceback))

    shell.set_custom_exc(tuple(dict.fromkeys((Exception, *previous_types))), handler)


def unload(shell: Any) -> None:
    """``%unload_ext failpedia``: the shell's handler as it was before ``load``."""
    previous = _previous.pop(id(shell), None)
    if previous is not None:
        shell.custom_exceptions, shell.CustomTB = previous


def findings_html(text: str) -> str:
    """The findings' text as HTML: the same lines, escaped, preformatted, links clickable."""
    parts: list[str] = []
    position = 0
    for match in _URL.finditer(text):
        url = match.group().rstrip(".,;:)")
        end = match.start() + len(url)
        parts.append(html.escape(text[position : match.start()]))
        parts.append(f'<a href="{html.escape(url)}" target="_blank">{html.escape(url)}</a>')
        position = end
    parts.append(html.escape(text[position:]))
    return '<pre class="failpedia-findings">' + "".join(parts) + "</pre>"


def display_findings(text: str) -> None:
    """Display ``text`` under the cell's traceback; nothing when it is empty."""
    if not text:
        return
    try:
        from IPython.display import display

        findings = {"text/plain": text, "text/html": findings_html(text)}
        display(findings, raw=True)  # type: ignore[no-untyped-call]
    except Exception:  # noqa: BLE001 - no display (a shell closing): stderr still works
        from failpedia.integrations.excepthook import print_findings

        print_findings(text)
