"""Issue links on the built site, in headless Chromium: the log page offers a prefilled
"failure with no entry" issue when nothing matched (built in the browser, redacted,
short enough for GitHub), and every entry page a "this entry is wrong" one."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from sitebuild import REPO

FORMS = REPO / ".github" / "ISSUE_TEMPLATE"
NEW_ISSUE = "https://github.com/failpedia/failpedia/issues/new?"
DONE = "#failpedia-diagnose[data-fp-state=done]"
TOKEN = "hf_" + "ZyXwVuTsRqPoNmLkJiHgFeDcBa98765432"


def form_ids(template: str) -> set[str]:
    form = yaml.safe_load((FORMS / template).read_text(encoding="utf-8"))
    return {item["id"] for item in form["body"] if "id" in item}


def fields_of(href: str) -> dict[str, str]:
    assert href.startswith(NEW_ISSUE), href
    query = parse_qs(urlsplit(href).query, keep_blank_values=True)
    assert all(len(values) == 1 for values in query.values()), query
    fields = {name: values[0] for name, values in query.items()}
    assert set(fields) - {"template", "title", "labels"} <= form_ids(fields["template"])
    return fields


@pytest.fixture
def watched_page(browser, site_url):
    """A page, the requests it makes, and the script errors it raises."""
    page = browser.new_page()
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page, requests
    page.close()
    assert errors == []
    assert requests, "the page made no request: the test observed nothing"
    assert [url for url in requests if not url.startswith(site_url)] == []


def _paste(page: Any, site_url: str, text: str) -> None:
    page.goto(site_url + "diagnose/")
    page.wait_for_selector("#failpedia-diagnose[data-fp-ready]")
    page.fill("#failpedia-diagnose textarea", text)
    page.click("[data-fp-run]")
    page.wait_for_selector(DONE, timeout=120_000)


def test_no_known_failure_offers_a_prefilled_redacted_issue(watched_page, site_url) -> None:
    page, _ = watched_page
    log = (
        "step 10 loss 2.1\n"
        f"ERROR cannot load /home/alice/runs/exp7/config.yaml with HF_TOKEN={TOKEN}\n"
        "Traceback (most recent call last):\n"
        '  File "/home/alice/runs/exp7/train.py", line 9, in <module>\n'
        "ValueError: bad schedule 'cosine-restarts' in /home/alice/runs/exp7\n"
    )
    _paste(page, site_url, log)
    link = page.locator("a.fp-report-link")
    assert link.count() == 1
    href = link.get_attribute("href")
    assert href is not None and len(href) <= 8000
    fields = fields_of(href)
    assert fields["template"] == "unknown-failure.yml"
    assert "ValueError: bad schedule 'cosine-restarts'" in fields["title"]
    report = fields["report"]
    assert "ValueError: bad schedule 'cosine-restarts' in ~/runs/exp7" in report
    assert "Traceback (most recent call last):" in report
    for private in (TOKEN, "alice"):
        assert private not in href and private not in report and private not in fields["title"]
    assert "HF_TOKEN=<redacted>" in report


def test_a_known_failure_offers_no_new_issue(watched_page, site_url) -> None:
    page, _ = watched_page
    _paste(page, site_url, "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 16x2)")
    assert page.locator(".fp-finding").count() == 1
    assert page.locator("a.fp-report-link").count() == 0


def test_the_link_stays_short_enough_for_github(watched_page, site_url) -> None:
    page, _ = watched_page
    long_errors = "".join(
        f"ERROR worker {number} ```` failed: " + "x" * 3000 + "\n" for number in range(40)
    )
    _paste(page, site_url, long_errors)
    href = page.locator("a.fp-report-link").get_attribute("href")
    assert href is not None and len(href) <= 8000
    report = fields_of(href)["report"]
    assert "ERROR worker" in report
    # The log's backtick runs cannot close the block they are in.
    fences = [line for line in report.splitlines() if line.startswith("```")]
    assert fences and all(len(fence.removesuffix("text")) > 4 for fence in fences)


def test_entry_page_links_to_the_entry_wrong_form(watched_page, site_url) -> None:
    page, _ = watched_page
    page.goto(site_url + "data/dataloader-worker-killed-by-signal/")
    links = page.locator("a[href*='template=entry-wrong.yml']")
    assert links.count() == 1
    fields = fields_of(links.first.get_attribute("href") or "")
    assert fields["entry"] == "dataloader-worker-killed-by-signal"
    assert fields["title"].startswith("dataloader-worker-killed-by-signal")
    assert "wrong" in links.first.inner_text()


def test_entry_pages_name_the_repository_without_asking_github(built_site: Path) -> None:
    """The header links to the repository, without the widget that fetches its stars."""
    html = (built_site / "data" / "dataloader-worker-killed-by-signal" / "index.html").read_text()
    assert 'href="https://github.com/failpedia/failpedia"' in html
    assert 'data-md-component="source"' not in html
