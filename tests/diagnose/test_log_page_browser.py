"""The log page as a tool, in headless Chromium at a laptop's and a phone's size: an
editor-like box that takes dropped files, findings as cards with their entry's quick
answer and fix, nothing wider than the screen, times as the log wrote them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import pytest
from diagnose_helpers import (
    MATMUL_LINE,
    diagnose_json,
    downstream_only_log,
    essence,
    run_diagnose,
    traceback_first_log,
)

ROOT = "#failpedia-diagnose"
DONE = ROOT + "[data-fp-state=done]"
SIZES = [(1280, 800), (390, 844)]
ELSEWHERE = "The initiating failure is not in {}; look at the other ranks' logs."


@pytest.fixture
def open_page(browser, site_url: str) -> Iterator[Callable[..., Any]]:
    """Opens the log page at a given viewport; no page may raise an error."""
    pages: list[Any] = []
    errors: list[str] = []

    def open_at(width: int = 1280, height: int = 800) -> Any:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(site_url + "diagnose/")
        page.wait_for_selector(ROOT + "[data-fp-ready]")
        pages.append(page)
        return page

    yield open_at
    for page in pages:
        page.close()
    assert errors == []


def _paste(page: Any, text: str) -> dict[str, Any]:
    if page.is_visible("[data-fp-unfold]"):  # a run before folded the box away
        page.click("[data-fp-unfold]")
    page.fill(ROOT + " textarea", text)
    page.click("[data-fp-run]")
    page.wait_for_selector(DONE, timeout=120_000)
    return dict(page.evaluate("window.failpediaDiagnosis"))


def _drop_on_the_box(page: Any, files: dict[str, str]) -> dict[str, Any]:
    """Drop files on the text box, as a file manager would."""
    page.evaluate(
        """files => {
          const data = new DataTransfer();
          for (const [name, text] of files) data.items.add(new File([text], name));
          const box = document.querySelector("#failpedia-diagnose textarea");
          for (const type of ["dragenter", "dragover", "drop"]) {
            box.dispatchEvent(new DragEvent(type, {dataTransfer: data, bubbles: true,
                                                   cancelable: true}));
          }
        }""",
        list(files.items()),
    )
    page.wait_for_selector(DONE, timeout=120_000)
    return dict(page.evaluate("window.failpediaDiagnosis"))


def _entry(built_site: Path, entry_id: str) -> dict[str, Any]:
    index = json.loads((built_site / "signatures.json").read_text(encoding="utf-8"))
    return next(item for item in index["entries"] if item["id"] == entry_id)


def _as_text(markdown: str) -> str:
    """A quick answer as read on the page: links as their text, no code or emphasis marks."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown).replace("**", "").replace("`", "")
    return " ".join(text.split())


@pytest.mark.parametrize(("width", "height"), SIZES, ids=["laptop", "phone"])
def test_nothing_is_wider_than_the_screen(open_page, width: int, height: int) -> None:
    """A log with a 2,000-character line: the box and the excerpt scroll sideways in
    themselves, the page never does; the box is an editor's, as wide as the text."""
    page = open_page(width, height)
    box = page.locator(ROOT + " textarea")
    shape = box.evaluate(
        """box => {
          const style = getComputedStyle(box);
          const column = box.closest(".md-content__inner").getBoundingClientRect().width;
          return {wrap: box.getAttribute("wrap"), space: style.whiteSpace,
                  font: style.fontFamily, width: box.getBoundingClientRect().width,
                  height: box.getBoundingClientRect().height, column: column};
        }"""
    )
    assert shape["wrap"] == "off" and shape["space"] == "pre"
    assert shape["font"].rstrip().endswith("monospace")
    assert shape["width"] >= 0.95 * shape["column"] and shape["height"] >= 300
    result = _paste(page, traceback_first_log(2000))
    assert [item["id"] for item in result["findings"]] == ["matmul-shapes-cannot-be-multiplied"]
    page.click("[data-fp-unfold]")  # the box and the results, both on the page
    widths = page.evaluate(
        """() => {
          const pre = document.querySelector(".fp-finding__log");
          const box = document.querySelector("#failpedia-diagnose textarea");
          const parts = [...document.querySelectorAll(
            ".md-main, .md-content, #failpedia-diagnose, #failpedia-diagnose *")]
            .filter(node => !node.closest(".fp-finding__log > span"));
          pre.scrollLeft = 400;
          return {page: document.documentElement.scrollWidth, view: window.innerWidth,
                  right: Math.max(...parts.map(node => node.getBoundingClientRect().right)),
                  pre: [pre.scrollWidth, pre.clientWidth, pre.scrollLeft],
                  box: [box.scrollWidth, box.clientWidth]};
        }"""
    )
    assert widths["page"] <= widths["view"], widths
    assert widths["right"] <= widths["view"], widths
    scroll_width, client_width, scrolled = widths["pre"]
    assert scroll_width > 2 * client_width and scrolled == 400
    assert widths["box"][0] > 2 * widths["box"][1]  # the box's lines are not wrapped


def test_findings_are_cards_with_the_quick_answer_and_a_link_to_the_fix(
    open_page,
    built_site: Path,
    site_url: str,
) -> None:
    page = open_page()
    _paste(page, traceback_first_log(10))
    card = page.locator(".fp-finding").first
    entry = _entry(built_site, "matmul-shapes-cannot-be-multiplied")
    assert card.get_attribute("data-entry") == entry["id"]
    title = card.locator("a.fp-finding__title")
    assert title.inner_text().endswith(entry["title"])
    assert title.get_attribute("href") == site_url + entry["url"]
    assert card.locator(".fp-finding__role").inner_text() == "initiates the failure"
    answer = card.locator(".fp-finding__answer")
    assert " ".join(answer.inner_text().split()) == _as_text(entry["summary"])
    assert answer.locator("code").count() == entry["summary"].count("`") // 2 > 0
    fix = card.locator("a.fp-finding__fix").get_attribute("href")
    assert fix == site_url + entry["url"] + "#fix"
    assert card.locator(".fp-finding__where").inner_text() == "First at pasted log:4"
    assert card.locator(".fp-finding__line mark").inner_text() == MATMUL_LINE.format(8)[14:]
    assert "Seen 3 times" in card.inner_text()
    page.goto(fix)
    assert page.locator("#fix").count() == 1


