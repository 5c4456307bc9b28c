"""The one build of the site's generated pages, which the mkdocs plugin hands to mkdocs
and ``failpedia render`` writes to a folder: the catalog checked, the verification
records read, the home page (with the failures real logs show most), coverage, category
and entry pages rendered, and in a preview the drafts' pages.

A build refuses a catalog or a record with any problem; a preview (``mkdocs serve``)
leaves out the files with problems and shows drafts instead, and refuses only what leaves
nothing sensible to lay out (``preview.blocking_problems``).
"""

from __future__ import annotations

from dataclasses import dataclass

from failpedia.catalog.catalog import Catalog
from failpedia.catalog.problems import ProblemList
from failpedia.catalog.validate import CatalogCheck, check_catalog
from failpedia.settings import ProjectSettings
from failpedia.site.common_failures import most_common
from failpedia.site.draft_pages import render_drafts
from failpedia.site.preview import blocking_problems
from failpedia.site.proof import load_proofs
from failpedia.site.render import RenderedPage, RenderedSite, SiteSettings, render_site


class SiteRefused(Exception):
    """The catalog or the records have problems that stop the build."""

    def __init__(self, problems: ProblemList) -> None:
        super().__init__(f"{len(problems)} problem(s)")
        self.problems = problems


@dataclass(frozen=True)
class BuiltSite:
    """The generated pages, and the checked catalog and problems they were built from."""

    check: CatalogCheck
    problems: ProblemList  # the catalog's and the records' (only where previewing)
    site: RenderedSite
    drafts: list[RenderedPage]

    @property
    def catalog(self) -> Catalog:
        return self.check.catalog

    @property
    def pages(self) -> list[RenderedPage]:
        return [*self.site.pages, *self.drafts]


def build_site(settings: ProjectSettings, previewing: bool = False) -> BuiltSite:
    """Every generated page of the project's site; ``SiteRefused`` with every problem
    where the build (or, previewing, the preview) cannot go on."""
    check = check_catalog(
        settings.entries_dir, settings.root, settings.docs_dir, settings.healthy_logs_dir
    )
    catalog = check.catalog
    proofs, record_problems = load_proofs(catalog, settings.records_dir, settings.root)
    problems = ProblemList([*check.problems, *record_problems])
    if problems and (not previewing or blocking_problems(check, record_problems)):
        raise SiteRefused(problems)
    site_settings = SiteSettings(settings.edit_base, settings.repo_url)
    common = most_common(catalog, settings.realworld_cases_dir)
    site = render_site(catalog, settings.templates_dir, site_settings, proofs, common)
    drafts = (
        render_drafts(
            check.drafts,
            problems,
            catalog,
            settings.templates_dir,
            site_settings,
            settings.records_dir,
        )
        if check.drafts
        else []
    )
    return BuiltSite(check, problems, site, drafts)
