"""Site search finds an entry from its pasted or typed error text: every signature line
and alias of the catalog, each searched by the site's own search code (search-paste.js,
search-owner.js, the log page's worker and the theme's full-text worker) run in Node on the
built site, all in one process (``tests/site/search_page.js``). Chromium keeps the tests of
the wiring and of what a reader sees (``test_search_browser.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from search_cases import CATALOG, causes, search_in_node, signature_cases

CASES = signature_cases()
# Every line is pasted. Typing reaches the same search through a keystroke per character,
# so each entry's first signature line and every alias (what a reader types) is typed.
TYPED_CASES = [case for case in CASES if case[1].endswith("-signature0") or "-alias" in case[1]]


@pytest.fixture(scope="module")
def pasted(built_site: Path) -> dict[str, dict[str, Any]]:
    """The page's answer to each line, pasted."""
    queries = [query for _, _, query in CASES]
    return dict(zip(queries, search_in_node(built_site, queries), strict=True))


@pytest.fixture(scope="module")
def typed(built_site: Path) -> dict[str, dict[str, Any]]:
    """The page's answer to each line, typed a character at a time."""
    queries = [query for _, _, query in TYPED_CASES]
    return dict(zip(queries, search_in_node(built_site, queries, typed=True), strict=True))


def owner_first(answer: dict[str, Any], expected: str) -> bool:
    """The expected page is the first result, or the matcher lists it after only entries
    that cause it or that the catalog declares confused with it: a line that holds two
    entries' messages ("watchdog thread terminated with exception: ... Watchdog caught
    collective operation timeout") lists the cause first, as the log page does, and a
    message two failures print alike ("Can't get attribute 'X' on <module '__main__'>":
    torch.load, or a spawned DataLoader worker) lists both."""
    if (answer["first"] or "").endswith("/" + expected):
        return True
    listed: list[str] = answer["owner_urls"]
    at = next((i for i, page in enumerate(listed) if page.endswith("/" + expected)), -1)
    allowed = causes(expected)
    return at > 0 and all(any(page.endswith("/" + c) for c in allowed) for page in listed[:at])


@pytest.mark.parametrize(
    ("url", "label", "query"), TYPED_CASES, ids=[case[1] for case in TYPED_CASES]
)
def test_typed_error_finds_its_entry_first(typed, url: str, label: str, query: str) -> None:
    answer = typed[query]
    assert owner_first(answer, url), f"{query!r}: first result {answer['first']}"


@pytest.mark.parametrize(("url", "label", "query"), CASES, ids=[case[1] for case in CASES])
def test_pasted_error_finds_its_entry_first(pasted, url: str, label: str, query: str) -> None:
    answer = pasted[query]
    assert owner_first(answer, url), f"{query!r}: first result {answer['first']}"
    # A listed entry shows its quick answer and links straight to its fix.
    for page, fix in zip(answer["owner_urls"], answer["fix_links"], strict=True):
        assert fix and fix.endswith(page + "#fix")
    assert all(answer["answers"]), answer


def test_quick_answer_is_the_entry_summary(pasted) -> None:
    """The quick answer under a matched entry is its summary as written (its `code` spans
    shown as code, so without the backticks)."""
    summaries = {
        item.entry.id: item.entry.summary for item in CATALOG.entries if item.entry.summary
    }
    checked = 0
    for answer in pasted.values():
        for entry_id, shown in zip(answer["owners"], answer["answers"], strict=True):
            assert shown == summaries[entry_id].replace("`", ""), entry_id
            checked += 1
    assert checked >= len(summaries) // 2


def test_every_entry_page_has_the_fix_anchor(built_site: Path) -> None:
    """The link under a matched entry leads to its Fix heading on every entry page."""
    for item in CATALOG.entries:
        page = built_site / item.entry.category / item.entry.id / "index.html"
        assert '<h2 id="fix">Fix' in page.read_text(encoding="utf-8"), page
