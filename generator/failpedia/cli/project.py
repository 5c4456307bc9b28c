"""What every catalog command starts with: the project's settings, and its catalog
checked, or every problem printed."""

from __future__ import annotations

import argparse
import sys

from failpedia.catalog.catalog import Catalog
from failpedia.catalog.problems import ProblemList
from failpedia.catalog.validate import check_catalog, load_catalog
from failpedia.cli.exit_codes import PROBLEMS
from failpedia.project.index_compile import left_out_text
from failpedia.project.locate import project_or_here
from failpedia.settings import ProjectSettings


def project_settings(args: argparse.Namespace) -> ProjectSettings:
    """The settings of the project that ``--root`` names, or that is found here."""
    return project_or_here(args.root)


def report_problems(problems: ProblemList) -> int:
    """Print every problem and their count to stderr; the exit code for problems."""
    print(problems.report(), file=sys.stderr)
    count = len(problems)
    print(f"{count} problem{'s' * (count > 1)} found.", file=sys.stderr)
    return PROBLEMS


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
    check = check_catalog(
        settings.entries_dir, settings.root, settings.docs_dir, settings.healthy_logs_dir
    )
    if not check.problems:
        return check.catalog
    folders = {f"/{entry_id}/" for entry_id in ids}
    own = ProblemList(
        problem for problem in check.problems if any(f in f"/{problem.path}" for f in folders)
    )
    if own:
        return report_problems(own)
    print(f"warning: {left_out_text(check.left_out, len(check.problems))}", file=sys.stderr)
    return check.catalog
