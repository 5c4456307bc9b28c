"""Render the catalog into Markdown pages with the jinja2 templates.

An ordinary function, used by the mkdocs plugin and by ``failpedia render --out``, so the
pages can be written to disk and built by another engine.
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass
from pathlib import Path

import jinja2

from failpedia.catalog.bounded_read import RefusedFile, read_bounded
from failpedia.catalog.catalog import RELATION_TITLES, Catalog, CatalogEntry, Link
from failpedia.catalog.entry_files import MAX_FILE_BYTES
from failpedia.catalog.release_history import (
    no_longer_emitted_since,
    printed_by,
    signature_history,
)
from failpedia.signatures.finding_order import ROLE_TEXT
from failpedia.site.issue_links import ENTRY_FIELD, ENTRY_WRONG_FORM, new_issue_url
from failpedia.site.markdown import MARKDOWN_FILTERS
from failpedia.site.page_cache import page_key, reuse_or_render, templates_key
from failpedia.site.proof import STATUS_TEXT, Proof, coverage, proof_for
from failpedia.verify.results import VERDICT_TEXT

DEVICE_TEXT = {"cpu": "CPU", "cuda": "CUDA GPU", "multi-gpu": "several CUDA GPUs"}
# What a reproducer needs, as a sentence says it ("it needs a CUDA GPU", "it needs several
# CUDA GPUs"): the article belongs to the device, not to the template.
DEVICE_ARTICLE = {"cpu": "a ", "cuda": "a ", "multi-gpu": ""}
DEVICE_NEEDED = {device: DEVICE_ARTICLE[device] + text for device, text in DEVICE_TEXT.items()}
KIND_TEXT = {
    "crash": "Crash",
    "warning": "Warning",
    "hang": "Hang",
    "silent-wrong-result": "Silent wrong result",
}
MORE_IN_CATEGORY = 12


@dataclass(frozen=True)
class SiteSettings:
    """What pages need to know about the site they are part of."""

    edit_base: str | None = None  # e.g. https://github.com/org/repo/edit/main/
    repo_url: str | None = None  # e.g. https://github.com/org/repo: where issues go

    def wrong_entry_url(self, item: CatalogEntry) -> str | None:
        """The "an entry is wrong" issue form, with the entry's id filled in."""
        entry_id = item.entry.id
        return new_issue_url(
            self.repo_url, ENTRY_WRONG_FORM, f"{entry_id}: ", {ENTRY_FIELD: entry_id}
        )

    def edit_url(self, item: CatalogEntry) -> str | None:
        """Where to edit the entry's YAML; entries outside the project have none."""
        if not self.edit_base or Path(item.display_path).is_absolute():
            return None
        return self.edit_base.rstrip("/") + "/" + item.display_path


@dataclass(frozen=True)
class RenderedPage:
    """One Markdown page of the site: its path in the docs tree and its text."""

    path: str
    markdown: str
    edit_url: str | None = None
    source: str | None = None  # the entry file it shows, for problems with the page


def search_terms(item: CatalogEntry) -> list[str]:
    """What the search index weighs most for an entry: the line of each signature that its
    pattern matches, and the aliases, HTML-escaped.

    The theme copies these terms into the search index as they are and shows them as HTML
    in search results; messages hold ``<class 'int'>`` and ``<lambda>``.
    """
    terms = [*item.signature_lines(), *(alias.text for alias in item.entry.aliases)]
    return [html.escape(term, quote=False) for term in terms]


def reproducer_source(item: CatalogEntry) -> str | None:
    """The reproducer's code, shown on the page (None when it cannot be read, which the
    validator has already reported)."""
    if item.entry.reproducer is None:
        return None
    try:
        data = read_bounded(
            item.folder / item.entry.reproducer.script, within=item.folder, limit=MAX_FILE_BYTES
        )
        return data.decode("utf-8")
    except (RefusedFile, UnicodeDecodeError):
        return None


# The "Caused by" line under the quick answer names at most this many entries, so that the
# fix stays on the first screens of a wrapper many failures cause (the DataLoader worker's
# exception); the Related section lists them all.
CAUSED_BY_SHOWN = 3


def make_environment(templates_dir: Path) -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # the output is Markdown; Markdown fields carry no raw HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters.update(MARKDOWN_FILTERS)
    environment.globals.update(
        role_text=ROLE_TEXT,
        device_text=DEVICE_TEXT,
        device_needed=DEVICE_NEEDED,
        kind_text=KIND_TEXT,
        relation_titles=RELATION_TITLES,
        caused_by_shown=CAUSED_BY_SHOWN,
        release_history=signature_history,
        no_longer_emitted=no_longer_emitted_since,
        printed_by=printed_by,
    )
    return environment


def relative_link(from_page: str, to_page: str) -> str:
    """Relative Markdown link between two docs-tree paths (mkdocs resolves ``.md`` links)."""
    start = os.path.dirname(from_page) or "."
    return os.path.relpath(to_page, start).replace(os.sep, "/")


