"""Pages at the addresses of retired ids, sending readers to the entry that took their
place (``catalog.retired``): an old link in a bookmark, an issue or a chat log keeps
working after an entry is renamed or merged.

Each page is a static HTML file at the old address: a refresh to the new page (the
address's ``#section`` kept where scripts run), a canonical link for search engines, and a
plain link for a reader whose browser follows neither. It loads nothing, and every value
in it is escaped.
"""

from __future__ import annotations

import html
import json

from failpedia.catalog.catalog import Catalog
from failpedia.catalog.retired import Retirement


def redirect_path(item: Retirement, directory_urls: bool = True) -> str:
    """Where the old page's file was written in the site: ``cuda/old-id/index.html`` with
    mkdocs' directory URLs, ``cuda/old-id.html`` without."""
    if directory_urls:
        return f"{item.old_page}index.html"
    return f"{item.old_page.rstrip('/')}.html"


def redirect_page(item: Retirement, title: str, site_url: str, directory_urls: bool = True) -> str:
    """The HTML served at a retired id's old address."""
    if directory_urls:
        target = f"../../{item.new_category}/{item.new_id}/"
        canonical = item.new_page
    else:
        target = f"../{item.new_category}/{item.new_id}.html"
        canonical = f"{item.new_category}/{item.new_id}.html"
    if site_url:
        canonical = site_url.rstrip("/") + "/" + canonical
    # A JSON string in a script: "<" escaped, so no value can close the element.
    script_target = json.dumps(target).replace("<", "\\u003c")
    link, said = html.escape(target), html.escape(item.text)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Moved: {html.escape(title)}</title>
<meta name="robots" content="noindex">
<link rel="canonical" href="{html.escape(canonical)}">
<meta http-equiv="refresh" content="0; url={link}">
<script>location.replace({script_target} + location.hash);</script>
</head>
<body>
<p>This address is an old one: {said}.</p>
<p>Go to <a href="{link}">{html.escape(title)}</a>.</p>
</body>
</html>
"""


def redirect_pages(catalog: Catalog, site_url: str, directory_urls: bool = True) -> dict[str, str]:
    """Every retired id's page by its path in the site. The new entry's id stands in for
    its title where the catalog leaves the entry out (a draft a preview shows)."""
    titles = {item.entry.id: item.entry.title for item in catalog.entries}
    return {
        redirect_path(item, directory_urls): redirect_page(
            item, titles.get(item.new_id, item.new_id), site_url, directory_urls
        )
        for item in catalog.retired.values()
    }