def test_a_time_without_a_year_is_shown_as_written(open_page, tmp_path: Path) -> None:
    """glog's times carry no year: the page shows them as the log wrote them, never in 1970
    nor in a year taken from another line, as the command line does."""
    page = open_page()
    log = tmp_path / "watchdog.log"
    log.write_text(downstream_only_log())
    result = _paste(page, log.read_text())
    cli = diagnose_json(str(log))
    assert essence(result) == essence(cli)
    first = result["findings"][0]["first"]
    assert (first["time"], first["time_text"]) == (None, "0902 14:10:01.512345")
    assert result["findings"][0]["locations"] == [
        item | {"file": "pasted log"} for item in cli["findings"][0]["locations"]
    ]
    where = page.locator(".fp-finding__where").inner_text()
    assert where == "First at pasted log:3, rank 1, 0902 14:10:01.512345 (no year in the log)"
    assert where.split("First at ")[1] in run_diagnose(str(log)).stdout.decode().replace(
        str(log), "pasted log"
    )
    page.evaluate(f"document.querySelector('{ROOT}').removeAttribute('data-fp-state')")
    log.write_text(
        downstream_only_log() + "[2023-05-01 10:00:00,250] ERROR " + MATMUL_LINE.format(8)
    )
    result = _paste(page, log.read_text())
    assert essence(result) == essence(diagnose_json(str(log)))
    text = page.locator("[data-fp-results]").inner_text()
    assert "2023-05-01T10:00:00.250Z" in text and "0902 14:10:01.512345 (no year" in text
    assert "1970" not in text and "2023-09-02" not in text


def test_first_at_is_the_earliest_match(open_page, tmp_path: Path) -> None:
    """The traceback's line without a time, before the logger's repeats with times; across
    the logs of several ranks, the earliest time: where the command line says."""
    page = open_page()
    log = tmp_path / "train.log"
    log.write_text(traceback_first_log(10))
    result = _paste(page, log.read_text())
    assert essence(result) == essence(diagnose_json(str(log)))
    assert result["findings"][0]["first"]["line"] == 4
    ranks = {}
    for rank, second in ((0, 9), (1, 4), (2, 6)):
        ranks[f"rank{rank}.log"] = (
            f"step 1\n[2024-06-11 03:00:0{second},000] ERROR {MATMUL_LINE.format(rank)}\n"
        )
        (tmp_path / f"rank{rank}.log").write_text(ranks[f"rank{rank}.log"])
    page.evaluate(f"document.querySelector('{ROOT}').removeAttribute('data-fp-state')")
    dropped = _drop_on_the_box(page, ranks)
    assert page.input_value(ROOT + " textarea") == log.read_text()  # read as files
    assert [item["name"] for item in dropped["inputs"]] == list(ranks)
    cli = diagnose_json(*(str(tmp_path / name) for name in ranks))
    assert essence(dropped) == essence(cli)
    assert [item["rank"] for item in dropped["inputs"]] == ["0", "1", "2"]
    first = dropped["findings"][0]["first"]
    assert (first["file"], first["line"], first["time"]) == ("rank1.log", 2, "2024-06-11T03:00:04Z")
    where = page.locator(".fp-finding__where").inner_text()
    assert where == "First at rank1.log:2, rank 1, 2024-06-11T03:00:04Z"


