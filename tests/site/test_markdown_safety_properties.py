"""Property test: whatever Markdown the validator accepts in an entry, its rendered page
holds no markup the text brought, no link off the web and no image from elsewhere.

Text is built from the pieces attacks are made of (backticks, fences, brackets, tags,
schemes, character references, list markers, quotes), put into fields shown in every
kind of place on a page (a paragraph, a list item, an admonition, a table cell, a
heading, a first sentence), checked by ``load_catalog``, rendered by ``render_site`` and
converted by Python-Markdown with the site's own extensions (``mkdocs.yml``). A checker
written here, independent of the build's own, reads the HTML as a browser would.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import markdown
import pytest
import yaml
from failpedia.catalog.validate import load_catalog
from failpedia.site.render import SiteSettings, render_site
from helpers import LIMIT, copy_fixture, entry_data, write_entry_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sitebuild import REPO

PIECES = [
    *("`", "``", "```", "~~~", "\\", "\n", "\n\n", " ", "    ", "- ", "1. ", "> ", "# ", "|"),
    *("[", "]", "(", ")", "![", "](", "<", ">", "!", ":", "*", "_", "x", "b", "python"),
    *('img src=x onerror="f()"', 'div onclick="f()"', 'x:y onfocus="f()"', "!-- c --"),
    *("javascript:f()", "JaVaScRiPt:f()", "data:text/html,x", "//evil.example/p.png"),
    *("https://ok.example/p.png", "&#58;", "&#9;", "&lt;", "[y]: ", "[y]", "<javascript:f()>"),
    *("<https://a.example>", "!!! note\n", "---\n", "`javascript:f()`", "j`a`vascript:"),
]
FIELDS = ("mechanism", "summary", "fix", "confirm", "symptom", "question", "answer", "title")

# What Markdown and the templates make; anything else came from entry text.
TAGS = {
    *("a", "blockquote", "br", "code", "div", "em", "hr", "img", "input", "label", "li"),
    *("ol", "p", "pre", "span", "strong", "sub", "sup", "table", "tbody", "td", "th"),
    *("thead", "tr", "ul", "h1", "h2", "h3", "h4", "h5", "h6"),
    *("details", "summary"),  # the page's folded blocks (sources, the whole reproducer)
}
ATTRIBUTES = {"alt", "checked", "class", "disabled", "href", "id", "name", "src", "start"}
ATTRIBUTES |= {"style", "title", "type", "open"}
# The "Confirm it" checkboxes' names ("Step N done"), which site/accessible_html.py writes.
ATTRIBUTES |= {"aria-label"}
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


class _Browserish(HTMLParser):
    """Reads HTML as a browser would and records what entry text must not make."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name not in ATTRIBUTES:
                self.found.append(f"<{tag} {name}>")
            if name in ("href", "src") and value is not None:
                url = re.sub(r"[\t\n\r]", "", value).strip("\x00- ")
                scheme = SCHEME.match(url)
                if name == "src" and (scheme or url.startswith(("/", "\\"))):
                    self.found.append(f"<img src={value!r}>")
                elif name == "href" and (
                    (scheme and scheme.group().lower() not in ("http:", "https:"))
                    or url.startswith(("//", "/\\", "\\"))
                ):
                    self.found.append(f"<a href={value!r}>")

    handle_startendtag = handle_starttag

    def handle_comment(self, data: str) -> None:
        self.found.append("<!--")

    def handle_pi(self, data: str) -> None:
        self.found.append("<?")


def _markdown() -> markdown.Markdown:
    """Python-Markdown configured as mkdocs configures it from the site's mkdocs.yml (with the
    extensions mkdocs always loads first)."""
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    extensions, options = ["toc", "tables", "fenced_code"], {}
    for item in config["markdown_extensions"]:
        name, settings_ = next(iter(item.items())) if isinstance(item, dict) else (item, {})
        if name not in extensions:
            extensions.append(name)
        options[name] = {
            key: value == "true" if value in ("true", "false") else value
            for key, value in (settings_ or {}).items()
        }
    return markdown.Markdown(extensions=extensions, extension_configs=options)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_fixture(tmp_path_factory.mktemp("markdown-safety"))


@pytest.fixture(scope="module")
def renderer() -> markdown.Markdown:
    return _markdown()


def _with_text(data: dict, field: str, text: str) -> dict:
    if field in ("mechanism", "summary", "title"):
        data[field] = "A " + text
    elif field == "fix":
        data["fix"] = [{"text": "A " + text}]
    elif field == "confirm":
        data["confirm"] = ["A " + text]
    elif field == "symptom":
        data["symptoms"] = [{"observation": "A " + text, "meaning": "B " + text}]
    else:
        data["faq"] = [{"question": "A " + text, "answer": "B " + text}]
    return data


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    pieces=st.lists(st.sampled_from(PIECES), min_size=1, max_size=16),
    field=st.sampled_from(FIELDS),
)
@pytest.mark.slow
def test_accepted_markdown_renders_to_nothing_it_must_not_make(
    project: Path, renderer: markdown.Markdown, pieces: list[str], field: str
) -> None:
    text = "".join(pieces)
    original = entry_data(project, LIMIT)
    try:
        data = _with_text(entry_data(project, LIMIT), field, text)
        write_entry_data(project, LIMIT, data)
        catalog, problems = load_catalog(project / "entries", project)
        if problems:
            return
        pages = render_site(catalog, REPO / "templates", SiteSettings()).pages
    finally:
        write_entry_data(project, LIMIT, original)
    for page in pages:
        if page.path.endswith(("widget-limit.md", "widgets/index.md")):
            renderer.reset()
            body = page.markdown.split("---\n", 2)[2]
            checker = _Browserish()
            checker.feed(renderer.convert(body))
            assert checker.found == [], (field, text, page.path)
            assert "<" not in page.markdown.split("---\n", 2)[1], (field, text, page.path)
