"""The issue forms that links open prefilled, and the limits of such a link: data that
``site.issue_links`` (entry pages), ``failpedia report`` and the log page all read.

The forms are files in ``.github/ISSUE_TEMPLATE/``; a field is named by its ``id`` there.
``signatures.json`` publishes this table (``issue_forms``) so the log page's link to an
unknown failure fills the same form, the same field, within the same limits, as the
command line's, without a copy of them in its code.
"""

from __future__ import annotations

from typing import Any

UNKNOWN_FAILURE_FORM = "unknown-failure.yml"
ENTRY_WRONG_FORM = "entry-wrong.yml"
# The ids of the forms' fields that links fill in.
REPORT_FIELD = "report"  # unknown-failure.yml: the output of `failpedia report`
ENTRY_FIELD = "entry"  # entry-wrong.yml: the entry's id
ENVIRONMENT_FIELD = "environment"  # entry-wrong.yml: versions and hardware
# GitHub refuses links much over 8 KB.
MAX_URL_LENGTH = 8000
MAX_TITLE_LENGTH = 120
MAX_SHOWN_LINE = 500  # characters of one log line in a report


def published_issue_forms() -> dict[str, Any]:
    """What the log page needs of the table above, as ``signatures.json`` carries it."""
    return {
        "unknown_failure_form": UNKNOWN_FAILURE_FORM,
        "report_field": REPORT_FIELD,
        "max_url_length": MAX_URL_LENGTH,
        "max_title_length": MAX_TITLE_LENGTH,
        "max_shown_line": MAX_SHOWN_LINE,
    }
