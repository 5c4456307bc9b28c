"""Site search in headless Chromium: how the entries a pasted message matches are shown
above the full-text results (as text, with the match marked), the count, and Enter.

How often the owning entry comes first, over every signature line and alias in five
variants and the real-world lines, is measured by the same scripts in Node
(``test_search_lines.py``); how soon it shows, by ``benchmarks/search_latency.py``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from urllib.parse import urlsplit

import pytest
from helpers import REPO_ROOT
from search_cases import RANK_PREFIX, TIME_PREFIX, signature_cases

BOX = "input[data-md-component=search-query]"
BASE_CASES = signature_cases()


@pytest.fixture
def search_page(browser, site_url):
    """A loaded page with the search box focused: its full-text index built and the
    signature matcher started, as for a reader who clicked the box and then pastes."""
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(site_url, wait_until="load")
    page.click(BOX)
    page.wait_for_function(
        "() => window.failpediaSearchOwner.match('RuntimeError').then(() => true)"
    )
    page.wait_for_function(
        "() => !/Initializing/i.test(document.querySelector('.md-search-result__meta').textContent)"
    )
    yield page
    context.close()
    outside = [url for url in requests if not url.startswith(site_url)]
    assert not outside, f"requests left the site: {outside}"


def _search(page, query: str) -> None:
    """Paste ``query`` into the box and wait until both the matcher's entries and the
    full-text results for it are on the page."""
    page.fill(BOX, "")
    page.keyboard.insert_text(query)
    page.wait_for_function(
        """q => { const s = window.failpediaSearchOwner.state();
                  return s.settled && s.settled.query === q; }""",
        arg=query,
        timeout=15_000,
    )


def _case(entry_id: str, contains: str) -> tuple[str, str]:
    """(entry page path, signature line) of the entry's line that contains ``contains``."""
    for url, label, text in BASE_CASES:
        if url.endswith(f"/{entry_id}/") and "-signature" in label and contains in text:
            return url, text
    raise AssertionError(f"{entry_id} has no signature line with {contains!r}")


def test_matched_entry_shows_the_query_as_text_with_the_match_marked(search_page) -> None:
    """Entry titles and query text are put on the page as text, never as HTML: the query's
    image would set ``window.__pwned`` when its request failed."""
    url, line = _case("load-state-dict-size-mismatch", "size mismatch for")
    # Short enough to be shown whole before the mark (the page shows 48 characters).
    payload = "<img id=injected src=x onerror=__pwned=1>"
    prefix = payload + " "
    _search(search_page, prefix + line)
    search_page.wait_for_timeout(500)  # time for an image's request to fail
    assert search_page.evaluate("window.__pwned") is None
    entry = search_page.locator("[data-fp-search-owners] > li").first
    assert entry.get_attribute("data-entry") == "load-state-dict-size-mismatch"
    assert urlsplit(entry.locator("a.md-search-result__link").get_attribute("href")).path.endswith(
        "/" + url
    )
    # The title's `<param>` is code, not an element.
    assert entry.locator("h1 code").first.text_content() == "<param>"
    assert entry.locator("h1 param").count() == 0
    shown = entry.locator(".fp-search-owner__line").text_content()
    marked = entry.locator(".fp-search-owner__line mark").text_content()
    assert marked and marked in line and marked in shown
    assert payload in shown
    assert search_page.locator("#injected, .md-search-result img").count() == 0


def test_results_show_no_tag_pills(search_page) -> None:
    """Entry pages' tags (their messages) are in the results but not shown."""
    _search(search_page, "leaf Variable in-place operation")
    search_page.wait_for_selector(".md-search-result__list > li")
    tags = search_page.locator(".md-search-result .md-tag")
    assert tags.count() > 0
    assert not any(tag.is_visible() for tag in tags.all())


