"""The mkdocs plugin, a thin adapter: build the site's pages (``pipeline.build_site``, the
one build ``failpedia render`` writes too) and add them, with ``signatures.json`` and a
page at each retired id's old address (``redirects``), to the build; refuse a generated
page whose HTML holds what no entry text may make (``page_guard``).

Runs in ``mkdocs build`` and ``mkdocs serve``; serve reloads the config on every rebuild,
so edits to entries and templates (both watched) show up without a restart. A build
refuses a catalog with any problem; serve previews it instead (``preview``): drafts get
pages that show their problems (``draft_pages``). Unchanged entries are neither checked
(``catalog.entry_cache``) nor rendered (``page_cache``) again, and with ``--dirty`` mkdocs
rebuilds only the pages whose Markdown changed (``generated_pages``).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.livereload import LiveReloadServer
from mkdocs.plugins import BasePlugin, get_plugin_logger
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page
from mkdocs.utils.templates import TemplateContext

from failpedia.catalog.catalog import CatalogEntry
from failpedia.catalog.index_build import build_index, build_nearest
from failpedia.catalog.model import Category
from failpedia.catalog.problems import ProblemList
from failpedia.settings import ProjectSettings, settings_from_options
from failpedia.signatures.index_format import INDEX_FILE, dump_json
from failpedia.signatures.nearest_rules import NEAREST_FILE
from failpedia.site.commit_dates import last_commit_dates
from failpedia.site.generated_pages import page_files, remember_built
from failpedia.site.page_guard import page_problem
from failpedia.site.pipeline import SiteRefused, build_site
from failpedia.site.plugin_config import FailpediaConfig
from failpedia.site.preview import warn_in_terminal
from failpedia.site.redirects import redirect_pages
from failpedia.site.render import RenderedPage
from failpedia.site.search_index import drop_section_tags
from failpedia.site.structured_data import entry_structured_data, script_json

log = get_plugin_logger(__name__)

# The one picture every page shows in link previews (og:image) and structured data.
SITE_CARD = "assets/failpedia-card.png"


def fill_nav_section(nav: list[Any] | None, title: str, pages: list[dict[str, str]]) -> bool:
    """Put the category pages under the nav item called ``title``; False if there is none."""
    for item in nav or []:
        if isinstance(item, dict) and title in item:
            item[title] = pages
            return True
        if isinstance(item, dict):
            for value in item.values():
                if isinstance(value, list) and fill_nav_section(value, title, pages):
                    return True
    return False


def _refusal(problems: ProblemList) -> PluginError:
    count = len(problems)
    return PluginError(f"{count} problem{'s' * (count > 1)} in entries:\n{problems.report()}")


def _modified_dates(
    entries: list[CatalogEntry], entries_dir: Path, docs_dir: Path
) -> dict[str, str]:
    """The last commit date of each entry's folder and each hand-written page, by page
    path (one ``git log`` each for the entries and the docs folder)."""
    by_folder = last_commit_dates(entries_dir, 2)
    dates = last_commit_dates(docs_dir, None)
    for item in entries:
        try:
            folder = item.folder.resolve().relative_to(entries_dir.resolve()).as_posix()
        except ValueError:
            continue
        if folder in by_folder:
            dates[item.page_path] = by_folder[folder]
    return dates


class FailpediaPlugin(BasePlugin[FailpediaConfig]):  # type: ignore[no-untyped-call]
    def __init__(self) -> None:
        self.pages: list[RenderedPage] = []
        self.edit_urls: dict[str, str] = {}
        self.generated: dict[str, RenderedPage] = {}
        self.settings: ProjectSettings | None = None
        self.signature_index = ""
        self.nearest_index = ""
        self.redirects: dict[str, str] = {}  # old addresses of retired ids: path -> HTML
        self.previewing = False
        # Entry pages by path: what their structured data says.
        self.entries: dict[str, tuple[CatalogEntry, Category]] = {}
        # When each page's source last changed (git), by page path; none where unknown.
        self.modified: dict[str, str] = {}

    def on_startup(self, *, command: Literal["build", "gh-deploy", "serve"], dirty: bool) -> None:
        # `mkdocs serve` previews drafts; build, gh-deploy and `serve --clean` stay strict.
        self.previewing = command == "serve"

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        root = Path(config.config_file_path or "mkdocs.yml").resolve().parent
        self.settings = settings = settings_from_options(
            root, dict(self.config), config.site_url, config.repo_url, config.docs_dir
        )
        try:
            built = build_site(settings, self.previewing)
        except SiteRefused as refused:
            raise _refusal(refused.problems) from None
        check, catalog, site = built.check, built.catalog, built.site
        warn_in_terminal(built.problems, check)
        log.debug(
            f"entry files: {check.checked} read and checked, {check.reused} unchanged; "
            f"entry pages: {site.rendered} rendered, {site.reused} unchanged"
        )
        self.pages = built.pages
        if self.config.nav_section:
            # The theme prints navigation titles as HTML.
            pages = [
                {html.escape(category.title): f"{category.id}/index.md"}
                for category in catalog.categories
            ]
            if not fill_nav_section(config.nav, self.config.nav_section, pages):
                raise PluginError(
                    f"nav_section {self.config.nav_section!r}: no nav item with that title"
                )
        self.edit_urls = {page.path: page.edit_url for page in self.pages if page.edit_url}
        self.entries = {
            item.page_path: (item, catalog.category_by_id[item.entry.category])
            for item in catalog.entries
        }
        self.modified = _modified_dates(catalog.entries, settings.entries_dir, settings.docs_dir)
        self.generated = {page.path: page for page in self.pages}
        self.signature_index = dump_json(build_index(catalog, config.site_url, settings.repo_url))
        self.nearest_index = dump_json(build_nearest(catalog))
        self.redirects = redirect_pages(
            catalog, config.site_url or "", bool(config.use_directory_urls)
        )
        return config

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        for page in self.pages:
            if files.get_file_from_path(page.path) is not None:
                raise PluginError(
                    f"docs/{page.path} collides with a generated page; rename or remove it"
                )
        for file in page_files(config, self.pages):
            files.append(file)
        # The log page matches pasted logs in the browser against this file.
        files.append(File.generated(config, INDEX_FILE, content=self.signature_index))
        # ...and, where none matches, finds the entries nearest in wording with this one.
        files.append(File.generated(config, NEAREST_FILE, content=self.nearest_index))
        for path, content in self.redirects.items():
            if files.get_file_from_path(path) is not None:
                raise PluginError(
                    f"docs/{path} takes the old address of a retired id "
                    "(entries/retired.yaml); rename or remove it"
                )
            files.append(File.generated(config, path, content=content))
        return files

    def on_template_context(
        self, context: TemplateContext, *, template_name: str, config: MkDocsConfig
    ) -> TemplateContext:
        """The sitemap's lastmod (templates/theme/sitemap.xml): when each page's source was
        last committed, none where that is unknown; mkdocs would give every page the date
        of the build."""
        if template_name == "sitemap.xml":
            context["lastmod"] = self.modified  # type: ignore[typeddict-unknown-key]
        return context

    def on_page_content(
        self, html: str, page: Page, config: MkDocsConfig, files: Files
    ) -> str | None:
        """Refuse a generated page whose HTML holds what no entry text may make."""
        generated = self.generated.get(page.file.src_uri)
        if generated is not None:
            problem = page_problem(html)
            if problem is not None:
                where = generated.source or f"the generated page {generated.path}"
                raise PluginError(
                    f"{where}: its page's HTML holds {problem}, which entry text must not "
                    "make; the page was not published"
                )
        return html

    def on_page_context(
        self, context: TemplateContext, page: Page, config: MkDocsConfig, nav: Navigation
    ) -> TemplateContext:
        if page.file.src_uri in self.edit_urls:
            page.edit_url = self.edit_urls[page.file.src_uri]
        found = self.entries.get(page.file.src_uri)
        if found is not None and page.canonical_url:
            item, category = found
            site_url = config.site_url or ""
            data = entry_structured_data(
                item,
                category,
                page.canonical_url,
                self.modified.get(page.file.src_uri),
                site_url + SITE_CARD if site_url else None,
                (config.site_name, site_url),
            )
            context["structured_data"] = script_json(data)  # type: ignore[typeddict-unknown-key]
        return context

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        remember_built(config, self.pages)
        # After the search plugin's on_post_build: it is listed before this plugin.
        drop_section_tags(Path(config.site_dir))

    def on_serve(
        self, server: LiveReloadServer, config: MkDocsConfig, builder: Callable[..., Any]
    ) -> LiveReloadServer:
        settings = self.settings
        if settings is not None:
            server.watch(str(settings.entries_dir))
            if settings.records_dir.is_dir():
                server.watch(str(settings.records_dir))
            server.watch(str(settings.templates_dir))
        return server
