"""Site search finds an entry from its pasted or typed error text: every signature line
and alias of the catalog, each searched by the site's own search code (search-paste.js,
search-owner.js, the log page's worker and the theme's full-text worker) run in Node on the
built site, all in one process (``tests/site/search_page.js``). Chromium keeps the tests of
the wiring and of what a reader sees (``test_search_browser.py``,
``test_search_owner_browser.py``).

Every line and alias is also searched as it comes out of other runs: behind a log prefix
(``[rank3]: ``, a timestamp and level), with other numbers, other paths and other tensor
shapes. The owning entry must be the first result for at least 95% of them. The lines of
``benchmarks/realworld/`` that name their entry, as pasted, are searched too, and the share
first is printed per batch (``benchmarks/search_owner_first.py`` records it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from search_cases import (
    CATALOG,
    all_variant_cases,
    causes,
    other_values,
    realworld_cases,
    search_in_node,
    signature_cases,
    variants,
)

CASES = signature_cases()
OWNER_FIRST_GOAL = 0.95
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


def test_variants_change_what_runs_change() -> None:
    """The variants differ from the line where another run would print it differently."""
    line = (
        "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] "
        "Connection closed by peer [127.0.0.1]:41700; element 0 of tensors; "
        "torch.Size([2, 4]) in ReluBackward0 on sm_80 with torch 2.1.0 (i.e. 1-element tensor)"
    )
    changed = other_values(line)
    assert "[/home/alice/work/transport/tcp/pair.cc:" in changed
    assert ":553]" not in changed and ":41700;" not in changed and "element 0 " not in changed
    assert re.search(r"torch\.Size\(\[\d+, \d+, \d+\]\)", changed)
    for kept in ("[127.0.0.1]", "ReluBackward0", "sm_80", "torch 2.1.0", "(i.e. 1-element"):
        assert kept in changed
    assert [label for label, _ in variants(line)] == [
        "as-is",
        "rank-prefix",
        "time-prefix",
        "other-values",
        "rank-time-other-values",
    ]


def test_owner_is_the_first_result_for_real_and_varied_messages(built_site: Path) -> None:
    """At least 95% of the lines and aliases in every variant have their entry first; the
    real-world lines' figure per batch is printed beside them."""
    cases = all_variant_cases()
    realworld = realworld_cases()
    queries = [query for _, _, query in cases] + [line for *_, line in realworld]
    answers = search_in_node(built_site, queries)
    firsts = [answer["first"] or "(no results)" for answer in answers]
    misses = [
        (label, url, first, query)
        for (url, label, query), first in zip(cases, firsts[: len(cases)], strict=True)
        if not first.endswith("/" + url)
    ]
    rate = 1 - len(misses) / len(cases)
    print(f"\nowner first for {len(cases) - len(misses)} of {len(cases)} queries ({rate:.1%})")
    for kind in sorted({label.split("/")[1] for _, label, _ in cases}):
        total = sum(1 for _, label, _ in cases if label.endswith("/" + kind))
        missed = sum(1 for label, *_ in misses if label.endswith("/" + kind))
        print(f"  {kind}: {total - missed}/{total}")
    for label, url, first, query in misses:
        print(f"  MISS {label}: {first} (owner {url}) for {query[:160]!r}")
    real_firsts = firsts[len(cases) :]
    for batch in sorted({batch for _, batch, _, _ in realworld}):
        both = [
            (url, first)
            for (url, case_batch, _, _), first in zip(realworld, real_firsts, strict=True)
            if case_batch == batch
        ]
        first = sum(1 for url, found in both if found.endswith("/" + url))
        print(f"  real-world batch {batch}: owner first for {first}/{len(both)}")
    assert rate >= OWNER_FIRST_GOAL