def test_count_tells_entries_and_pages(search_page) -> None:
    """The count says how many entries match and how many other pages mention the words,
    and the page lists that many."""
    _, line = _case("autograd-leaf-inplace", "a leaf Variable")
    _search(search_page, RANK_PREFIX + line)
    meta = search_page.locator(".md-search-result__meta").text_content().strip()
    found = re.fullmatch(
        r"(\d+) entr(?:y matches|ies match) this message; "
        r"(?:(\d+) other pages? mentions? its words|no other page mentions its words)",
        meta,
    )
    assert found, meta
    entries, pages = int(found[1]), int(found[2] or 0)
    assert entries == search_page.locator("[data-fp-search-owners] > li").count()
    # The theme renders the first ten results at once and the others as the list scrolls.
    assert min(pages, 10) == search_page.locator(".md-search-result__list > li").count()

    _search(search_page, "nan loss")
    meta = search_page.locator(".md-search-result__meta").text_content().strip()
    assert re.fullmatch(r"\d+ pages? mentions? these words", meta), meta
    assert search_page.locator("[data-fp-search-owners] > li").count() == 0


def test_unmatched_error_line_lists_the_entries_diagnose_finds_nearest(search_page) -> None:
    """A line no signature matches and no entry's message is close to gets the entries
    nearest to it in wording at once, in `failpedia diagnose`'s order, each labelled as
    not matched and with its quick answer and fix link."""
    line = "RuntimeError: loss became NaN"
    diagnosed = subprocess.run(
        [
            sys.executable,
            "-m",
            "failpedia.cli",
            "--root",
            str(REPO_ROOT),
            "diagnose",
            "--json",
            "-",
        ],
        input=line,
        capture_output=True,
        text=True,
        check=False,
    )
    assert diagnosed.returncode == 1, diagnosed.stderr  # 1: no known failure found
    diagnosis = json.loads(diagnosed.stdout)
    assert not diagnosis["findings"] and diagnosis["nearest"], diagnosis
    _search(search_page, line)
    listed = search_page.locator("[data-fp-search-owners] > li")
    assert [item.get_attribute("data-entry") for item in listed.all()] == [
        near["id"] for near in diagnosis["nearest"]
    ]
    labels = listed.locator(".fp-search-owner__nearest").all_text_contents()
    assert labels == ["Not matched: nearest in wording"] * len(diagnosis["nearest"])
    assert listed.first.locator(".fp-search-owner__answer").text_content().strip()
    assert listed.first.locator("a.fp-search-owner__fix").get_attribute("href").endswith("#fix")
    meta = search_page.locator(".md-search-result__meta").text_content().strip()
    count = len(diagnosis["nearest"])
    nearest = "1 entry is nearest" if count == 1 else f"the {count} entries nearest"
    assert meta.startswith(f"No entry's signature matches this message; {nearest}"), meta


def test_a_short_line_from_a_log_lists_the_nearest_entries_too(search_page) -> None:
    """A name or a short line from a log with no error word (a status code, a metric) is
    looked up by wording as a pasted message is, not left to the full-text search, while
    words typed to search for ("nan loss") are."""
    _search(search_page, "CUDNN_STATUS_NOT_INITIALIZED")
    listed = search_page.locator("[data-fp-search-owners] > li")
    assert listed.first.get_attribute("data-entry") == "cudnn-status-not-initialized"
    labels = listed.locator(".fp-search-owner__nearest").all_text_contents()
    assert labels and labels == ["Not matched: nearest in wording"] * listed.count()
    meta = search_page.locator(".md-search-result__meta").text_content().strip()
    assert re.match(r"The \d+ entries nearest to it in wording are listed", meta), meta


def test_enter_opens_the_matched_entry(search_page) -> None:
    url, line = _case("autograd-leaf-inplace", "a view of a leaf Variable")
    _search(search_page, TIME_PREFIX + line)
    search_page.keyboard.press("Enter")
    search_page.wait_for_url(lambda address: urlsplit(address).path.endswith("/" + url))
