"""Site search in headless Chromium: the wiring and what a reader sees. Loading a page
asks for no full-text index until a search box is used; a pasted or typed message shows
its entry first, with its quick answer and a link to its fix, at desktop and phone width;
the query cleaning; a huge paste. Whether every signature line and alias finds its entry
is checked by the same scripts run in Node (``test_search_lines.py``)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from longtask import LONGEST_TASK_BOUND_MS, RECORD_LONGEST_TASK, longest_task_ms
from search_cases import CATALOG, signature_cases
from sitebuild import REPO

BOX = "input[data-md-component=search-query]"
# The first result: an entry the signature matcher lists (search-owner.js), else the first
# full-text result.
FIRST_RESULT = ".md-search-result a.md-search-result__link"
OWNER = "[data-fp-search-owners] > li"
INDEX = "/search/search_index.json"
PHONE = {"width": 390, "height": 844}
# The note the count shows where the message looks like an error and no signature matches.
NO_MATCH_NOTE = "No entry's signature matches"


def _line(entry_id: str, contains: str) -> tuple[str, str]:
    """(entry page path, signature line) of the entry's line that contains ``contains``."""
    for url, label, text in signature_cases():
        if url.endswith(f"/{entry_id}/") and "-signature" in label and contains in text:
            return url, text
    raise AssertionError(f"{entry_id} has no signature line with {contains!r}")


def _summary(entry_id: str) -> str:
    """The entry's summary as the result shows it: its `code` spans as code."""
    return next(item.entry.summary for item in CATALOG.entries if item.entry.id == entry_id)


@pytest.fixture(scope="module")
def loaded_page(browser, site_url):
    """One page for the module: the search worker builds its index once."""
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(site_url, wait_until="load")
    yield page
    context.close()
    outside = [url for url in requests if not url.startswith(site_url)]
    assert not outside, f"requests left the site: {outside}"


@pytest.fixture
def search_page(loaded_page):
    """The search box, focused and empty, with no results left from an earlier query."""
    loaded_page.fill(BOX, "")
    loaded_page.dispatch_event(BOX, "keyup")
    loaded_page.wait_for_function(
        "sel => !document.querySelector(sel)", arg=FIRST_RESULT, timeout=5_000
    )
    loaded_page.click(BOX)
    return loaded_page


def _index_requests(requests: list[str]) -> list[str]:
    return [url for url in requests if urlsplit(url).path.endswith(INDEX)]


def test_the_full_text_index_loads_when_the_box_is_first_used(browser, site_url) -> None:
    """A page view asks for no search_index.json; focusing the search box does, once, and
    the full-text search then answers."""
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(site_url + "cuda/cuda-oom/", wait_until="networkidle")
    assert _index_requests(requests) == []
    assert page.evaluate("window.failpediaSearchIndexWanted()") is False
    with page.expect_request(lambda request: urlsplit(request.url).path.endswith(INDEX)):
        page.click(BOX)
    page.keyboard.type("nan loss")
    page.wait_for_function(
        "() => /mention/.test(document.querySelector('.md-search-result__meta').textContent)",
        timeout=30_000,
    )
    assert len(_index_requests(requests)) == 1
    context.close()


def test_home_page_box_and_highlighted_pages_ask_for_the_index(browser, site_url) -> None:
    """The home page's own search box asks for the index when focused; a page opened from a
    search result (?h=) asks at once, since it highlights the searched words with it."""
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(site_url, wait_until="networkidle")
    assert _index_requests(requests) == []
    with page.expect_request(lambda request: urlsplit(request.url).path.endswith(INDEX)):
        page.focus(".fp-search-input")
    with page.expect_request(lambda request: urlsplit(request.url).path.endswith(INDEX)):
        page.goto(site_url + "cuda/cuda-oom/?h=memory", wait_until="load")
    page.wait_for_selector("article mark", timeout=30_000)
    context.close()


def test_pasted_line_on_a_cold_page_shows_entry_quick_answer_and_fix(browser, site_url) -> None:
    """A message pasted into the box of a page just opened: its entry is listed first with
    its quick answer; the count never says no signature matched; the fix link opens the
    entry at its Fix heading."""
    url, line = _line("autograd-leaf-inplace", "a leaf Variable")
    context = browser.new_context()
    page = context.new_page()
    page.goto(site_url, wait_until="load")
    page.evaluate(
        """() => { window.__counts = [];
                   new MutationObserver(() => window.__counts.push(
                       document.querySelector('.md-search-result__meta').textContent))
                     .observe(document.querySelector('.md-search-result__meta'),
                              { childList: true, characterData: true, subtree: true }); }"""
    )
    page.click(BOX)
    page.keyboard.insert_text("[rank0]: " + line)
    entry = page.locator(OWNER).first
    entry.wait_for(state="visible", timeout=15_000)
    assert entry.get_attribute("data-entry") == "autograd-leaf-inplace"
    answer = entry.locator(".fp-search-owner__answer")
    assert answer.is_visible()
    assert answer.text_content() == _summary("autograd-leaf-inplace").replace("`", "")
    # `code` in the summary is code, set as text.
    assert answer.locator("code").count() == _summary("autograd-leaf-inplace").count("`") // 2
    page.wait_for_function(
        "q => { const s = window.failpediaSearchOwner.state();"
        " return s.settled && s.settled.query === q; }",
        arg="[rank0]: " + line,
        timeout=30_000,
    )
    counts = page.evaluate("window.__counts")
    assert counts and not [text for text in counts if NO_MATCH_NOTE in text], counts
    fix = entry.locator("a.fp-search-owner__fix")
    assert fix.is_visible()
    fix.click()
    page.wait_for_url(lambda address: urlsplit(address).path.endswith("/" + url))
    assert urlsplit(page.url).fragment == "fix"
    page.wait_for_function(
        "() => { const r = document.getElementById('fix').getBoundingClientRect();"
        " return r.top >= 0 && r.top < innerHeight; }"
    )
    context.close()


