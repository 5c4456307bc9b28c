"""Print the catalog's entries under the traceback of an exception that ends a script or a
thread (``failpedia.hook``), and record the warnings shown before it.

The hooks chain onto the ones in place: the previous ``sys.excepthook`` (or
``threading.excepthook``) prints the traceback as it always did, then the findings follow
on stderr after a blank line. Only ``Exception`` is diagnosed: ``KeyboardInterrupt`` and
``SystemExit`` go to the previous hook alone. Nothing here raises: where no diagnosis can
be made (a broken index), one line says why.

Importing this module costs only the standard library modules every interpreter has
loaded; the matcher (``matching``) and the index are loaded when an exception is
diagnosed. Recording a warning appends one line to a bounded buffer, so a run that warns
every step pays nothing that shows.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # the aliases cost start-up time when built
    from collections.abc import Callable
    from types import TracebackType

    ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], Any]
    ThreadHook = Callable[[threading.ExceptHookArgs], Any]
    ShowWarning = Callable[..., Any]

MAX_WARNINGS = 50  # the most recent warnings kept for the next diagnosis
MAX_WARNING_CHARS = 4000  # a warning's line is cut there: it is matched, not shown
MAX_REMEMBERED = 16  # exceptions already reported, so that no hook reports one twice


class _Settings:
    """Where the index comes from (``install``'s arguments), whether it proved unreadable,
    and the hooks chained onto."""

    index: Path | None = None
    entries: Path | None = None
    unreadable = False  # said once; later exceptions get nothing until ``use_index``
    previous_excepthook: ExceptHook | None = None
    previous_threading_hook: ThreadHook | None = None
    previous_showwarning: ShowWarning | None = None


_recent_warnings: deque[str] = deque(maxlen=MAX_WARNINGS)
_reported: deque[BaseException] = deque(maxlen=MAX_REMEMBERED)


def install(index: str | Path | None = None, entries: str | Path | None = None) -> None:
    """Diagnose every exception that ends the script or a thread, under its traceback.

    ``index`` (a ``signatures.json``) or ``entries`` (a catalog's entries folder) say
    where the signatures come from, as ``failpedia diagnose --index/--entries`` do;
    without them, the package's index, or the checkout's entries. Installing twice
    chains once; a second call only changes where the index comes from."""
    use_index(index, entries)
    record_warnings()
    if sys.excepthook is not _excepthook:
        _Settings.previous_excepthook = sys.excepthook
        sys.excepthook = _excepthook
    if threading.excepthook is not _threading_excepthook:
        _Settings.previous_threading_hook = threading.excepthook
        threading.excepthook = _threading_excepthook


def uninstall() -> None:
    """Put back the hooks ``install`` chained onto, where nothing replaced ours since."""
    if sys.excepthook is _excepthook and _Settings.previous_excepthook is not None:
        sys.excepthook = _Settings.previous_excepthook
    if threading.excepthook is _threading_excepthook and _Settings.previous_threading_hook:
        threading.excepthook = _Settings.previous_threading_hook
    if warnings.showwarning is _showwarning and _Settings.previous_showwarning is not None:
        warnings.showwarning = _Settings.previous_showwarning


def use_index(index: str | Path | None = None, entries: str | Path | None = None) -> None:
    """Where the next diagnosis reads the signatures (None, None: where ``diagnose``
    looks by default)."""
    _Settings.index = Path(index) if index is not None else None
    _Settings.entries = Path(entries) if entries is not None else None
    _Settings.unreadable = False


def record_warnings() -> None:
    """Keep the warnings Python shows from now on, to match them with the next exception."""
    if warnings.showwarning is not _showwarning:
        _Settings.previous_showwarning = warnings.showwarning
        warnings.showwarning = _showwarning


def _showwarning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    try:
        # The first line of ``warnings.formatwarning``'s text, without reading the source.
        text = f"{filename}:{lineno}: {category.__name__}: {message}"
    except Exception:  # noqa: BLE001 - a warning whose str() fails is still shown
        text = ""
    if text:
        _recent_warnings.append(text[:MAX_WARNING_CHARS])
    previous = _Settings.previous_showwarning or warnings._showwarning_orig  # type: ignore[attr-defined]
    previous(message, category, filename, lineno, file, line)


def findings_text(exception: BaseException, traceback: TracebackType | None = None) -> str:
    """The entries matching ``exception`` (its chain, and the warnings recorded before it),
    as printed under its traceback; empty when none matches or when this exception was
    reported already (a callback reported it, then it ended the script); one line when
    no diagnosis could be made. Never raises."""
    if _Settings.unreadable or any(item is exception for item in _reported):
        return ""
    _reported.append(exception)
    recorded = list(_recent_warnings)
    _recent_warnings.clear()
    try:
        with warnings.catch_warnings():  # what loading the matcher warns is not the run's
            warnings.simplefilter("ignore")
            from failpedia.integrations.matching import exception_findings

            return exception_findings(
                exception, traceback, recorded, _Settings.index, _Settings.entries
            )
    except Exception as error:  # noqa: BLE001 - the hook steps aside, in one line
        _Settings.unreadable = True
        return f"failpedia: no diagnosis ({_first_line(error)})"
    except BaseException:  # noqa: BLE001 - Ctrl-C while the index loads ends the diagnosis
        return "failpedia: no diagnosis (interrupted)"


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def print_findings(text: str) -> None:
    """``text`` on stderr after a blank line, if there is a stderr to write to."""
    stream = sys.stderr
    if not text or stream is None:
        return
    try:
        stream.write("\n" + text + "\n")
        stream.flush()
    except Exception:  # noqa: BLE001 - stderr closed: the exit status still tells
        pass


def show_findings(exception: BaseException) -> None:
    """Report ``exception`` where its user reads: rendered in a notebook, else on stderr."""
    text = findings_text(exception, exception.__traceback__)
    shell = running_shell()
    if shell is not None and text:
        from failpedia.integrations.ipython import display_findings

        display_findings(text)
    else:
        print_findings(text)


def running_shell() -> Any:
    """The IPython shell this process runs cells in (a notebook's kernel), or None."""
    ipython = sys.modules.get("IPython")
    if ipython is None:  # never imported: no shell runs
        return None
    try:
        return ipython.get_ipython()
    except Exception:  # noqa: BLE001 - an IPython too old or half imported
        return None


def install_where_it_runs() -> None:
    """What the trainer callbacks arm: the notebook extension in a notebook, the hooks of
    ``failpedia.hook`` in a script."""
    shell = running_shell()
    if shell is not None and hasattr(shell, "set_custom_exc"):
        from failpedia.integrations.ipython import load

        load(shell)
    else:
        install(_Settings.index, _Settings.entries)


def _excepthook(
    kind: type[BaseException], exception: BaseException, traceback: TracebackType | None
) -> None:
    previous = _Settings.previous_excepthook or sys.__excepthook__
    previous(kind, exception, traceback)
    if isinstance(exception, Exception):
        print_findings(findings_text(exception, traceback))


def _threading_excepthook(args: threading.ExceptHookArgs) -> None:
    previous = _Settings.previous_threading_hook or threading.__excepthook__
    previous(args)
    if isinstance(args.exc_value, Exception):
        print_findings(findings_text(args.exc_value, args.exc_traceback))
