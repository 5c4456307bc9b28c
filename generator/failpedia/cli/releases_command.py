"""``failpedia releases``: check every signature's release ranges against the releases
installed here, which must be the ones the catalog pins (``verify.release_claims``)."""

from __future__ import annotations

import argparse

from failpedia.catalog.catalog import Catalog
from failpedia.catalog.problems import ProblemList
from failpedia.cli.exit_codes import SUCCESS
from failpedia.cli.project import checked_catalog, project_settings, report_problems
from failpedia.verify.release_claims import check_release_claims


def cmd_releases(args: argparse.Namespace) -> int:
    """Print each range that does not hold as a problem (or every range, with ``--list``);
    exit 1 when any does not hold."""
    settings = project_settings(args)
    catalog = checked_catalog(settings)
    if not isinstance(catalog, Catalog):
        return catalog
    results = check_release_claims(catalog, settings.records_dir)
    if args.list:
        for result in results:
            verdict = "holds" if result.holds else "WRONG"
            print(f"{result.entry.entry.id} {result.field}: {verdict}: {result.reason}")
    problems = ProblemList()
    for result in results:
        if not result.holds:
            problems.add(result.entry.display_path, 0, result.field, result.reason)
    installed = sorted(
        {f"{result.claim.package} {result.installed}" for result in results if result.installed}
    )
    on = f" ({', '.join(installed)})" if installed else ""
    if problems:
        return report_problems(problems)
    print(f"{len(results)} release claims hold for the installed releases{on}.")
    return SUCCESS
