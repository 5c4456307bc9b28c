"""What ``mkdocs serve`` does with problems in entries: preview the rest, not stop.

A problem in an entry file (a draft, or a file outside ``<category>/<id>/``) or in a
verification record leaves that file out and the preview goes on: the terminal shows the
problem as a warning, and a draft's page shows its own. Any other problem (the category
registry, a missing entries folder) leaves nothing sensible to lay out, so the preview
stops as a build does.

These warnings bypass the counter of mkdocs's strict mode (``strict: true`` in
``mkdocs.yml``), which would otherwise stop the preview at the first draft: being strict
is the job of ``mkdocs build``, ``failpedia validate`` and CI.
"""

from __future__ import annotations

import logging

from mkdocs.utils import CountHandler

from failpedia.catalog.problems import Problem, ProblemList
from failpedia.catalog.validate import CatalogCheck


class _TerminalOnly(logging.Handler):
    """Hands each record to the handlers of mkdocs's terminal, and not to the counter
    that strict mode installs next to them."""

    def emit(self, record: logging.LogRecord) -> None:
        handlers = [
            handler
            for handler in logging.getLogger("mkdocs").handlers
            if not isinstance(handler, CountHandler)
        ]
        if not handlers and logging.lastResort is not None:
            handlers = [logging.lastResort]
        for handler in handlers:
            if record.levelno >= handler.level:
                handler.handle(record)


_terminal = logging.getLogger("failpedia.preview")
_terminal.propagate = False
if not _terminal.handlers:
    _terminal.addHandler(_TerminalOnly())


def blocking_problems(check: CatalogCheck, record_problems: list[Problem]) -> ProblemList:
    """The problems a preview cannot get past: those not in an entry file or a record."""
    tolerated = {draft.display_path for draft in check.drafts}
    tolerated.update(check.misplaced)
    tolerated.update(problem.path for problem in record_problems)
    return ProblemList(problem for problem in check.problems if problem.path not in tolerated)


def warn_in_terminal(problems: ProblemList, check: CatalogCheck) -> None:
    """Every problem as a warning, then which pages show them."""
    for problem in sorted(problems):
        _terminal.warning("failpedia: %s", problem)
    if not check.left_out:
        return
    count = check.left_out
    pages = ", ".join(draft.page_path.removesuffix(".md") + "/" for draft in check.drafts)
    _terminal.warning(
        "failpedia: %d entry file%s with problems left out of the site; `mkdocs build` fails "
        "until they are fixed%s",
        count,
        "s" * (count != 1),
        f"; their pages in this preview: {pages}" if pages else "",
    )
