"""Links that open a prefilled issue on the project's repository, one of its issue forms.

GitHub fills an issue form from the query string of ``<repo>/issues/new``: ``template``
names the form (a file in ``.github/ISSUE_TEMPLATE/``), ``title`` the title, and each
field's ``id`` its value. GitHub refuses links much over 8 KB, so a field that would make
the link longer than ``MAX_URL_LENGTH`` is left for the reader to paste. The forms, fields
and limits are data (``signatures.issue_forms``), which ``signatures.json`` publishes: the
log page builds its link in ``docs/assets/diagnose.js`` from them;
``tests/site/test_issue_forms.py`` checks that every field a link fills is a field of its
form.
"""

from __future__ import annotations

from urllib.parse import quote

from failpedia.signatures.issue_forms import ENTRY_FIELD as ENTRY_FIELD
from failpedia.signatures.issue_forms import ENTRY_WRONG_FORM as ENTRY_WRONG_FORM
from failpedia.signatures.issue_forms import ENVIRONMENT_FIELD as ENVIRONMENT_FIELD
from failpedia.signatures.issue_forms import MAX_TITLE_LENGTH, MAX_URL_LENGTH
from failpedia.signatures.issue_forms import REPORT_FIELD as REPORT_FIELD
from failpedia.signatures.issue_forms import UNKNOWN_FAILURE_FORM as UNKNOWN_FAILURE_FORM


def short_title(text: str) -> str:
    """One line, at most ``MAX_TITLE_LENGTH`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= MAX_TITLE_LENGTH else line[: MAX_TITLE_LENGTH - 1] + "…"


def new_issue_url(
    repo_url: str | None, form: str, title: str, fields: dict[str, str] | None = None
) -> str | None:
    """The link that opens ``form`` with ``title`` and ``fields`` filled in; fields that do
    not fit are left out, the longest first. None without a repository."""
    if not repo_url:
        return None
    base = f"{repo_url.rstrip('/')}/issues/new?template={quote(form)}"
    base += f"&title={quote(short_title(title), safe='')}"
    parts = {
        name: f"&{quote(name)}={quote(value, safe='')}" for name, value in (fields or {}).items()
    }
    while parts and len(base) + sum(len(part) for part in parts.values()) > MAX_URL_LENGTH:
        del parts[max(parts, key=lambda name: len(parts[name]))]
    return base + "".join(parts.values())
