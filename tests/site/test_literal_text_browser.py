"""Text that only looks like markup stays as it is on the built site: the addresses of an
entry's evidence reports, shown as link text, keep their underscores, asterisks and
ampersands; and the site search's highlighting of a query never cuts into the ``&lt;`` and
``&gt;`` a title's ``<`` and ``>`` are written as.
"""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import LIMIT, TIMEOUT, copy_fixture, entry_data, grow_catalog, write_entry_data
from sitebuild import REPO, SiteServer, build_site

# Addresses whose text Markdown would read as emphasis, or as a character reference.
REPORT_URLS = [
    "https://github.com/_foo_/gadgets/issues/12",
    "https://discuss.example.org/t/*gadget*-timeouts/99?a=1&lt;b&x=__y__",
]
TITLE = "Widget count exceeds the limit in `<lambda>` and `<genexpr>`"


def _documented(root: Path) -> None:
    """Make ``gadget-timeout`` an entry documented from reports at ``REPORT_URLS``."""
    data = entry_data(root, TIMEOUT)
    data.pop("reproducer")
    data["signatures"][0]["verified_from"] = "framework-source"
    data["signatures"][0]["verified_at"] = "gadgets/deadline.py, gadgets 1.3"
    quotes = [
        "BazError: gadget 7 timed out after 45 seconds",
        "BazError: gadget 300 timed out after 5 seconds",
    ]
    data["evidence"] = {
        "unreproducible": "It needs a gadget firmware fault that no script can cause.",
        "reports": [
            {"url": url, "quote": quote, "versions": "gadgets 1.2"}
            for url, quote in zip(REPORT_URLS, quotes, strict=True)
        ],
    }
    write_entry_data(root, TIMEOUT, data)
    (root / "entries" / TIMEOUT / "repro.py").unlink()


@pytest.fixture(scope="module")
def literal_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_fixture(tmp_path_factory.mktemp("literal"))
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    for name in ("docs", "templates"):
        shutil.copytree(REPO / name, root / name)
    grow_catalog(root, 4)
    _documented(root)
    data = entry_data(root, LIMIT)
    data["title"] = TITLE
    write_entry_data(root, LIMIT, data)
    return build_site(root, root / "site")


@pytest.fixture(scope="module")
def literal_url(literal_site: Path) -> Iterator[str]:
    with SiteServer(literal_site) as server:
        yield server.url


@pytest.mark.slow
def test_evidence_addresses_are_link_text_as_they_are(literal_site: Path) -> None:
    page = (literal_site / TIMEOUT / "index.html").read_text(encoding="utf-8")
    # The reports' links: their addresses' first two parts are no other link's.
    starts = "|".join(re.escape("/".join(url.split("/")[:4])) for url in REPORT_URLS)
    shown = re.findall(rf'<a href="(?:{starts})/[^"]*">(.*?)</a>', page)
    assert shown == [html.escape(url.split("://", 1)[1], quote=False) for url in REPORT_URLS]


def test_search_highlighting_leaves_escaped_brackets_whole(browser, literal_url: str) -> None:
    page = browser.new_page()
    page.goto(literal_url, wait_until="load")
    page.click("input[data-md-component=search-query]")
    page.keyboard.type("lambda lt gt genexpr")
    title = page.locator(f'.md-search-result__item a[href*="/{LIMIT}/?"] h1').first
    title.wait_for(timeout=15_000)
    page.wait_for_timeout(300)
    shown = title.inner_text()
    markup = title.inner_html()
    page.close()
    assert "<lambda>" in shown and "<genexpr>" in shown, shown
    assert "&lt" not in shown and "&gt" not in shown, shown
    assert "&amp;<mark>" not in markup, markup  # no "&" left before a marked word
    # The words themselves are still marked.
    assert "<mark>lambda</mark>" in markup and "<mark>genexpr</mark>" in markup, markup
