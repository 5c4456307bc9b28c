"""``failpedia docs [--check]``: write, or check, the regions of README.md and
CONTRIBUTING.md that are generated from the interface (the parser, the exit codes, the
entry model and the parts' declarations)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from failpedia.cli.exit_codes import EXIT_CODES, PROBLEMS, SUCCESS
from failpedia.docgen.documents import project_regions
from failpedia.docgen.layering import DeclarationError
from failpedia.docgen.regions import RegionError, update
from failpedia.project.locate import find_project


def cmd_docs(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Rewrite each region from what it describes; with ``--check``, name each stale one."""
    # The documents lie beside the package they describe: --root, else the project here,
    # else the checkout the package runs from.
    project = None if args.root is not None else find_project(None)
    root = project.root if project is not None else Path(args.root or ".")
    try:
        outcomes = update(root, project_regions(parser, EXIT_CODES), check=args.check)
    except (DeclarationError, RegionError) as error:
        print(f"failpedia docs: {error}", file=sys.stderr)
        return PROBLEMS
    stale = [message for outcome in outcomes for message in outcome.stale]
    if args.check:
        for message in stale:
            print(message, file=sys.stderr)
        return PROBLEMS if stale else SUCCESS
    for outcome in outcomes:
        print(f"wrote {outcome.document}" if outcome.written else f"{outcome.document}: up to date")
    return SUCCESS
