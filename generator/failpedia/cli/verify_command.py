"""``failpedia verify`` and ``failpedia merge-records``: the command line of the
verification run (``verify.verification_run``) and of bringing records home.

Verify says first how reproducers are contained; where they cannot be, it refuses to run
them unless ``--unsafe-uncontained`` asks for it. SIGINT and SIGTERM stop the running
reproducers, remove their temporary folders, and exit 130 and 143.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from failpedia.catalog.catalog import Catalog
from failpedia.cli.exit_codes import PROBLEMS, SUCCESS, USAGE
from failpedia.cli.project import catalog_for_entries, checked_catalog, project_settings
from failpedia.verify import records
from failpedia.verify.verification_run import VerifyOptions, run_verification


def cmd_verify(args: argparse.Namespace) -> int:
    settings = project_settings(args)
    # Entries named on the command line need only themselves valid.
    catalog = catalog_for_entries(settings, args.ids) if args.ids else checked_catalog(settings)
    if not isinstance(catalog, Catalog):
        return catalog
    options = VerifyOptions(
        ids=tuple(args.ids),
        device=args.device,
        jobs=args.jobs,
        since=args.since,
        changed=args.changed,
        rotation=args.rotation,
        json=args.json,
        require_packages=args.require_packages,
        unsafe_uncontained=args.unsafe_uncontained,
        record=args.record,
        records=Path(args.records) if args.records else None,
        shard=args.shard,
    )
    return run_verification(options, settings, catalog)


def cmd_merge_records(args: argparse.Namespace) -> int:
    """``failpedia merge-records DIR [DEST]``: bring records made on another machine home."""
    settings = project_settings(args)
    source = Path(args.source)
    destination = Path(args.destination) if args.destination else settings.records_dir
    if not source.is_dir():
        print(f"failpedia merge-records: {source}: not a folder", file=sys.stderr)
        return USAGE
    destination.mkdir(parents=True, exist_ok=True)
    merged, problems = records.merge_records(source, destination)
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    print(f"{merged} result{'s' * (merged != 1)} merged into {destination}")
    return PROBLEMS if problems else SUCCESS
