"""``failpedia report [LOG ...]``: turn a failure into an issue body, so that whoever hit a
failure the catalog lacks can hand it on.

The body (stdout) holds the diagnosis of the logs (or, when nothing matched, the most
error-like lines with their context), the environment fingerprint the runner records, and
the ``failpedia new`` line that starts the entry. Home folders and what looks like a
token are redacted. A link to the issue form, filled in where it fits, goes to stderr.

Exit codes: 0 the report was written; 2 a log could not be read (the report still covers
the others) or no signature index is available.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys

from failpedia.cli.exit_codes import SUCCESS, USAGE
from failpedia.cli.logs_commands import index_source_of
from failpedia.diagnose.diagnosis import diagnose
from failpedia.diagnose.findings import Diagnosis
from failpedia.diagnose.sources import collect_inputs
from failpedia.project import index_source
from failpedia.report.issue_report import REPORT_PACKAGES, issue_report
from failpedia.signatures.index_format import IndexUnavailable
from failpedia.signatures.redaction import Redactor
from failpedia.site.issue_links import new_issue_url
from failpedia.verify.fingerprint import gather


def _login_name() -> str | None:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this user id
        return None


def cmd_report(args: argparse.Namespace) -> int:
    paths: list[str] = list(args.paths)
    if not paths and not sys.stdin.isatty():
        paths = ["-"]
    inputs, problems = collect_inputs(paths) if paths else ([], [])
    try:
        index = index_source.load_index(index_source_of(args))
        diagnosis: Diagnosis | None = None
        if paths:
            diagnosis = diagnose(inputs, index, context=args.context)
            problems += diagnosis.problems
    except IndexUnavailable as error:
        print(f"failpedia report: {error}", file=sys.stderr)
        return USAGE
    redact = Redactor(os.environ.get("HOME") or os.path.expanduser("~"), _login_name())
    environment = gather(REPORT_PACKAGES, python=args.python, environ=os.environ)
    report = issue_report(diagnosis, environment, index, redact)
    print(report.body, end="")
    for problem in problems:
        print(f"error: {redact(problem)}", file=sys.stderr)
    url = new_issue_url(index.repo_url, report.form, report.title, report.fields)
    if url:
        print(
            f"\nOpen the issue (the report is filled in where it fits in the link; "
            f"otherwise paste it):\n{url}",
            file=sys.stderr,
        )
    return USAGE if problems else SUCCESS
