from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sitebuild import CHROMIUM, CHROMIUM_ARGS, REPO, SiteServer, build_site


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what needs Chromium (``browser``) or a site build (``slow``) from the fixtures a
    test uses, so no test can forget its marker: ``pytest -m "not browser and not slow"``
    is the fast run."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "browser" in fixtures:
            item.add_marker(pytest.mark.browser)
        if fixtures & {"built_site", "site_url", "browser"}:
            item.add_marker(pytest.mark.slow)


# A test that takes longer than this carries the ``slow`` marker.
SLOW_SECONDS = 5.0


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the tests that took over ``SLOW_SECONDS`` without the ``slow`` marker, so the
    fast run stays fast; a warning, not a failure, since a shared machine's timings vary."""
    unmarked = sorted(
        {
            (report.nodeid.split("[")[0], round(report.duration, 1))
            for reports in terminalreporter.stats.values()
            for report in reports
            if isinstance(report, pytest.TestReport)
            and report.when == "call"
            and report.duration > SLOW_SECONDS
            and "slow" not in report.keywords
        }
    )
    if unmarked:
        terminalreporter.section(f"tests over {SLOW_SECONDS:g} s without the slow marker")
        for nodeid, seconds in unmarked:
            terminalreporter.write_line(f"{seconds:>6} s  {nodeid}")


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's site, built with ``mkdocs build --strict``."""
    return build_site(REPO, tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="session")
def site_url(built_site: Path) -> Iterator[str]:
    with SiteServer(built_site) as server:
        yield server.url


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (see README)")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
