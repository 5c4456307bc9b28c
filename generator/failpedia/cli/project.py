"""What every catalog command starts with: the project's settings, and its catalog
checked, or every problem printed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from failpedia.catalog.catalog import Catalog
from failpedia.catalog.problems import ProblemList
from failpedia.catalog.validate import load_catalog
from failpedia.settings import ProjectSettings, read_settings


def project_settings(args: argparse.Namespace) -> ProjectSettings:
    """The settings of the project that ``--root`` names."""
    return read_settings(Path(args.root).resolve())


def report_problems(problems: ProblemList) -> int:
    """Print every problem and their count to stderr; the exit code for problems."""
    print(problems.report(), file=sys.stderr)
    count = len(problems)
    print(f"{count} problem{'s' * (count > 1)} found.", file=sys.stderr)
    return 1


def checked_catalog(settings: ProjectSettings) -> Catalog | int:
    """The project's catalog, or (every problem printed) the exit code for problems."""
    catalog, problems = load_catalog(
        settings.entries_dir, settings.root, settings.docs_dir, settings.healthy_logs_dir
    )
    if problems:
        return report_problems(problems)
    return catalog


def catalog_for_entries(settings: ProjectSettings, ids: list[str]) -> Catalog | int:
    """The catalog for a command about some entries only: problems in other entries are
    one warning (``failpedia validate`` lists them), problems in these stop it."""
    catalog, problems = load_catalog(
        settings.entries_dir, settings.root, settings.docs_dir, settings.healthy_logs_dir
    )
    if not problems:
        return catalog
    folders = {f"/{entry_id}/" for entry_id in ids}
    own = ProblemList()
    for problem in problems:
        if any(folder in f"/{problem.path}" for folder in folders):
            own.add(problem.path, problem.line, problem.field, problem.message)
    if own:
        return report_problems(own)
    others = len({problem.path for problem in problems})
    print(
        f"warning: {others} other file{'s' * (others > 1)} with problems left out; "
        "`failpedia validate` lists them",
        file=sys.stderr,
    )
    return catalog
