"""Site search in headless Chromium finds an entry from its pasted or typed error text."""

from __future__ import annotations

import contextlib

import pytest
from longtask import LONGEST_TASK_BOUND_MS, RECORD_LONGEST_TASK, longest_task_ms
from search_cases import CATALOG, signature_cases
from sitebuild import REPO

CASES = signature_cases()
# Every line is pasted. Typing reaches the same search through a keystroke per character,
# so each entry's first signature line and every alias (what a reader types) is typed.
TYPED_CASES = [case for case in CASES if case[1].endswith("-signature0") or "-alias" in case[1]]
# The first result: an entry the signature matcher lists (search-owner.js), else the first
# full-text result.
FIRST_RESULT = ".md-search-result a.md-search-result__link"


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
    box = "input[data-md-component=search-query]"
    loaded_page.fill(box, "")
    loaded_page.dispatch_event(box, "keyup")
    loaded_page.wait_for_function(
        "sel => !document.querySelector(sel)", arg=FIRST_RESULT, timeout=5_000
    )
    loaded_page.click(box)
    return loaded_page


def _causes(url: str) -> list[str]:
    """The pages of the entries the catalog names as causes of the entry at ``url``, or as
    confused with it (the same message, printed by another failure)."""
    entry_id = url.rstrip("/").rsplit("/", 1)[-1]
    links = CATALOG.links(entry_id)
    return [
        f"{link.target.entry.category}/{link.target.entry.id}/"
        for relation in ("caused-by", "confused-with")
        for link in links.get(relation, [])
    ]


# The owner is first, or the signature matcher lists it after only entries that cause it
# or that the catalog declares confused with it: a line that holds two entries' messages
# ("watchdog thread terminated with exception: ... Watchdog caught collective operation
# timeout") lists the cause first, as the log page does, and a message two failures print
# alike ("Can't get attribute 'X' on <module '__main__'>": torch.load, or a spawned
# DataLoader worker) lists both.
OWNER_FIRST = """([selector, expected, causes]) => {
    const path = link => new URL(link.href).pathname;
    const link = document.querySelector(selector);
    if (link && path(link).endsWith("/" + expected)) return true;
    const listed = [...document.querySelectorAll("[data-fp-search-owners] > li > a")].map(path);
    const at = listed.findIndex(page => page.endsWith("/" + expected));
    return at > 0 && listed.slice(0, at).every(
        page => causes.some(cause => page.endsWith("/" + cause)));
}"""


def _owner_first(page, expected: str) -> tuple[bool, str]:
    """Wait until the expected page is first (or after only its causes), or give up;
    whether it is, and the first result."""
    arg = [FIRST_RESULT, expected, _causes(expected)]
    with contextlib.suppress(Exception):  # on timeout, report what was found instead
        page.wait_for_function(OWNER_FIRST, arg=arg, timeout=15_000)
    link = page.query_selector(FIRST_RESULT)
    first = link.evaluate("link => link.href") if link else "(no results)"
    return bool(page.evaluate(OWNER_FIRST, arg)), first


@pytest.mark.parametrize(
    ("url", "label", "query"), TYPED_CASES, ids=[case[1] for case in TYPED_CASES]
)
def test_typed_error_finds_its_entry_first(search_page, url: str, label: str, query: str) -> None:
    search_page.keyboard.type(query)
    found, first = _owner_first(search_page, url)
    assert found, f"{query!r}: first result {first}"


@pytest.mark.parametrize(("url", "label", "query"), CASES, ids=[case[1] for case in CASES])
def test_pasted_error_finds_its_entry_first(search_page, url: str, label: str, query: str) -> None:
    # insert_text delivers text the way a mouse paste does: an input event and no key events.
    search_page.keyboard.insert_text(query)
    found, first = _owner_first(search_page, url)
    assert found, f"{query!r}: first result {first}"


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
