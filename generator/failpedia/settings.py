"""The one reader of project settings: the folders and URLs the CLI, the mkdocs plugin
and the runner use, from ``mkdocs.yml``'s ``failpedia`` plugin options and their defaults.

The defaults live here and nowhere else: the plugin's config declares them from these
constants, so ``failpedia verify`` writes records where the site reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

CONFIG_FILE = "mkdocs.yml"
DEFAULT_ENTRIES_DIR = "entries"
DEFAULT_TEMPLATES_DIR = "templates"
DEFAULT_RECORDS_DIR = "verification"
DEFAULT_DOCS_DIR = "docs"  # mkdocs' own default
DEFAULT_REALWORLD_CASES_DIR = "benchmarks/realworld/cases"  # real logs, labelled by entry
DEFAULT_HEALTHY_LOGS_DIR = "tests/healthy_logs"  # lines of healthy runs no pattern may match


@dataclass(frozen=True)
class ProjectSettings:
    """Where a project's parts live (absolute paths) and how its pages link out."""

    root: Path
    site_url: str | None
    entries_dir: Path
    templates_dir: Path
    records_dir: Path
    edit_base: str | None
    docs_dir: Path  # the hand-written pages, whose names entry ids must not take
    repo_url: str | None = None  # mkdocs.yml's repo_url: where issues and pull requests go
    realworld_cases_dir: Path | None = None  # real logs: the home page's most common failures
    healthy_logs_dir: Path | None = None  # logs of healthy runs, whose lines no pattern matches


def default_edit_base(repo_url: str | None) -> str | None:
    """``https://github.com/org/repo`` -> ``https://github.com/org/repo/edit/main/``."""
    if not isinstance(repo_url, str) or not repo_url:
        return None
    return repo_url.rstrip("/") + "/edit/main/"


def settings_from_options(
    root: Path,
    options: Mapping[str, Any],
    site_url: str | None,
    repo_url: str | None,
    docs_dir: str | None = None,
) -> ProjectSettings:
    """Settings from the plugin's options and mkdocs' ``docs_dir`` (missing ones take the
    defaults)."""
    root = root.resolve()

    def folder(name: str, default: str) -> Path:
        value = options.get(name)
        return (root / (value if isinstance(value, str) and value else default)).resolve()

    edit_base = options.get("edit_base")
    return ProjectSettings(
        root=root,
        site_url=site_url if isinstance(site_url, str) and site_url else None,
        entries_dir=folder("entries_dir", DEFAULT_ENTRIES_DIR),
        templates_dir=folder("templates_dir", DEFAULT_TEMPLATES_DIR),
        records_dir=folder("records_dir", DEFAULT_RECORDS_DIR),
        edit_base=edit_base
        if isinstance(edit_base, str) and edit_base
        else default_edit_base(repo_url),
        docs_dir=(
            root / (docs_dir if isinstance(docs_dir, str) and docs_dir else DEFAULT_DOCS_DIR)
        ).resolve(),
        repo_url=repo_url.rstrip("/") if isinstance(repo_url, str) and repo_url else None,
        realworld_cases_dir=folder("realworld_cases_dir", DEFAULT_REALWORLD_CASES_DIR),
        healthy_logs_dir=folder("healthy_logs_dir", DEFAULT_HEALTHY_LOGS_DIR),
    )


class ConfigValues(NamedTuple):
    """What the settings take from ``mkdocs.yml``: the plugin's options, ``site_url``,
    ``repo_url`` and ``docs_dir`` (plain data, which a cache can keep as JSON)."""

    options: dict[str, Any]
    site_url: str | None
    repo_url: str | None
    docs_dir: str | None


def read_config(path: Path) -> ConfigValues:
    """The values of the ``mkdocs.yml`` at ``path``; defaults where there is none. Tags
    such as ``!!python/name`` and ``!ENV`` read as nothing."""
    import yaml  # here: a command that finds its settings cached never pays for it

    class TolerantLoader(yaml.SafeLoader):
        pass

    TolerantLoader.add_multi_constructor("", lambda loader, suffix, node: None)
    data: dict[str, Any] = {}
    if path.is_file():
        loaded = yaml.load(path.read_text(encoding="utf-8"), Loader=TolerantLoader)
        data = loaded if isinstance(loaded, dict) else {}
    options: dict[str, Any] = {}
    for plugin in data.get("plugins") or []:
        if isinstance(plugin, dict) and isinstance(plugin.get("failpedia"), dict):
            options = plugin["failpedia"]

    def text(name: str) -> str | None:
        value = data.get(name)
        return value if isinstance(value, str) else None

    return ConfigValues(options, text("site_url"), text("repo_url"), text("docs_dir"))


def settings_from_config(root: Path, values: ConfigValues) -> ProjectSettings:
    return settings_from_options(
        root, values.options, values.site_url, values.repo_url, values.docs_dir
    )


def read_settings(root: Path) -> ProjectSettings:
    """The settings of the project in ``root``, read from its ``mkdocs.yml`` without
    running mkdocs; a project without one gets the defaults."""
    return settings_from_config(root, read_config(root / CONFIG_FILE))
