"""Find the project a command works on, and its settings.

``--root`` names it; without it, the current folder where it holds a project (its
``mkdocs.yml`` and entries folder), else the checkout this package runs from (an editable
install), else none: an installed wheel then reads the index it ships. The entries
folder is always the settings' (``mkdocs.yml``'s ``entries_dir``), never a fixed name.

What a project's ``mkdocs.yml`` says is kept in the user's cache beside the compiled
index, under the file's size and time: a warm ``diagnose`` reads it without loading a
YAML parser.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from failpedia.settings import (
    CONFIG_FILE,
    ConfigValues,
    ProjectSettings,
    read_config,
    read_settings,
    settings_from_config,
)
from failpedia.signatures.hyperscan_form import cache_dir, trusted_before_ns, write_cache

PACKAGE_DIR = Path(__file__).resolve().parents[1]


def project_settings(root: Path) -> ProjectSettings:
    """``read_settings(root)``, with ``mkdocs.yml``'s values taken from the cache while
    its size and time are those they were read at (and not recent)."""
    path = root / CONFIG_FILE
    try:
        stat = os.stat(path)
    except OSError:
        return read_settings(root)
    stamp = [stat.st_size, stat.st_mtime_ns]
    name = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]
    cached = cache_dir() / "settings" / f"{name}.json"
    try:
        kept = json.loads(cached.read_bytes())
        if kept["stamp"] == stamp:
            options, site_url, repo_url, docs_dir = kept["values"]
            if isinstance(options, dict) and all(
                value is None or isinstance(value, str) for value in (site_url, repo_url, docs_dir)
            ):
                return settings_from_config(
                    root, ConfigValues(options, site_url, repo_url, docs_dir)
                )
    except (OSError, ValueError, KeyError, TypeError):
        pass
    values = read_config(path)
    if stat.st_mtime_ns < trusted_before_ns():
        try:
            data = json.dumps({"stamp": stamp, "values": list(values)})
        except (TypeError, ValueError):  # options JSON cannot hold are read every time
            data = None
        if data is not None:
            write_cache(cached, data.encode())
    return settings_from_config(root, values)


def project_at(folder: Path) -> ProjectSettings | None:
    """The settings of the project in ``folder``, where it holds one (a ``mkdocs.yml``
    and the entries folder it names); None otherwise."""
    if not (folder / CONFIG_FILE).is_file():
        return None
    settings = project_settings(folder)
    return settings if settings.entries_dir.is_dir() else None


def package_checkout() -> ProjectSettings | None:
    """The project of the checkout this package runs from (editable installs), or None
    (a wheel's package lies in site-packages, with no project around it)."""
    return project_at(PACKAGE_DIR.parents[1])


def find_project(root: str | Path | None) -> ProjectSettings | None:
    """The settings of the project named by ``root`` (``--root``); without it, of the
    current folder's project, else of the package's checkout, else None."""
    if root is not None:
        return project_settings(Path(root).resolve())
    return project_at(Path.cwd().resolve()) or package_checkout()


def project_or_here(root: str | Path | None) -> ProjectSettings:
    """The settings of the project a catalog command works on: as ``find_project``, and
    where there is none, the current folder's (whose missing entries folder is then the
    problem reported)."""
    return find_project(root) or read_settings(Path.cwd().resolve())
