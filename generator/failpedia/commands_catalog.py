"""The commands that read or write the catalog: validate, new, render, requirements,
schema, index."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import sigindex
from .catalog import Catalog
from .problems import ProblemList
from .proof import load_proofs
from .render import SiteSettings, render_site, write_pages
from .scaffold import scaffold_entry
from .schema import SCHEMA_FILENAMES, schema_text, write_schemas
from .siteconfig import read_site_config
from .validator import load_catalog, load_categories


def project_paths(args: argparse.Namespace) -> tuple[Path, Path]:
    root = Path(args.root).resolve()
    return root, root / read_site_config(root / "mkdocs.yml").entries_dir


def report_problems(problems: ProblemList) -> int:
    """Print every problem and their count to stderr; the exit code for problems."""
    print(problems.report(), file=sys.stderr)
    count = len(problems)
    print(f"{count} problem{'s' * (count > 1)} found.", file=sys.stderr)
    return 1


def _engine_problems(catalog: Catalog, root: Path) -> ProblemList:
    """Patterns that pass the dialect but that Hyperscan, the linear-time engine behind
    ``failpedia diagnose``, would refuse (too large a repeat, for one)."""
    from .matcher import engine_refusals
    from .yamlsource import parse_yaml

    located = [
        (item, number, pattern)
        for item in catalog.entries for number, pattern in enumerate(item.patterns)
    ]
    refused = engine_refusals([pattern.canonical for _, _, pattern in located]) or {}
    problems = ProblemList()
    for position, reason in sorted(refused.items()):
        item, number, _ = located[position]
        document = parse_yaml(item.path.read_text(encoding="utf-8"))
        line = document.line_of(("signatures", number, "pattern"))
        problems.add(item.display_path, line, f"signatures[{number}].pattern",
                     f"the matching engine refuses this pattern: {reason}")
    return problems


def cmd_validate(args: argparse.Namespace) -> int:
    root, entries_dir = project_paths(args)
    catalog, problems = load_catalog(entries_dir, root)
    if problems:
        return report_problems(problems)
    problems = _engine_problems(catalog, root)
    if problems:
        return report_problems(problems)
    categories = len({item.entry.category for item in catalog.entries})
    print(f"{len(catalog.entries)} entries in {categories} categories: no problems.")
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    root, entries_dir = project_paths(args)
    problems = ProblemList()
    categories = {category.id for category in load_categories(entries_dir, root, problems)}
    if problems:
        return report_problems(problems)
    try:
        folder = scaffold_entry(entries_dir, args.target, categories)
    except ValueError as error:
        print(f"failpedia new: {error}", file=sys.stderr)
        return 2
    print(f"created {folder.relative_to(root)}/entry.yaml and repro.py")
    print("fill in every TODO; `failpedia validate` names each one left")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    root, entries_dir = project_paths(args)
    catalog, problems = load_catalog(entries_dir, root)
    site = read_site_config(root / "mkdocs.yml")
    proofs, record_problems = load_proofs(catalog, root / site.records_dir, root)
    problems.extend(record_problems)
    if problems:
        return report_problems(problems)
    settings = SiteSettings(site.edit_base)
    pages = render_site(catalog, root / site.templates_dir, settings, proofs)
    out = Path(args.out)
    write_pages(pages, out)
    print(f"wrote {len(pages)} pages to {out}")
    return 0


def cmd_requirements(args: argparse.Namespace) -> int:
    """Print the pinned packages the selected reproducers declare, for `pip install`."""
    root, entries_dir = project_paths(args)
    catalog, problems = load_catalog(entries_dir, root)
    if problems:
        return report_problems(problems)
    pins = sorted(
        {
            requirement
            for item in catalog.entries
            if args.device in ("all", item.entry.reproducer.device)
            for requirement in item.entry.reproducer.requirements
        }
    )
    for pin in pins:
        print(pin)
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    root, entries_dir = project_paths(args)
    if args.check:
        stale = [
            name
            for name, model in SCHEMA_FILENAMES.items()
            if not (entries_dir / name).is_file()
            or (entries_dir / name).read_text(encoding="utf-8") != schema_text(model)
        ]
        for name in stale:
            print(f"{entries_dir / name} is out of date; run `failpedia schema`", file=sys.stderr)
        return 1 if stale else 0
    for path in write_schemas(entries_dir):
        print(f"wrote {path.relative_to(root)}")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    root, entries_dir = project_paths(args)
    catalog, problems = load_catalog(entries_dir, root)
    if problems:
        return report_problems(problems)
    site_url = read_site_config(root / "mkdocs.yml").site_url
    for path in sigindex.write_package_data(catalog, site_url, Path(args.out)):
        print(f"wrote {path}")
    return 0
