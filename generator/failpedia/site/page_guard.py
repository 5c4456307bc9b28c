"""The last check on a generated page: the HTML its Markdown became holds only what
Markdown and the page templates make.

Entry text is checked before rendering (``catalog.markdown_check``) and escaped where it
is published (``markdown``). This check reads each generated page's HTML as a browser
would and fails the build if anything got through all the same: an element Markdown
does not make, an event handler or other attribute, a comment, a link off the web or an
image from elsewhere. Hand-written pages in ``docs/`` are the maintainers' and are not
read.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from failpedia.catalog.markdown_check import link_target_problem

# What Python-Markdown and the site's extensions (admonition, tables, toc, superfences,
# highlight, tasklist) and the templates' <pre><code> blocks make.
_TAGS = frozenset(
    {"a", "blockquote", "br", "code", "div", "em", "hr", "img", "input", "label", "li", "ol"}
    | {"p", "pre", "span", "strong", "sub", "sup", "table", "tbody", "td", "th", "thead"}
    | {"tr", "ul", "h1", "h2", "h3", "h4", "h5", "h6"}
)
_ATTRIBUTES = frozenset(
    {"alt", "checked", "class", "disabled", "href", "id", "name", "src", "start", "style"}
    | {"title", "type"}
)
_TABLE_ALIGNMENT = re.compile(r"text-align: (?:left|right|center);")


def _allowed_target(attribute: str, value: str) -> bool:
    return link_target_problem(value, image=attribute == "src") is None


class _PageReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problem: str | None = None

    def refuse(self, problem: str) -> None:
        if self.problem is None:
            self.problem = problem

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _TAGS:
            self.refuse(f"a <{tag}> element")
            return
        for name, value in attrs:
            if name not in _ATTRIBUTES:
                self.refuse(f"the attribute {name!r} on <{tag}>")
            elif name == "style" and not _TABLE_ALIGNMENT.fullmatch(value or ""):
                self.refuse(f"the style {value!r} on <{tag}>")
            elif name in ("href", "src") and not _allowed_target(name, value or ""):
                what = "an image from" if name == "src" else "a link to"
                self.refuse(f"{what} {(value or '')[:60]!r}")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_comment(self, data: str) -> None:
        self.refuse("an HTML comment")

    def handle_decl(self, decl: str) -> None:
        self.refuse("a markup declaration")

    def unknown_decl(self, data: str) -> None:
        self.refuse("a markup declaration")

    def handle_pi(self, data: str) -> None:
        self.refuse("a processing instruction")


def page_problem(html: str) -> str | None:
    """What a generated page's HTML holds that entry text must not make, or None."""
    reader = _PageReader()
    reader.feed(html)
    reader.close()
    return reader.problem
