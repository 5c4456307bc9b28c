"""When each page's source last changed, from git: the ``lastmod`` of the sitemap and the
``dateModified`` of an entry page's structured data.

One ``git log`` per folder and build. Outside a git checkout, in a shallow clone (where
every file seems to date from the one commit there is) or where git is missing, nothing
is known and pages carry no date: the build's own date would claim every page changed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

_COMMIT = "\x00"  # starts each commit's line in the log: NUL, then its committer date


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def last_commit_dates(folder: Path, depth: int | None) -> dict[str, str]:
    """The committer date (ISO 8601) of the last commit that touched each path under
    ``folder``, keyed by its first ``depth`` parts relative to ``folder``: depth 2 under
    ``entries`` gives ``{"cuda/cuda-oom": "2026-12-01T10:00:00+00:00"}``, one date per
    entry folder; depth None keys each file by its whole path. Empty when git cannot say
    (see the module's docstring)."""
    if not folder.is_dir():
        return {}
    shallow = _git(folder, "rev-parse", "--is-shallow-repository")
    if shallow is None or shallow.strip() != "false":
        return {}
    log = _git(folder, "log", "--format=%x00%cI", "--name-only", "--relative", "--", ".")
    dates: dict[str, str] = {}
    date = ""
    for line in (log or "").splitlines():
        if line.startswith(_COMMIT):
            date = line[1:].strip()
        elif line and date:
            key = "/".join(Path(line).parts[:depth])
            dates.setdefault(key, date)  # the log runs newest first
    return dates
