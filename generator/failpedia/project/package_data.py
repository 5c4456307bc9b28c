"""What a wheel ships: the project's index, entry texts and nearest-entry index, compiled
from its valid entries (a draft in the checkout does not stop a build), for ``setup.py``."""

from __future__ import annotations

import sys
from pathlib import Path

from failpedia.catalog.index_build import write_package_data
from failpedia.project.index_compile import quick_check, usable_catalog
from failpedia.settings import read_settings


def build_package_data(root: Path, out_dir: Path) -> list[Path]:
    """Write the package data of the project in ``root`` to ``out_dir``."""
    settings = read_settings(root)
    catalog, warning = usable_catalog(quick_check(settings))
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    return write_package_data(catalog, settings.site_url, out_dir, settings.repo_url)
