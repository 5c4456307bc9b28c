"""The pages of drafts (entry files with problems) in the preview of ``mkdocs serve``.

Each draft gets a page where a valid entry's page would be: its problems first, as
``path:line: field: message`` lines escaped as text (they quote the file, which is
untrusted), then the entry's whole page when it converted and only a later check failed,
or else its id. Its title goes into the theme's HTML escaped, as an entry page's does.
Its folders' names are ids: the catalog check refuses any other before a draft is made
of it. ``mkdocs build`` never gets here: it refuses a catalog with problems.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from failpedia.catalog.catalog import Catalog, CatalogEntry
from failpedia.catalog.problems import ProblemList
from failpedia.catalog.validate import Draft
from failpedia.site.proof import documented_proof, proof_for
from failpedia.site.render import PageTemplates, RenderedPage, SiteSettings, render_entry_page
from failpedia.verify.results import load_record

DRAFT_TEMPLATE = "draft.md.j2"
FRONT_MATTER_FENCE = "---\n"


def _renders_in_place(draft: Draft, item: CatalogEntry, catalog: Catalog) -> bool:
    """Whether the entry's own page can be rendered for the draft: it sits where its id
    and category say, in a known category, with every signature pattern compiled."""
    entry = item.entry
    return (
        entry.id == draft.folder_id
        and item.page_path == draft.page_path
        and entry.category in catalog.category_by_id
        and len(item.patterns) == len(entry.signatures)
    )


def without_front_matter(markdown: str) -> str:
    """The page after its front matter (whose values are one line each)."""
    if not markdown.startswith(FRONT_MATTER_FENCE):
        return markdown
    end = markdown.find("\n" + FRONT_MATTER_FENCE, len(FRONT_MATTER_FENCE) - 1)
    return markdown if end < 0 else markdown[end + 1 + len(FRONT_MATTER_FENCE) :]


def render_drafts(
    drafts: list[Draft],
    problems: ProblemList,
    catalog: Catalog,
    templates_dir: Path,
    settings: SiteSettings,
    records_dir: Path,
) -> list[RenderedPage]:
    """One page per draft, with its problems above what could be rendered of it."""
    templates = PageTemplates.load(templates_dir)
    by_file: dict[str, list[str]] = defaultdict(list)
    for problem in sorted(problems):
        by_file[problem.path].append(str(problem))
    pages = []
    for draft in drafts:
        item = draft.item
        body = None
        title = f"Draft: {draft.folder_id}"
        if item is not None and _renders_in_place(draft, item, catalog):
            record, _ = load_record(records_dir, item.entry.id)
            links = catalog.links_of_outsider(item)
            proof = documented_proof(item) if item.entry.evidence else proof_for(record)
            page, _ = render_entry_page(templates, catalog, item, settings, proof, links)
            body = without_front_matter(page.markdown)
            title = item.entry.title
        markdown = templates.environment.get_template(DRAFT_TEMPLATE).render(
            title=title,
            entry_id=draft.folder_id,
            display_path=draft.display_path,
            problems=by_file[draft.display_path],
            body=body,
        )
        pages.append(RenderedPage(draft.page_path, markdown, source=draft.display_path))
    return pages
