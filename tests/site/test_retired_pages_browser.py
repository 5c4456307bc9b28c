"""``mkdocs build`` serves a page at each retired id's old address that sends readers to
the entry that took its place, and a browser that opens an old link lands on the new
page, at the same section."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import LIMIT, MERGED, RENAMED, copy_fixture, write_registry
from sitebuild import REPO, SiteServer, build_site


@pytest.fixture(scope="module")
def redirect_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mini catalog with a renamed and a merged id, built with ``mkdocs build``."""
    root = copy_fixture(tmp_path_factory.mktemp("retired"))
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    for name in ("docs", "templates"):
        shutil.copytree(REPO / name, root / name)
    write_registry(root, RENAMED, MERGED)
    return build_site(root, root / "site")


@pytest.mark.slow
def test_the_old_address_serves_a_page_that_sends_readers_on(redirect_site: Path) -> None:
    page = (redirect_site / "widgets" / "widget-overflow" / "index.html").read_text()
    target = "../../widgets/widget-limit/"
    assert f'<meta http-equiv="refresh" content="0; url={target}">' in page
    assert (
        '<link rel="canonical" href="https://failpedia.github.io/failpedia/widgets/widget-limit/">'
        in page
    )
    assert f'<a href="{target}">Widget count exceeds the limit</a>' in page
    assert "widget-overflow was renamed to widget-limit on 2026-11-02" in page
    # A merged id's old category need not exist any more: only its page is there.
    merged = (redirect_site / "gadgets" / "gadget-stall" / "index.html").read_text()
    assert "../../widgets/widget-jam/" in merged
    assert "gadget-stall was merged into widget-jam on 2026-11-20" in merged


@pytest.fixture(scope="module")
def redirect_url(redirect_site: Path) -> Iterator[str]:
    with SiteServer(redirect_site) as server:
        yield server.url


def test_a_browser_at_the_old_address_lands_on_the_new_section(browser, redirect_url: str) -> None:
    page = browser.new_page()
    page.goto(f"{redirect_url}widgets/widget-overflow/#fix", wait_until="load")
    page.wait_for_url(f"{redirect_url}{LIMIT}/#fix", timeout=15_000)
    heading = page.locator("h1").first.inner_text()
    page.close()
    assert heading.rstrip("¶") == "Widget count exceeds the limit"
