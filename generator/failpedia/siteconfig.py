"""Read the few settings the generator needs from ``mkdocs.yml`` without running mkdocs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class SiteConfig:
    site_url: str | None
    entries_dir: str
    templates_dir: str
    records_dir: str
    edit_base: str | None


def default_edit_base(repo_url: str | None) -> str | None:
    """``https://github.com/org/repo`` -> ``https://github.com/org/repo/edit/main/``."""
    if not isinstance(repo_url, str) or not repo_url:
        return None
    return repo_url.rstrip("/") + "/edit/main/"


class _TolerantLoader(yaml.SafeLoader):
    """Reads mkdocs.yml even where it uses ``!!python/name`` or ``!ENV`` tags."""


_TolerantLoader.add_multi_constructor("", lambda loader, suffix, node: None)


def read_site_config(path: Path) -> SiteConfig:
    data: dict[str, Any] = {}
    if path.is_file():
        loaded = yaml.load(path.read_text(encoding="utf-8"), Loader=_TolerantLoader)
        data = loaded if isinstance(loaded, dict) else {}
    options: dict[str, Any] = {}
    for plugin in data.get("plugins") or []:
        if isinstance(plugin, dict) and isinstance(plugin.get("failpedia"), dict):
            options = plugin["failpedia"]
    return SiteConfig(
        site_url=data.get("site_url"),
        entries_dir=options.get("entries_dir", "entries"),
        templates_dir=options.get("templates_dir", "templates"),
        records_dir=options.get("records_dir", "verification"),
        edit_base=options.get("edit_base") or default_edit_base(data.get("repo_url")),
    )
