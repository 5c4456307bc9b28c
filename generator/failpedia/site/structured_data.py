"""What a search engine reads of an entry page besides its text: schema.org structured
data (a ``TechArticle``, and a ``FAQPage`` for the entry's FAQ) as JSON-LD in the page's
head.

Everything in it comes from the entry, which is untrusted: the JSON is written so that
no value can end the ``<script>`` element that holds it (``<``, ``>`` and ``&`` as
``\\u`` escapes, as are the line separators JavaScript once refused in strings).
"""

from __future__ import annotations

import json
from typing import Any

from failpedia.catalog.catalog import CatalogEntry
from failpedia.catalog.model import Category
from failpedia.site.markdown import first_sentence, message_head, unmarked

SCHEMA = "https://schema.org"
# Search engines show a headline of at most 110 characters.
HEADLINE_LIMIT = 110
_SCRIPT_SAFE = str.maketrans(
    {
        "<": "\\u003c",
        ">": "\\u003e",
        "&": "\\u0026",
        "\u2028": "\\u2028",
        "\u2029": "\\u2029",
    }
)


def _headline(title: str) -> str:
    """The title's head within the headline limit; a title with no clause end before it
    is cut at a word (``name`` holds it whole)."""
    head = message_head(title, HEADLINE_LIMIT)
    if len(head) > HEADLINE_LIMIT:
        head = head[: HEADLINE_LIMIT - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"
    return head


def entry_structured_data(
    item: CatalogEntry,
    category: Category,
    url: str,
    modified: str | None,
    image: str | None,
    site: tuple[str, str],
) -> list[dict[str, Any]]:
    """The entry page's schema.org items: its ``TechArticle`` (at ``url``, last changed
    at ``modified`` where that is known) and, where it has a FAQ, its ``FAQPage``.
    ``site`` is the site's name and address."""
    entry = item.entry
    site_name, site_url = site
    article: dict[str, Any] = {
        "@context": SCHEMA,
        "@type": "TechArticle",
        "headline": _headline(entry.title),
        "name": unmarked(entry.title),
        "description": unmarked(first_sentence(entry.summary)),
        "url": url,
        "mainEntityOfPage": url,
        "identifier": entry.id,
        "articleSection": unmarked(category.title),
        "inLanguage": "en",
        "about": [{"@type": "Thing", "name": line} for line in item.signature_lines()],
        "isPartOf": {"@type": "WebSite", "name": site_name, "url": site_url},
    }
    if modified:
        article["dateModified"] = modified
    if image:
        article["image"] = image
    items = [article]
    if entry.faq:
        items.append(
            {
                "@context": SCHEMA,
                "@type": "FAQPage",
                "url": url,
                "mainEntity": [
                    {
                        "@type": "Question",
                        "name": unmarked(question.question),
                        "acceptedAnswer": {"@type": "Answer", "text": unmarked(question.answer)},
                    }
                    for question in entry.faq
                ],
            }
        )
    return items


def script_json(data: object) -> str:
    """``data`` as JSON that may stand inside a ``<script>`` element as it is."""
    return json.dumps(data, ensure_ascii=False, indent=None).translate(_SCRIPT_SAFE)