def test_phone_width_shows_the_entry_answer_and_fix(browser, site_url) -> None:
    """On a phone the header's search opens, the pasted message's entry, quick answer and
    fix link are shown, and nothing is wider than the screen."""
    _, line = _line("cuda-oom", "CUDA out of memory")
    page = browser.new_page(viewport=PHONE)
    page.goto(site_url + "diagnose/", wait_until="load")
    page.click("label.md-header__button[for=__search]")
    page.locator(BOX).wait_for(state="visible")
    page.keyboard.insert_text(line)
    entry = page.locator(OWNER).first
    entry.wait_for(state="visible", timeout=15_000)
    assert entry.get_attribute("data-entry") == "cuda-oom"
    for part in (".fp-search-owner__answer", "a.fp-search-owner__fix", "h1"):
        shown = entry.locator(part)
        assert shown.is_visible(), part
        box = shown.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], part
    result = page.locator("[data-md-component=search-result]")
    assert result.evaluate("node => node.scrollWidth <= node.clientWidth")
    page.close()


def test_typed_error_finds_its_entry_first(search_page) -> None:
    """Typing reaches the search through a keystroke per character."""
    url, line = _line("cuda-device-mismatch", "Expected all tensors")
    search_page.keyboard.type(line)
    search_page.wait_for_function(
        """([sel, url]) => { const link = document.querySelector(sel);
                             return link && new URL(link.href).pathname.endsWith("/" + url); }""",
        arg=[FIRST_RESULT, url],
        timeout=15_000,
    )


def test_pasted_alias_finds_its_entry_by_full_text(search_page) -> None:
    """A wording no release prints (an alias) matches no signature: the full-text search
    puts its entry first."""
    url, alias = next(
        (url, text)
        for url, label, text in signature_cases()
        if "-alias" in label and url.endswith("/cudnn-status-internal-error/")
    )
    search_page.keyboard.insert_text(alias)
    search_page.wait_for_function(
        """([sel, url]) => { const link = document.querySelector(sel);
                             return link && new URL(link.href).pathname.endsWith("/" + url); }""",
        arg=[FIRST_RESULT, url],
        timeout=30_000,
    )


def test_search_needs_the_query_cleaning(search_page) -> None:
    """The page strips lunr query syntax (field colons, presence, boost, fuzz, wildcards)."""
    cleaned = search_page.evaluate(
        "window.failpediaCleanQuery('RuntimeError: Error(s) +xx -yy ^2 ab~1 cd* (8) "
        "i.e. w.r.t. torch._dynamo.exc 2.00 C++')"
    )
    assert cleaned == "RuntimeError Error xx yy ab cd torch _dynamo exc 2.00"


def test_search_drops_absolute_paths(search_page) -> None:
    """Paths of the machine that printed a message are no words to search for."""
    cleaned = search_page.evaluate(
        'window.failpediaCleanQuery("RuntimeError: [/__w/pytorch/third_party/gloo/pair.cc:553] '
        "Connection closed; File '/tmp/run-8f2k/predict.py', C:\\\\work\\\\x.py line 3\")"
    )
    assert cleaned == "RuntimeError 553 Connection closed File line"


def test_a_huge_pasted_query_keeps_the_page_responsive(browser, site_url) -> None:
    """850 KB of log pasted into the search box (its words were each marked or listed as
    missing in every result, which blocked the page for over a minute): the search
    answers and the main thread is never busy for long."""
    corpus = "".join(
        path.read_text() for path in sorted((REPO / "tests" / "diagnose_corpus").glob("*.log"))
    )
    query = (corpus * (850_000 // len(corpus) + 1))[:850_000]
    context = browser.new_context()
    page = context.new_page()
    page.add_init_script(RECORD_LONGEST_TASK)
    page.goto(site_url, wait_until="load")
    page.click("input[data-md-component=search-query]")
    page.keyboard.insert_text(query)
    page.wait_for_function(
        "() => /match|mention/.test(document.querySelector('.md-search-result__meta').textContent)",
        timeout=120_000,
    )
    page.wait_for_timeout(1000)  # the results are rendered
    longest = longest_task_ms(page)
    context.close()
    assert longest < LONGEST_TASK_BOUND_MS
