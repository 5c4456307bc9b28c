"""The ``failpedia`` command: validate, scaffold, render and publish the schema.

Exit codes: 0 success; 1 problems found in entries; 2 bad usage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .problems import ProblemList
from .render import SiteSettings, render_site, write_pages
from .scaffold import scaffold_entry
from .schema import SCHEMA_FILENAMES, schema_text, write_schemas
from .siteconfig import read_site_config
from .validator import load_catalog, load_categories


def _paths(args: argparse.Namespace) -> tuple[Path, Path]:
    root = Path(args.root).resolve()
    return root, root / read_site_config(root / "mkdocs.yml").entries_dir


def cmd_validate(args: argparse.Namespace) -> int:
    root, entries_dir = _paths(args)
    catalog, problems = load_catalog(entries_dir, root)
    if problems:
        print(problems.report(), file=sys.stderr)
        count = len(problems)
        print(f"{count} problem{'s' * (count > 1)} found.", file=sys.stderr)
        return 1
    categories = len({item.entry.category for item in catalog.entries})
    print(f"{len(catalog.entries)} entries in {categories} categories: no problems.")
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    root, entries_dir = _paths(args)
    problems = ProblemList()
    categories = {category.id for category in load_categories(entries_dir, root, problems)}
    if problems:
        print(problems.report(), file=sys.stderr)
        return 1
    try:
        folder = scaffold_entry(entries_dir, args.target, categories)
    except ValueError as error:
        print(f"failpedia new: {error}", file=sys.stderr)
        return 2
    print(f"created {folder.relative_to(root)}/entry.yaml and repro.py")
    print("fill in every TODO; `failpedia validate` names each one left")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    root, entries_dir = _paths(args)
    catalog, problems = load_catalog(entries_dir, root)
    if problems:
        print(problems.report(), file=sys.stderr)
        return 1
    site = read_site_config(root / "mkdocs.yml")
    pages = render_site(catalog, root / site.templates_dir, SiteSettings(site.edit_base))
    out = Path(args.out)
    write_pages(pages, out)
    print(f"wrote {len(pages)} pages to {out}")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    root, entries_dir = _paths(args)
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="failpedia", description="Failpedia: ML training failures, proved by reproducers."
    )
    parser.add_argument(
        "--root", default=".", help="project folder holding entries/ and mkdocs.yml (default: .)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("validate", help="check every entry; report all problems").set_defaults(
        handler=cmd_validate
    )
    new = commands.add_parser("new", help="scaffold entries/<category>/<id>/")
    new.add_argument("target", metavar="CATEGORY/ID")
    new.set_defaults(handler=cmd_new)
    render = commands.add_parser("render", help="write the site's Markdown pages to a folder")
    render.add_argument("--out", required=True, metavar="DIR")
    render.set_defaults(handler=cmd_render)
    schema = commands.add_parser("schema", help="write the JSON Schemas for entry files")
    schema.add_argument("--check", action="store_true", help="fail if the files are stale")
    schema.set_defaults(handler=cmd_schema)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
