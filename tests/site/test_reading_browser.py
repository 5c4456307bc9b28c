"""The site as a reader meets it, in Chromium at a desktop and a phone size: nothing wider
than the screen, the fix near the top of an entry page, a home page that offers search and
the log page, a 404 page that helps.

Screenshots of every page type at both sizes go to ``test-artifacts/screenshots/`` (not
committed) for a person to look at.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from sitebuild import REPO, SiteServer

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
PAGES = {
    "home": "",
    "category": "cuda/",
    "entry": "cuda/cuda-oom/",
    "entry-long-traceback": "data/dataloader-worker-exception/",
    "log-page": "diagnose/",
    "coverage": "coverage/",
    "contributing": "contributing/",
}
SCREENSHOTS = REPO / "test-artifacts" / "screenshots"


@pytest.fixture(scope="module", params=list(SIZES))
def page(request, browser):
    width, height = SIZES[request.param]
    page = browser.new_page(viewport={"width": width, "height": height})
    page.size_name = request.param  # type: ignore[attr-defined]
    yield page
    page.close()


def _open(page, site_url: str, path: str) -> None:
    page.goto(f"{site_url}/{path}")
    page.wait_for_load_state("load")


@pytest.mark.parametrize("kind", list(PAGES))
def test_no_page_is_wider_than_the_screen(page, site_url: str, kind: str) -> None:
    _open(page, site_url, PAGES[kind])
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{kind}-{page.size_name}.png"))
    width = page.viewport_size["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width, kind


def test_the_fix_is_on_the_first_screens_of_an_entry_page(page, site_url: str) -> None:
    """The fix starts within a screen and a half: the quick answer and the identifying
    lines of the messages are all that come before it."""
    for path in (PAGES["entry"], PAGES["entry-long-traceback"]):
        _open(page, site_url, path)
        top = page.evaluate("document.getElementById('fix').getBoundingClientRect().top")
        assert top <= 1.5 * page.viewport_size["height"], (path, top)


def test_an_entry_page_shows_its_reproducer(page, site_url: str) -> None:
    _open(page, site_url, PAGES["entry"])
    summary = page.locator("details summary", has_text="repro.py: the whole script")
    assert summary.count() == 1
    summary.click()
    code = page.locator("details:has(summary:has-text('repro.py')) code").inner_text()
    script = (REPO / "entries" / "cuda" / "cuda-oom" / "repro.py").read_text(encoding="utf-8")
    assert code.strip() == script.strip()


def _dark_background(page) -> bool:
    colour = page.evaluate("getComputedStyle(document.body).backgroundColor")
    channels = [int(part) for part in colour[colour.index("(") + 1 : -1].split(",")[:3]]
    return sum(channels) < 3 * 96


def test_pages_follow_the_systems_dark_mode(browser, site_url: str) -> None:
    for scheme, dark in (("light", False), ("dark", True)):
        context = browser.new_context(color_scheme=scheme)
        page = context.new_page()
        _open(page, site_url, PAGES["entry"])
        assert _dark_background(page) is dark, scheme
        context.close()


def test_home_offers_search_and_the_log_page_on_every_size(page, site_url: str) -> None:
    _open(page, site_url, PAGES["home"])
    search = page.locator("article input[type=search], article .fp-search input")
    assert search.count() >= 1 and search.first.is_visible()
    log_link = page.locator("article a", has_text="Paste your whole log")
    assert log_link.count() >= 1 and log_link.first.is_visible()


def test_the_404_page_has_search_and_the_log_page(page, built_site: Path, tmp_path: Path) -> None:
    """Served where the host serves it, under the site's path (its links and styles are
    absolute there, since it answers for any missing address)."""
    base = urlsplit(yaml.safe_load((REPO / "mkdocs.yml").read_text())["site_url"]).path
    (tmp_path / base.strip("/")).symlink_to(built_site)
    with SiteServer(tmp_path) as server:
        _open(page, server.url.rstrip("/") + base.rstrip("/"), "404.html")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"not-found-served-{page.size_name}.png"))
        text = page.locator("article").inner_text()
        assert "not found" in text.lower()
        log_page = page.locator("article a", has_text="log page")
        assert log_page.count() >= 1
        assert page.locator(".md-search__input").count() == 1  # the header's search
        width = page.viewport_size["width"]
        assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_no_published_file_holds_a_build_machine_path(built_site: Path) -> None:
    leaks = []
    for path in built_site.rglob("*"):
        if path.suffix not in {".html", ".json", ".xml", ".js", ".txt"}:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for marker in (str(REPO), "/root/", "/home/"):
            if marker in text:
                leaks.append((str(path.relative_to(built_site)), marker))
                break
    assert not leaks, leaks[:10]


def test_the_home_search_box_searches(page, site_url: str) -> None:
    _open(page, site_url, PAGES["home"])
    entry = yaml.safe_load((REPO / "entries" / "cuda" / "cuda-oom" / "entry.yaml").read_text())
    page.locator(".fp-search-input").fill(entry["signatures"][0]["text"].splitlines()[0])
    first = page.locator("[data-fp-search-owners] a[href]").first
    first.wait_for(state="visible", timeout=15000)
    assert "cuda-oom" in (first.get_attribute("href") or "")