def test_a_log_of_downstream_failures_only_points_to_the_other_ranks(open_page) -> None:
    page = open_page()
    _paste(page, downstream_only_log())
    summary = page.locator(".fp-summary").inner_text()
    assert summary.endswith(ELSEWHERE.format("this log"))
    assert "initiates the failure" not in page.locator("[data-fp-results]").inner_text()
    assert page.locator(".fp-finding__role").inner_text() == "follows from another failure"
    page.evaluate(f"document.querySelector('{ROOT}').removeAttribute('data-fp-state')")
    _drop_on_the_box(page, {"rank2.log": downstream_only_log(), "rank3.log": "step 9\n"})
    assert page.locator(".fp-summary").inner_text().endswith(ELSEWHERE.format("these logs"))
    page.evaluate(f"document.querySelector('{ROOT}').removeAttribute('data-fp-state')")
    _paste(page, downstream_only_log() + MATMUL_LINE.format(8) + "\n")
    assert page.locator(".fp-summary").inner_text().endswith("; the one that started it first.")
    roles = page.locator(".fp-finding__role").all_inner_texts()
    assert roles == ["initiates the failure", "follows from another failure"]


def test_an_unmatched_log_shows_the_nearest_entries_as_not_matches(
    open_page,
    site_url: str,
    tmp_path: Path,
) -> None:
    log = tmp_path / "train.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        "RuntimeError: CUDA error: the launch timed out and was terminated\n",
        encoding="utf-8",
    )
    cli = diagnose_json(str(log))
    page = open_page(390, 844)
    result = _paste(page, log.read_text(encoding="utf-8"))
    assert result["findings"] == [] and page.locator(".fp-finding").count() == 0
    assert [item["id"] for item in result["nearest"]] == [item["id"] for item in cli["nearest"]]
    heading = page.locator(".fp-nearest-heading").inner_text()
    assert heading == "Not matches, only the entries nearest in wording to these lines:"
    links = page.locator("ul.fp-nearest a")
    assert links.count() == len(cli["nearest"]) > 0
    first = cli["nearest"][0]
    assert links.first.inner_text() == first["title"]
    assert first["id"] == "nccl-taking-process-down"
    assert links.first.get_attribute("href") == site_url + "distributed/" + first["id"] + "/"
    assert page.locator("ul.fp-nearest code").first.inner_text() == first["id"]


def test_the_answer_takes_the_place_of_the_log(open_page, site_url: str, tmp_path: Path) -> None:
    """Ctrl+Enter in the box runs it; the box folds away behind one button and the results
    scroll into view; each unmatched line links to the site search with that line; the
    diagnosis copies as Markdown."""
    page = open_page(390, 844)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    unmatched = "RuntimeError: CUDA error: the launch timed out and was terminated"
    log = "step 1\n" * 80 + "Traceback (most recent call last):\n" + unmatched
    page.fill(ROOT + " textarea", log)
    page.press(ROOT + " textarea", "Control+Enter")
    page.wait_for_selector(DONE, timeout=120_000)
    assert not page.is_visible(ROOT + " textarea")
    assert page.is_visible("[data-fp-unfold]")
    summary = page.locator(".fp-summary").evaluate("node => node.getBoundingClientRect().top")
    header = page.locator(".md-header").evaluate("node => node.getBoundingClientRect().bottom")
    assert header <= summary < 844  # in view, not under the sticky header
    search = page.locator("pre.fp-unmatched a.fp-search-line")
    assert search.count() >= 1
    assert search.last.get_attribute("href") == site_url + "?q=" + quote_plus(unmatched)
    page.click("[data-fp-copy]")
    page.wait_for_function("document.querySelector('.fp-copy__status').textContent !== ''")
    markdown = page.evaluate("navigator.clipboard.readText()")
    nearest = page.evaluate("window.failpediaDiagnosis.nearest")
    assert markdown.startswith("**No known failure found in this log.**\n")
    assert "Not matches, only the entries nearest in wording to these lines:" in markdown
    assert f"(`{nearest[0]['id']}`)" in markdown and unmatched in markdown
    page.click("[data-fp-unfold]")
    assert page.is_visible(ROOT + " textarea")
    page.fill(ROOT + " textarea", MATMUL_LINE.format(0))
    page.press(ROOT + " textarea", "Meta+Enter")
    page.wait_for_selector(ROOT + "[data-fp-folded]", timeout=120_000)
    page.wait_for_selector(DONE, timeout=120_000)
    page.click("[data-fp-copy]")
    page.wait_for_function("document.querySelector('.fp-copy__status').textContent !== ''")
    markdown = page.evaluate("navigator.clipboard.readText()")
    assert "1. [mat1 and mat2 shapes cannot be multiplied" in markdown
    assert "/shapes/matmul-shapes-cannot-be-multiplied/) (`matmul-shapes-cannot-be-multiplied`" in (
        markdown
    )
