"""What the ``failpedia`` commands' exit statuses mean, declared once: the statuses the
commands return, and what each means per command. Each command's ``--help`` ends with its
own (``epilog``), and the README's paragraph is written from the same data
(``failpedia docs``)."""

from __future__ import annotations

import signal

SUCCESS = 0
PROBLEMS = 1
# ``diagnose`` and ``explain``: nothing in the catalog matched.
NONE_FOUND = 1
USAGE = 2
INTERRUPTED = 128 + signal.SIGINT
STOPPED = 128 + signal.SIGTERM

# ``(status, meaning)`` by command; "*" for every command not named.
EXIT_CODES: dict[str, tuple[tuple[str, str], ...]] = {
    "*": (
        (str(SUCCESS), "success"),
        (str(PROBLEMS), "problems in entries"),
        (str(USAGE), "bad usage"),
    ),
    "schema": (
        (str(SUCCESS), "the schemas were written, or are up to date"),
        (str(PROBLEMS), "with `--check`, a schema is out of date or cannot be read"),
    ),
    "docs": (
        (str(SUCCESS), "the regions were written, or are up to date"),
        (
            str(PROBLEMS),
            "with `--check`, a region is out of date; or a document's markers or a part's "
            "declaration cannot be read",
        ),
    ),
    "verify": (
        (
            str(SUCCESS),
            "every selected entry proved, or skipped for a missing device or requirement "
            "(with `--require-packages`, a missing requirement is a failure)",
        ),
        (
            str(PROBLEMS),
            "any entry not-reproduced, fix-failed, timed-out or harness-error, or problems "
            "in entries",
        ),
        (
            str(USAGE),
            "bad usage (an unknown entry id, a bad git ref), or bubblewrap cannot contain "
            "reproducers here and `--unsafe-uncontained` was not given",
        ),
        (str(INTERRUPTED), "interrupted (SIGINT)"),
        (str(STOPPED), "stopped (SIGTERM); running reproducers are stopped with it"),
    ),
    "releases": (
        (str(SUCCESS), "every signature's release range holds for the releases installed here"),
        (str(PROBLEMS), "any does not, or problems in entries"),
    ),
    "diagnose": (
        (str(SUCCESS), "a known failure was found"),
        (str(NONE_FOUND), "none was"),
        (
            str(USAGE),
            "an input could not be read, whether named or inside a folder given, each named "
            "on an `error:` line (the others are still reported), or no signature index is "
            "available",
        ),
        (str(INTERRUPTED), "interrupted"),
    ),
    "run": (
        (
            "CMD's",
            "own exit status (128+N when signal N killed it, 127 when it was not found, 126 "
            "when it could not run)",
        ),
        (
            str(USAGE),
            "bad usage or no signature index, before CMD starts (the index is compiled "
            "beside CMD, which starts at once)",
        ),
    ),
    "report": (
        (str(SUCCESS), "the report was written"),
        (
            str(USAGE),
            "a log could not be read (the report covers the others) or no signature index "
            "is available",
        ),
    ),
    "explain": (
        (str(SUCCESS), "an entry was printed"),
        (
            str(NONE_FOUND),
            "no signature matches a pasted message (the entries nearest in wording are listed)",
        ),
        (str(USAGE), "no such id, or no signature index"),
    ),
}


def epilog(command: str) -> str:
    """The end of ``failpedia COMMAND --help``: what its exit statuses mean."""
    codes = EXIT_CODES.get(command, EXIT_CODES["*"])
    return "Exit codes: " + "; ".join(f"{status} {meaning}" for status, meaning in codes) + "."
