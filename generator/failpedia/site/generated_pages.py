"""Generated pages as mkdocs files that know whether they changed since the last build.

``mkdocs serve --dirty`` rebuilds only the pages whose file says it was modified; a
generated page would always say so. These say so only when their Markdown differs from
what the last successful build of the same site folder in this process was given (or
when that build's HTML is missing), so an edit to one entry rebuilds its page alone
(and the pages that show its title, when that changed). Without ``--dirty`` mkdocs
rebuilds every page and this changes nothing.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from typing import cast

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, InclusionLevel

from failpedia.site.render import RenderedPage

# Site folders whose last build is remembered; serve uses one, tests and tools a few.
MAX_SITES = 8

# site folder -> page path -> digest of the Markdown its last successful build was given
_built: OrderedDict[str, dict[str, str]] = OrderedDict()


class GeneratedPage(File):
    """A page made from memory that is modified only when its content changed."""

    changed: bool = True

    def is_modified(self) -> bool:
        return self.changed or not os.path.isfile(self.abs_dest_path)


def _digest(markdown: str) -> str:
    return hashlib.blake2b(markdown.encode("utf-8"), digest_size=16).hexdigest()


def is_listed_in_nav(page: RenderedPage) -> bool:
    """Home, coverage and the category pages are in the navigation; entries are not."""
    return page.path in ("index.md", "coverage.md") or page.path.endswith("/index.md")


def page_files(config: MkDocsConfig, pages: list[RenderedPage]) -> list[File]:
    """mkdocs files for ``pages``, each knowing whether it changed since the last build."""
    last = _built.get(config.site_dir, {})
    files: list[File] = []
    for page in pages:
        inclusion = InclusionLevel.INCLUDED if is_listed_in_nav(page) else InclusionLevel.NOT_IN_NAV
        # ``generated`` builds an instance of the class it is called on.
        file = cast(
            GeneratedPage,
            GeneratedPage.generated(config, page.path, content=page.markdown, inclusion=inclusion),
        )
        file.changed = last.get(page.path) != _digest(page.markdown)
        files.append(file)
    return files


def remember_built(config: MkDocsConfig, pages: list[RenderedPage]) -> None:
    """Record what a successful build was given, for the next build's comparison."""
    _built[config.site_dir] = {page.path: _digest(page.markdown) for page in pages}
    _built.move_to_end(config.site_dir)
    while len(_built) > MAX_SITES:
        _built.popitem(last=False)
