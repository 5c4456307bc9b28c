"""Every page type, in light and in dark mode, passes axe-core's WCAG 2.1 A and AA rules in
Chromium: named controls, links told apart from text by more than colour, contrast
(search highlights and code included), scrollable regions reachable by keyboard.

axe-core 4.14.1 is vendored in ``tests/vendor/`` (MPL-2.0, its header and licence kept), so
the test needs no network. The site is served under ``site_url``'s path, where the 404
page's absolute links and styles resolve.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from sitebuild import REPO, SiteServer

AXE = REPO / "tests" / "vendor" / "axe.min.js"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# mkdocs.yml's palette follows prefers-color-scheme: the scheme each mode shows.
SCHEMES = {"light": "default", "dark": "slate"}
# The query typed into the header's search for the results state; its results show
# code blocks and highlighted words.
SEARCH_QUERY = "out of memory"
PAGES = {
    "home": "",
    "category": "cuda/",
    "entry (proved)": "cuda/cuda-oom/",
    "entry (search words highlighted)": "cuda/cuda-oom/?h=memory",
    "log page": "diagnose/",
    "coverage": "coverage/",
    "contributing": "contributing/",
    "not found": "404.html",
}


def _unproved_entry_page(built_site: Path) -> str | None:
    """An entry page marked not yet proved, if the catalog has one."""
    for page in sorted(built_site.glob("*/*/index.html")):
        if "Not yet proved" in page.read_text(encoding="utf-8"):
            return page.parent.relative_to(built_site).as_posix() + "/"
    return None


@pytest.fixture(scope="module")
def base_url(built_site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The built site served under the path of ``site_url``."""
    base = urlsplit(yaml.safe_load((REPO / "mkdocs.yml").read_text())["site_url"]).path
    root = tmp_path_factory.mktemp("served")
    (root / base.strip("/")).symlink_to(built_site)
    with SiteServer(root) as server:
        yield server.url.rstrip("/") + base


def _axe_violations(page) -> list[dict]:
    page.add_script_tag(path=str(AXE))
    options = {"runOnly": {"type": "tag", "values": WCAG_TAGS}, "resultTypes": ["violations"]}
    return page.evaluate("options => axe.run(document, options)", options)["violations"]


def _report(found: dict[str, list[dict]]) -> str:
    """Each violation's page, rule id, impact, help and the nodes it names."""
    lines = []
    for name, violations in found.items():
        for violation in violations:
            lines.append(f"{name}: {violation['id']} ({violation['impact']}): {violation['help']}")
            for node in violation["nodes"]:
                summary = " ".join(node["failureSummary"].split())
                lines.append(f"    {' '.join(map(str, node['target']))}: {summary}")
    return "\n".join(lines)


@pytest.mark.parametrize("mode", list(SCHEMES))
def test_every_page_type_passes_axe(browser, built_site: Path, base_url: str, mode: str) -> None:
    pages = dict(PAGES)
    unproved = _unproved_entry_page(built_site)
    if unproved is not None:
        pages["entry (not yet proved)"] = unproved
    context = browser.new_context(color_scheme=mode, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    found: dict[str, list[dict]] = {}
    try:
        for name, path in pages.items():
            page.goto(base_url + path, wait_until="load")
            scheme = page.evaluate("document.body.getAttribute('data-md-color-scheme')")
            assert scheme == SCHEMES[mode], (name, scheme)
            found[name] = _axe_violations(page)
        page.goto(base_url, wait_until="load")
        page.locator(".md-search__input").fill(SEARCH_QUERY)
        page.locator(".md-search-result__item mark").first.wait_for(timeout=15_000)
        found["search results"] = _axe_violations(page)
    finally:
        context.close()
    found = {name: violations for name, violations in found.items() if violations}
    assert not found, f"axe-core ({mode} mode) found:\n{_report(found)}"


# Proof statuses and run verdicts as records and the code spell them: none is a label.
STATUS_CODES = {"proved-cpu", "proved-gpu", "not-proved", "stale", "documented", "proved"}
STATUS_CODES |= {"not-reproduced", "fix-failed", "timed-out", "harness-error", "skipped"}
PHONE = {"width": 390, "height": 844}


def test_the_coverage_page_reads_on_a_phone(browser, base_url: str) -> None:
    """Statuses in words; the tables one block per row (an entry, a device), each value
    named by its column, nothing wider than the screen; axe finds nothing at that size."""
    page = browser.new_page(viewport=PHONE)
    try:
        page.goto(base_url + "coverage/", wait_until="load")
        cells = page.locator("article :is(td, th)").all_inner_texts()
        assert not STATUS_CODES & {cell.strip() for cell in cells}
        row = page.locator("article tr:has(.fp-cell-label)").first
        box = row.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        label = row.locator(".fp-cell-label").first
        assert label.is_visible() and label.inner_text().rstrip().endswith(":")
        assert all(
            head.is_hidden()
            for head in page.locator("article table:has(.fp-cell-label) thead").all()
        )
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        violations = _axe_violations(page)
        assert not violations, _report({"coverage (phone)": violations})
    finally:
        page.close()


def test_the_404_page_searches_from_its_own_box(browser, base_url: str) -> None:
    """On a phone the header's search is an icon: the page offers a box that searches."""
    page = browser.new_page(viewport=PHONE)
    try:
        page.goto(base_url + "404.html", wait_until="load")
        box = page.locator("article .fp-search-input")
        assert box.is_visible()
        box.fill(SEARCH_QUERY)
        page.locator(".md-search-result__item a[href]").first.wait_for(timeout=15_000)
    finally:
        page.close()
