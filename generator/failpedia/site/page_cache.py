"""Rendered entry pages kept in memory between the rebuilds of one ``mkdocs serve``.

A page is reused when its key is unchanged; the key (``render.render_entry_page``) covers
everything the page shows: the entry file and reproducer, the templates, the package
version, its proof, and what it shows of its category and of other entries. Nothing is
written to disk; one version of each page is kept, and at most ``MAX_PAGES`` pages, the
least recently used dropped first.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import failpedia

MAX_PAGES = 5000

# page path -> (key, Markdown)
_pages: OrderedDict[str, tuple[str, str]] = OrderedDict()


def page_key(*parts: object) -> str:
    """A digest of ``parts`` (their ``repr``) and the package version."""
    text = repr((failpedia.__version__, *parts))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def templates_key(templates_dir: Path) -> str:
    """A digest of every file in the templates folder, names and bytes."""
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(templates_dir.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(templates_dir).as_posix().encode("utf-8") + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def reuse_or_render(path: str, key: str, render: Callable[[], str]) -> tuple[str, bool]:
    """The page at ``path`` as cached under ``key``, or else ``render()``'s (then cached in
    its place); and whether it was reused."""
    cached = _pages.get(path)
    if cached is not None and cached[0] == key:
        _pages.move_to_end(path)
        return cached[1], True
    markdown = render()
    _pages[path] = (key, markdown)
    _pages.move_to_end(path)
    while len(_pages) > MAX_PAGES:
        _pages.popitem(last=False)
    return markdown, False
