"""The commands that read or write the catalog: validate, new, render, requirements,
schema, index."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from failpedia.catalog.bounded_read import RefusedFile, read_bounded
from failpedia.catalog.catalog import Catalog
from failpedia.catalog.entry_files import MAX_FILE_BYTES
from failpedia.catalog.index_build import write_package_data
from failpedia.catalog.json_schema import SCHEMA_FILENAMES, schema_text, write_schemas
from failpedia.catalog.problems import ProblemList, display_path
from failpedia.catalog.scaffold import scaffold_entry
from failpedia.catalog.validate import load_catalog, load_categories
from failpedia.cli.exit_codes import PROBLEMS, SUCCESS, USAGE
from failpedia.cli.project import checked_catalog, project_settings, report_problems
from failpedia.settings import ProjectSettings
from failpedia.site.pipeline import SiteRefused, build_site
from failpedia.site.proof import Proof, load_proofs
from failpedia.site.render import write_pages
from failpedia.verify.environment import private_folder


def _catalog_and_proofs(
    settings: ProjectSettings,
) -> tuple[Catalog, dict[str, Proof], ProblemList]:
    """Every entry and the verification record of each, with the problems of both: a
    record the site cannot show would otherwise first fail ``mkdocs build``."""
    catalog, problems = load_catalog(
        settings.entries_dir, settings.root, settings.docs_dir, settings.healthy_logs_dir
    )
    proofs, record_problems = load_proofs(catalog, settings.records_dir, settings.root)
    problems.extend(record_problems)
    return catalog, proofs, problems


def cmd_validate(args: argparse.Namespace) -> int:
    """Check every entry, and the verification record of each."""
    catalog, _, problems = _catalog_and_proofs(project_settings(args))
    if problems:
        return report_problems(problems)
    categories = len({item.entry.category for item in catalog.entries})
    print(f"{len(catalog.entries)} entries in {categories} categories: no problems.")
    return SUCCESS


def cmd_new(args: argparse.Namespace) -> int:
    settings = project_settings(args)
    problems = ProblemList()
    categories = {
        category.id for category in load_categories(settings.entries_dir, settings.root, problems)
    }
    if problems:
        return report_problems(problems)
    try:
        folder = scaffold_entry(settings.entries_dir, args.target, categories, args.evidence)
    except ValueError as error:
        print(f"failpedia new: {error}", file=sys.stderr)
        return USAGE
    made = "entry.yaml" if args.evidence else "entry.yaml and repro.py"
    print(f"created {folder.relative_to(settings.root)}/{made}")
    print("fill in every TODO; `failpedia validate` names each one left")
    return SUCCESS


def cmd_render(args: argparse.Namespace) -> int:
    """Write the pages ``mkdocs build`` builds (the same function builds both)."""
    try:
        pages = build_site(project_settings(args)).pages
    except SiteRefused as refused:
        return report_problems(refused.problems)
    out = Path(args.out)
    write_pages(pages, out)
    print(f"wrote {len(pages)} pages to {out}")
    return SUCCESS


def cmd_requirements(args: argparse.Namespace) -> int:
    """Print the pinned packages the selected reproducers declare, for `pip install`; with
    ``--private``, those installed apart, each with its folder (`pip install --no-deps
    --target FOLDER PIN`)."""
    catalog = checked_catalog(project_settings(args))
    if not isinstance(catalog, Catalog):
        return catalog
    pins = sorted(
        {
            requirement
            for item in catalog.entries
            if item.entry.reproducer and args.device in ("all", item.entry.reproducer.device)
            for requirement in (
                item.entry.reproducer.private_requirements
                if args.private
                else item.entry.reproducer.requirements
            )
        }
    )
    for pin in pins:
        print(f"{pin} {private_folder(pin)}" if args.private else pin)
    return SUCCESS


def cmd_schema(args: argparse.Namespace) -> int:
    settings = project_settings(args)
    entries_dir = settings.entries_dir
    if args.check:
        problems = ProblemList()
        stale = []
        for name, model in SCHEMA_FILENAMES.items():
            try:
                text = read_bounded(entries_dir / name, within=entries_dir, limit=MAX_FILE_BYTES)
            except RefusedFile as refused:
                if not refused.missing:
                    problems.add(
                        display_path(entries_dir / name, settings.root), 0, "", refused.message
                    )
                    continue
                text = b""
            if text != schema_text(model).encode("utf-8"):
                stale.append(name)
        if problems:
            return report_problems(problems)
        for name in stale:
            print(f"{entries_dir / name} is out of date; run `failpedia schema`", file=sys.stderr)
        return PROBLEMS if stale else SUCCESS
    for path in write_schemas(entries_dir):
        print(f"wrote {path.relative_to(settings.root)}")
    return SUCCESS


def cmd_index(args: argparse.Namespace) -> int:
    settings = project_settings(args)
    catalog = checked_catalog(settings)
    if not isinstance(catalog, Catalog):
        return catalog
    for path in write_package_data(catalog, settings.site_url, Path(args.out), settings.repo_url):
        print(f"wrote {path}")
    return SUCCESS