@dataclass(frozen=True)
class RenderedSite:
    """Every generated page, and how many entry pages were rendered anew or reused."""

    pages: list[RenderedPage]
    rendered: int = 0
    reused: int = 0


@dataclass(frozen=True)
class PageTemplates:
    """The jinja2 environment of a templates folder and a digest of its files."""

    environment: jinja2.Environment
    key: str

    @classmethod
    def load(cls, templates_dir: Path) -> PageTemplates:
        return cls(make_environment(templates_dir), templates_key(templates_dir))


def render_entry_page(
    templates: PageTemplates,
    catalog: Catalog,
    item: CatalogEntry,
    settings: SiteSettings,
    proof: Proof,
    links: dict[str, list[Link]],
) -> tuple[RenderedPage, bool]:
    """One entry's page (``item`` need not be in ``catalog``: a draft's is rendered with
    the catalog around it), reused when nothing it shows changed; and whether it was."""
    edit_url = settings.edit_url(item)
    wrong_entry_url = settings.wrong_entry_url(item)
    others = [other for other in catalog.in_category(item.entry.category) if other is not item]
    more = others[:MORE_IN_CATEGORY]
    category = catalog.category_by_id[item.entry.category]
    key = page_key(
        "entry.md.j2",
        templates.key,
        item.source_key,
        item.display_path,
        edit_url,
        wrong_entry_url,
        proof,
        category,
        [
            (
                relation,
                [(link.target.page_path, link.target.entry.title, link.note) for link in group],
            )
            for relation, group in links.items()
        ],
        [(other.page_path, other.entry.title) for other in more],
        len(others),
    )

    def render() -> str:
        return templates.environment.get_template("entry.md.j2").render(
            item=item,
            entry=item.entry,
            search_terms=search_terms(item),
            proof=proof,
            coverage_link=relative_link(item.page_path, "coverage.md"),
            diagnose_link=relative_link(item.page_path, "diagnose.md"),
            category=category,
            links=links,
            more=more,
            more_count=len(others),
            edit_url=edit_url,
            wrong_entry_url=wrong_entry_url,
            reproducer_source=reproducer_source(item),
            link=lambda target: relative_link(item.page_path, target.page_path),
            category_link=relative_link(item.page_path, f"{item.entry.category}/index.md"),
        )

    if not item.source_key:  # not from the loader: nothing says when its files change
        return RenderedPage(item.page_path, render(), edit_url, item.display_path), False
    markdown, reused = reuse_or_render(item.page_path, key, render)
    return RenderedPage(item.page_path, markdown, edit_url, item.display_path), reused


def render_site(
    catalog: Catalog,
    templates_dir: Path,
    settings: SiteSettings,
    proofs: dict[str, Proof] | None = None,
    common: list[tuple[CatalogEntry, int]] | None = None,
) -> RenderedSite:
    """Every generated page: home, coverage, one per category, one per entry (each entry
    page reused from earlier renders in this process when nothing it shows changed)."""
    proofs = proofs or {}
    templates = PageTemplates.load(templates_dir)
    environment = templates.environment
    category_template = environment.get_template("category.md.j2")
    home_template = environment.get_template("home.md.j2")
    coverage_template = environment.get_template("coverage.md.j2")
    pages = [
        RenderedPage(
            "index.md",
            home_template.render(
                categories=[
                    (category, len(catalog.in_category(category.id)))
                    for category in catalog.categories
                ],
                total=len(catalog.entries),
                documented=sum(item.entry.evidence is not None for item in catalog.entries),
                common=common or [],
                link=lambda item: relative_link("index.md", item.page_path),
            ),
        )
    ]
    pages.append(
        RenderedPage(
            "coverage.md",
            coverage_template.render(
                coverage=coverage(catalog, proofs),
                status_text=STATUS_TEXT,
                verdict_text=VERDICT_TEXT,
                link=lambda item: relative_link("coverage.md", item.page_path),
            ),
        )
    )
    for category in catalog.categories:
        pages.append(
            RenderedPage(
                f"{category.id}/index.md",
                category_template.render(
                    category=category,
                    entries=catalog.in_category(category.id),
                    link=lambda item, page=f"{category.id}/index.md": relative_link(
                        page, item.page_path
                    ),
                ),
            )
        )
    reused = 0
    for item in catalog.entries:
        proof = proofs.get(item.entry.id) or proof_for(None)
        page, was_reused = render_entry_page(
            templates, catalog, item, settings, proof, catalog.links(item.entry.id)
        )
        pages.append(page)
        reused += was_reused
    return RenderedSite(pages, len(catalog.entries) - reused, reused)


def write_pages(pages: list[RenderedPage], out_dir: Path) -> None:
    """Write pages under ``out_dir``, refusing two pages at one path."""
    seen: set[str] = set()
    for page in pages:
        if page.path in seen:
            raise ValueError(f"two generated pages at {page.path}")
        seen.add(page.path)
        target = out_dir / page.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page.markdown, encoding="utf-8")
