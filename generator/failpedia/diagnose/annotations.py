"""A diagnosis as one line per finding, for the tools that place it on the log:
GitHub Actions workflow commands (``diagnose --format github``), which annotate the job's
log and summary, and compiler-style lines (``--format gcc``), which editors' problem
matchers read (``editors/vscode/tasks.json`` holds one for exactly this shape)::

    ::error file=train.log,line=24,title=failpedia%3A ID::TITLE [ID, ROLE]: ANSWER URL%0ALINE
    train.log:24: error: TITLE [ID, ROLE]: ANSWER URL

Each line points at the finding's first occurrence: the file diagnose named (the log, the
gzip file, the rank's file inside a folder; standard input is ``-`` for GitHub and
``<stdin>``, as gcc names it, for editors) and its line there, counted at newlines.
Crashes and hangs are errors; the kinds a run survives, warnings (``ends_the_run``).

Log text, file names and entries are untrusted. Every value in a workflow command is
escaped as GitHub's runner unescapes it, so nothing in them can end the line or the
command's properties and start another command. A gcc line shows control characters and
Unicode line separators as ``visible`` does (``^J``, ``\\u2028``): it stays one line, and
JavaScript's ``.`` (VS Code) and Python's read it alike.
"""

from __future__ import annotations

from collections.abc import Collection

from failpedia.diagnose.findings import Diagnosis, Finding
from failpedia.diagnose.output import plain_summary, visible
from failpedia.signatures.finding_order import ROLE_TEXT, ends_the_run

GITHUB_STDIN = "-"
GCC_STDIN = "<stdin>"


def severity(finding: Finding) -> str:
    """``error`` for a failure that ends the run, ``warning`` for one it survives."""
    return "error" if ends_the_run(finding.entry.kind) else "warning"


def finding_message(finding: Finding, quick_answer: bool = True) -> str:
    """The finding in one line: its entry's title, id and role, its quick answer (left
    out for ``--brief``) and the URL of its page."""
    entry = finding.entry
    role = ROLE_TEXT.get(entry.role, entry.role)
    answer = f" {plain_summary(entry.summary)}" if quick_answer and entry.summary else ""
    return f"{entry.title} [{entry.id}, {role}]:{answer} {finding.url}"


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's toolkit escapes it: the runner
    turns ``%25``, ``%0D`` and ``%0A`` back, and no raw line break reaches the log."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: its message's escapes, and ``:`` and ``,``,
    which would end the properties or start another."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_lines(
    diagnosis: Diagnosis, stdin_sources: Collection[int], quick_answer: bool = True
) -> list[str]:
    """One ``::error`` or ``::warning`` workflow command per finding, initiating first.
    The matched log line follows the message on a line of its own: the annotation shows
    it where the log is not a file of the repository. ``stdin_sources`` are the inputs
    read from standard input."""
    lines = []
    for finding in diagnosis.findings:
        first = finding.first
        assert first is not None
        file = GITHUB_STDIN if first.source in stdin_sources else first.file
        properties = {
            "file": file,
            "line": str(first.line),
            "title": f"failpedia: {finding.entry.id}",
        }
        rank = f" (rank {first.rank})" if first.rank is not None else ""
        message = (
            f"{finding_message(finding, quick_answer)}\n"
            f"line {first.line}{rank}: {visible(first.text.strip())}"
        )
        shown = ",".join(f"{name}={escape_property(value)}" for name, value in properties.items())
        lines.append(f"::{severity(finding)} {shown}::{escape_data(message)}")
    return lines


# What a gcc line shows besides ``visible``'s controls: a tab (a control character too) and
# the line separators JavaScript's ``.`` stops at, and Python's does not.
_ONE_LINE = str.maketrans({"\t": "^I", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def gcc_lines(
    diagnosis: Diagnosis, stdin_sources: Collection[int], quick_answer: bool = True
) -> list[str]:
    """One ``FILE:LINE: error: MESSAGE`` (or ``warning``) line per finding, initiating
    first, as compilers print them and editors' problem matchers read them."""
    lines = []
    for finding in diagnosis.findings:
        first = finding.first
        assert first is not None
        file = GCC_STDIN if first.source in stdin_sources else first.file
        line = f"{file}:{first.line}: {severity(finding)}: {finding_message(finding, quick_answer)}"
        lines.append(visible(line).translate(_ONE_LINE))
    return lines
