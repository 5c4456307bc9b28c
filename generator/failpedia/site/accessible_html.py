"""Names for the controls Markdown extensions make without one, so a screen reader can
say what each is (axe's ``label`` rule; ``tests/site/test_accessibility_browser.py``).

The tasklist extension (an entry's "Confirm it" steps) writes each step's checkbox as an
empty ``<label>`` around the ``<input>``, with the step's text after the label: the
checkbox has no accessible name. Each gets ``aria-label="Step N done"``, numbered in
page order (a page has one such list), read before the step's own text.
"""

from __future__ import annotations

import itertools
import re

from markdown import Markdown
from markdown.extensions import Extension
from markdown.postprocessors import Postprocessor

# pymdownx.tasklist with custom_checkbox: one list item's opening and its checkbox.
_TASK_CHECKBOX = re.compile(
    r'(<li class="task-list-item"><label class="task-list-control">)<input type="checkbox"'
)


def label_task_checkboxes(html: str) -> str:
    """``html`` with every task-list checkbox named after its step's place on the page."""
    steps = itertools.count(1)
    return _TASK_CHECKBOX.sub(
        lambda item: f'{item.group(1)}<input aria-label="Step {next(steps)} done" type="checkbox"',
        html,
    )


class _TaskLabels(Postprocessor):
    def run(self, text: str) -> str:
        return label_task_checkboxes(text)


class AccessibleHtmlExtension(Extension):
    """``label_task_checkboxes`` after the stashed HTML (the checkboxes) is restored."""

    def extendMarkdown(self, md: Markdown) -> None:
        # Below the raw-HTML postprocessor (30), which puts the checkboxes back.
        md.postprocessors.register(_TaskLabels(md), "failpedia_task_labels", 5)


def makeExtension(**kwargs: object) -> AccessibleHtmlExtension:
    return AccessibleHtmlExtension(**kwargs)  # type: ignore[no-untyped-call]
