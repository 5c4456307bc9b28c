"""The log page, driven in headless Chromium: the wiring (a log pasted, chosen or dropped,
plain or gzip, reaches the worker and its findings are shown), nothing sent, nothing
interpreted as HTML, the page responsive on huge logs, the browser's own regular
expressions. That the worker finds what ``failpedia diagnose`` finds, in the same order,
in every log we hold, and takes every rule from ``signatures.json``, is proved in Node
(``tests/signatures/test_worker_diagnoses_alike.py``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from diagnose_helpers import (
    MATMUL_LINE,
    corpus_logs,
    diagnose_json,
    essence,
)
from failpedia.signatures.dialect import compile_pattern
from longtask import LONGEST_TASK_BOUND_MS, RECORD_LONGEST_TASK, longest_task_ms

DONE = "#failpedia-diagnose[data-fp-state=done]"


@pytest.fixture
def log_page(browser, site_url):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(site_url + "diagnose/")
    page.wait_for_selector("#failpedia-diagnose[data-fp-ready]")
    yield page
    page.close()
    assert errors == []


def _drop(page, *paths: Path) -> dict:
    page.set_input_files("#failpedia-diagnose input[type=file]", [str(path) for path in paths])
    page.wait_for_selector(DONE, timeout=120_000)
    return page.evaluate("window.failpediaDiagnosis")


def _paste(page, text: str) -> dict:
    if page.is_visible("[data-fp-unfold]"):  # a run before folded the box away
        page.click("[data-fp-unfold]")
    page.fill("#failpedia-diagnose textarea", text)
    page.click("[data-fp-run]")
    page.wait_for_selector(DONE, timeout=120_000)
    return page.evaluate("window.failpediaDiagnosis")


def test_a_dropped_log_and_its_gzip_show_the_findings_the_cli_finds(
    log_page,
    tmp_path: Path,
) -> None:
    """The wiring: a file chosen on the page, plain and gzip (the browser's own streams and
    decompression), reaches the worker, and the cards show its findings in the CLI's order.
    That the worker finds what the CLI finds in every log is proved in Node
    (tests/signatures/test_worker_diagnoses_alike.py)."""
    log = next(path for path in corpus_logs() if path.name == "gloo-crash-cascade.log")
    cli = diagnose_json(str(log))
    assert len(cli["findings"]) > 1
    dropped = _drop(log_page, log)
    assert essence(dropped) == essence(cli)
    cards = log_page.locator(".fp-finding")
    assert [cards.nth(n).get_attribute("data-entry") for n in range(cards.count())] == [
        item["id"] for item in cli["findings"]
    ]
    packed = tmp_path / (log.name + ".gz")
    packed.write_bytes(gzip.compress(log.read_bytes()))
    log_page.evaluate(
        "document.getElementById('failpedia-diagnose').removeAttribute('data-fp-state')"
    )
    assert essence(_drop(log_page, packed)) == essence(cli)


def test_an_unmatched_log_lists_its_error_like_lines(log_page) -> None:
    """No finding: the most error-like lines, as the CLI picks them, each shown."""
    log = next(path for path in corpus_logs() if path.name == "no-known-failure.log")
    cli = diagnose_json(str(log))
    assert cli["findings"] == [] and cli["unmatched"]
    shown = _drop(log_page, log)
    assert [item["text"] for item in shown["unmatched"]] == [
        item["text"] for item in cli["unmatched"]
    ]
    listed = log_page.locator("pre.fp-unmatched").inner_text()
    assert all(f"{log.name}:{item['line']}: {item['text']}" in listed for item in cli["unmatched"])


def test_findings_link_to_entries_and_highlight_the_match(log_page) -> None:
    log = next(path for path in corpus_logs() if path.name == "ddp-dataloader-oom.log")
    _paste(log_page, log.read_text())
    first = log_page.locator(".fp-finding").first
    assert first.get_attribute("data-entry") == "dataloader-worker-killed-by-signal"
    href = first.locator("a.fp-finding__title").get_attribute("href")
    assert href.endswith("/data/dataloader-worker-killed-by-signal/")
    assert "is killed by signal" in first.locator("mark").inner_text()
    assert "ranks 2-3" in first.inner_text()


def test_log_text_is_never_interpreted_as_html(log_page) -> None:
    """Each payload sets ``window.__pwned`` when it runs, as it would were the page to put
    log text in as HTML: a matched line, its context, and the error-like lines listed when
    nothing matched."""
    dialogs: list[str] = []
    log_page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    hostile = (
        "<script>window.__pwned = 'script'</script>\n"
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 16x2) "
        "<img src=x onerror=\"window.__pwned = 'matched'\">\n"
        "<b>bold</b> ValueError: <img src=y onerror=\"window.__pwned = 'unmatched'\">\n"
    )
    result = _paste(log_page, hostile)
    assert result["findings"][0]["id"] == "matmul-shapes-cannot-be-multiplied"
    # An image's error handler runs once its request fails: give it the time to.
    log_page.wait_for_timeout(500)
    assert log_page.evaluate("window.__pwned") is None
    results = log_page.locator("[data-fp-results]")
    assert "<img src=x onerror=" in results.inner_text()
    assert results.locator("img, script, b").count() == 0

    log_page.evaluate(
        "document.getElementById('failpedia-diagnose').removeAttribute('data-fp-state')"
    )
    unknown = "RuntimeError: widget <img src=z onerror=\"window.__pwned = 'listed'\"> broke\n"
    assert _paste(log_page, unknown)["findings"] == []
    log_page.wait_for_timeout(500)
    assert log_page.evaluate("window.__pwned") is None
    assert "<img src=z onerror=" in results.inner_text()
    assert results.locator("img").count() == 0
    assert dialogs == []


def test_the_log_never_leaves_the_browser(browser, site_url) -> None:
    page = browser.new_page()
    sent: list[str] = []
    page.on(
        "request",
        lambda request: sent.append(f"{request.url}\n{request.post_data or ''}\n{request.headers}"),
    )
    page.goto(site_url + "diagnose/")
    page.wait_for_selector("#failpedia-diagnose[data-fp-ready]")
    marker = "zq-private-token-7731"
    _paste(
        page,
        f"secret path /home/alice/{marker}\nRuntimeError: mat1 and mat2 shapes cannot be "
        f"multiplied (4x8 and 16x2) {marker}\n",
    )
    page.close()
    assert sent, "the page made no request at all: the test did not observe anything"
    assert not [request for request in sent if marker in request]
    assert all(request.startswith(site_url) for request in sent)


def test_a_200_mb_file_is_matched_off_the_main_thread(log_page, tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    bar = "[default1]: 12%|#2        | 120/1000 [00:12<01:28,  9.95it/s]\r" * 20 + "\n"
    chunk = (
        bar
        + "[default1]:[2024-06-11 03:00:00,000] INFO step 1200 loss 2.113\n"
        + "node1:12:12 [1] NCCL INFO Channel 00/02 :    0   1   2   3\n" * 5
    ) * 2000
    with log.open("w") as handle:
        for _ in range(200_000_000 // len(chunk) + 1):
            handle.write(chunk)
        handle.write(
            "[default1]:RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 16x2)\n"
        )
    log_page.set_input_files("#failpedia-diagnose input[type=file]", str(log))
    # The page still answers while the worker reads the file.
    states = {
        log_page.evaluate(
            "document.getElementById('failpedia-diagnose').getAttribute('data-fp-state')"
        )
    }
    log_page.wait_for_selector(DONE, timeout=300_000)
    assert "running" in states
    result = log_page.evaluate("window.failpediaDiagnosis")
    assert essence(result) == essence(diagnose_json(str(log)))


def _indexed_entry(entry_id: str, canonical: str, literal: str) -> dict:
    return {
        "id": entry_id,
        "title": entry_id,
        "category": "test",
        "kind": "crash",
        "role": "initiating",
        "url": f"test/{entry_id}/",
        "causes": [],
        "caused_by": [],
        "patterns": [{"source": canonical, "literals": [literal]}],
    }


def test_non_bmp_patterns_match_as_in_python_and_a_broken_one_skips_alone(
    log_page,
    built_site: Path,
    tmp_path: Path,
) -> None:
    """An index with a pattern of characters outside the BMP (a range of emoji, and '.'
    taking one of them) and a pattern this browser cannot compile: the page finds what
    the CLI finds with the same index, says which pattern it skipped, and keeps working."""
    data = json.loads((built_site / "signatures.json").read_text(encoding="utf-8"))
    emoji = compile_pattern("FooError: [\U0001f600-\U0001f64f]+ at .x\\b").canonical
    data["entries"].append(_indexed_entry("emoji-range", emoji, "FooError: "))
    compiled = tmp_path / "compiled.json"  # what the CLI reads: the page skips the broken one
    compiled.write_text(json.dumps(data), encoding="utf-8")
    data["entries"].append(_indexed_entry("broken-pattern", "BarError: (?<", "BarError: "))
    index = tmp_path / "signatures.json"
    index.write_text(json.dumps(data), encoding="utf-8")
    log_page.route("**/signatures.json", lambda route: route.fulfill(path=str(index)))
    log = tmp_path / "unicode.log"
    log.write_text(
        "[rank1]: BarError: never compiled\n"
        "[rank1]: FooError: \U0001f600\U0001f603 at \U0001d518x\n"
        "[rank0]: RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 16x2)\n",
        encoding="utf-8",
    )
    page = _paste(log_page, log.read_text(encoding="utf-8"))
    cli = diagnose_json("--index", str(compiled), str(log))
    assert essence(page) == essence(cli)
    assert {item["id"] for item in page["findings"]} >= {
        "emoji-range",
        "matmul-shapes-cannot-be-multiplied",
    }
    emoji_first = next(item for item in page["findings"] if item["id"] == "emoji-range")["first"]
    cli_first = next(item for item in cli["findings"] if item["id"] == "emoji-range")["first"]
    assert emoji_first["match"] == cli_first["match"]
    assert any("broken-pattern" in warning for warning in page["warnings"])
    assert "broken-pattern" in log_page.locator("[data-fp-results]").inner_text()
    mark = log_page.locator('[data-entry="emoji-range"] mark').inner_text()
    assert mark == "FooError: \U0001f600\U0001f603 at \U0001d518x"


@pytest.fixture
def watched_page(browser, site_url):
    """The log page, with the clipboard allowed and its longest main-thread task recorded."""
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site_url.rstrip("/"))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.add_init_script(RECORD_LONGEST_TASK)
    page.goto(site_url + "diagnose/")
    page.wait_for_selector("#failpedia-diagnose[data-fp-ready]")
    yield page
    context.close()
    assert errors == []


def test_a_huge_paste_goes_to_the_file_picker_and_the_page_stays_responsive(
    watched_page,
    tmp_path: Path,
) -> None:
    """A 32 MB log pasted from the clipboard is not laid out in the box (that froze the page
    for a minute): the page says to choose it as a file, and that finds its failure."""
    log = tmp_path / "huge.log"
    filler = "[default1]:[2024-06-11 03:00:00,000] INFO step 1200 loss 2.113\n" * 500_000
    log.write_text(filler + "[rank3]: " + MATMUL_LINE.format(8) + "\n")
    watched_page.evaluate("text => navigator.clipboard.writeText(text)", log.read_text())
    watched_page.focus("#failpedia-diagnose textarea")
    watched_page.keyboard.press("Control+V")
    watched_page.wait_for_selector("#failpedia-diagnose[data-fp-state=too-big]")
    status = watched_page.locator("[data-fp-status]").inner_text()
    assert "too big to paste" in status and "file picker" in status
    assert watched_page.input_value("#failpedia-diagnose textarea") == ""
    assert longest_task_ms(watched_page) < LONGEST_TASK_BOUND_MS
    assert essence(_drop(watched_page, log)) == essence(diagnose_json(str(log)))


def test_a_gigabyte_line_in_a_gzip_file_is_read_in_pieces(
    watched_page,
    tmp_path: Path,
) -> None:
    """A gzip log whose second line is 1 GiB long (a progress bar redrawn with carriage
    returns, never a newline), with failures before, inside, at the end of and after it:
    the worker carries at most the published limit of the line (it carried it all, and
    never finished), finds what the CLI finds, with the same lines, counts and context,
    and the page stays responsive meanwhile."""
    bar = b"train:  5%|#         | 50/1000 [00:05<01:35, 9.95it/s]\r"
    piece = bar * ((8 << 20) // len(bar))
    packed = tmp_path / "one-line.log.gz"
    with gzip.open(packed, "wb", compresslevel=6) as handle:
        handle.write(b"[rank1]: IndexError: Target 7 is out of bounds.\n")
        for number in range((1 << 30) // len(piece)):
            handle.write(piece)
            if number == 50:
                handle.write(MATMUL_LINE.format(50).encode() + b"\r")
        handle.write(("[rank3]: " + MATMUL_LINE.format(8) + "\n").encode())
        handle.write(b"[rank2]: IndexError: Target 9 is out of bounds.\n")
    found = _drop(watched_page, packed)
    assert longest_task_ms(watched_page) < LONGEST_TASK_BOUND_MS
    cli = diagnose_json(str(packed))
    assert essence(found) == essence(cli)
    for mine, theirs in zip(found["findings"], cli["findings"], strict=True):
        for key in ("count", "ranks"):
            assert mine[key] == theirs[key]
        for key in ("line", "text", "before", "after", "match"):
            assert mine["first"][key] == theirs["first"][key]
        assert [item["line"] for item in mine["locations"]] == [
            item["line"] for item in theirs["locations"]
        ]
    [matmul] = [item for item in cli["findings"] if item["id"].startswith("matmul")]
    assert matmul["count"] == 2 and matmul["first"]["line"] == 2
