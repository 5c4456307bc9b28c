"""A site built from entries a stranger wrote to attack it: text that passes validation
(markup in code spans, in signatures and aliases, in verification records) is published
as text everywhere, so no page, search or log finding runs a script or loads anything
from elsewhere.

Every payload marks the page (``data-pwned<N>`` on its root element) when it runs; the
pages are loaded in headless Chromium, which must never see a mark, nor a dialog, nor a
request off 127.0.0.1.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers import LIMIT, copy_fixture, entry_data, run_cli, write_entry_data
from sitebuild import REPO, SiteServer, build_site, mkdocs_build


def _payload(number: int) -> str:
    return f'<img src=x onerror="document.documentElement.dataset.pwned{number}=1">'


SIGNATURE = "FooError: widget count 3 exceeds limit 2 " + _payload(1)
ALIAS = f"{_payload(2)} widget alias for <class 'int'>"
TITLE = f"Widget limit `{_payload(3)}` in `<lambda>`"
CATEGORY_TITLE = f"Widgets `{_payload(4)}`"
GPU = _payload(5)
VERDICT = _payload(6)


def _record() -> dict:
    def result(verdict: str, key: str, gpu: str | None) -> dict:
        return {
            "entry": "widget-limit",
            "verdict": verdict,
            "reason": "",
            "device": "cpu",
            "started_at": "2025-01-02T03:04:05Z",
            "broken": {"seconds": 1.0},
            "fixed": {"seconds": 0.5},
            "output_excerpt": SIGNATURE,
            "environment": {
                "key": key,
                "python": "3.11.7",
                "os": "Linux-6.1",
                "torch": "2.13.0",
                "gpu_name": gpu,
            },
        }

    return {
        "entry": "widget-limit",
        "results": [result("proved", "gpu", GPU), result(VERDICT, "cpu", None)],
    }


def _write_hostile_project(destination: Path) -> Path:
    root = copy_fixture(destination)
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    for name in ("docs", "templates"):
        shutil.copytree(REPO / name, root / name)
    data = entry_data(root, LIMIT)
    data["title"] = TITLE
    # The description is the summary's first sentence: quotes must not end its attribute,
    # and the cut must not split a code span and free its markup.
    data["summary"] = f'Use `"><b id=pwn>{_payload(7)}. later` first. Then `{_payload(8)}`.'
    data["signatures"][0]["text"] = SIGNATURE
    data["signatures"][0]["pattern"] = (
        r"FooError: widget count \d+ exceeds limit \d+ <img src=x "
        r'onerror="document\.documentElement\.dataset\.pwned1=1">'
    )
    data["aliases"] = [{"text": ALIAS, "note": "Quoted on forums."}]
    data["symptoms"] = [
        {
            "observation": f"Look:\n\n~~~\n{_payload(9)}\n~~~",
            "meaning": f"Escaped `{_payload(10)}` and {html.escape(_payload(11))}",
        }
    ]
    data["faq"] = [{"question": f"Why `{_payload(12)}`?", "answer": "Because."}]
    write_entry_data(root, LIMIT, data)
    categories = root / "entries" / "categories.yaml"
    categories.write_text(
        categories.read_text(encoding="utf-8").replace(
            "title: Widgets", f"title: {json.dumps(CATEGORY_TITLE)}"
        ),
        encoding="utf-8",
    )
    records = root / "verification"
    records.mkdir()
    (records / "widget-limit.json").write_text(json.dumps(_record()), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def hostile_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_hostile_project(tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize("page", ["widgets/widget-limit.md", "widgets/index.md"])
def test_rendered_front_matter_is_html_escaped(tmp_path: Path, page: str) -> None:
    """The theme prints titles and descriptions, and the search index shows search terms,
    as HTML: the pages' front matter holds them escaped."""
    root = _write_hostile_project(tmp_path)
    result = run_cli(root, "render", "--out", str(root / "out"))
    assert result.returncode == 0, result.stderr
    text = (root / "out" / page).read_text(encoding="utf-8")
    front_matter = yaml.safe_load(text.split("---\n")[1])
    assert front_matter["title"] in (html.escape(TITLE), html.escape(CATEGORY_TITLE))
    assert "<" not in json.dumps(front_matter)
    if page.endswith("widget-limit.md"):
        # Plain text: code marks dropped, what they held kept and escaped.
        assert front_matter["description"].startswith(html.escape('Use "><b id=pwn>'))
        assert front_matter["description"].endswith(html.escape(". later first."))
        assert front_matter["head_title"].startswith("Widget limit &lt;img src=x")


@pytest.fixture(scope="module")
def hostile_site(hostile_project: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(hostile_project, tmp_path_factory.mktemp("hostile-site"))


@pytest.fixture(scope="module")
def hostile_url(hostile_site: Path) -> Iterator[str]:
    with SiteServer(hostile_site) as server:
        yield server.url


@pytest.mark.slow
def test_signatures_and_aliases_reach_the_search_index_escaped(hostile_site: Path) -> None:
    index = json.loads((hostile_site / "search" / "search_index.json").read_text("utf-8"))
    tags = {tag for doc in index["docs"] for tag in doc.get("tags", [])}
    assert html.escape(SIGNATURE, quote=False) in tags
    assert html.escape(ALIAS, quote=False) in tags
    assert not [doc for doc in index["docs"] if "<img" in json.dumps(doc)]


@pytest.mark.slow
def test_signatures_json_carries_no_markup(hostile_site: Path) -> None:
    text = (hostile_site / "signatures.json").read_text(encoding="utf-8")
    assert not re.search(r"[<>]", text)
    patterns = [
        pattern["source"] for entry in json.loads(text)["entries"] for pattern in entry["patterns"]
    ]
    assert any('<img src=x onerror="document' in source for source in patterns)


@pytest.mark.slow
def test_page_heads_hold_titles_and_descriptions_as_text(hostile_site: Path) -> None:
    page = (hostile_site / "widgets" / "widget-limit" / "index.html").read_text("utf-8")
    head = page[: page.index("<body")]
    assert "<img" not in head and "<b id" not in head
    # The title, cut for search results, shows the payload as text.
    assert "<title>Widget limit &lt;img src=x" in head
    assert 'property="og:title" content="Widget limit &lt;img src=x' in head
    header = page[page.index('data-md-component="header-topic"') :][:2000]
    assert "<img" not in header


# What ran: the payloads' marks, and the element the description's payload would add.
MARKS = """[
    ...Object.keys(document.documentElement.dataset).filter(key => key.startsWith("pwned")),
    ...Array.from(document.querySelectorAll("#pwn"), () => "b#pwn"),
]"""


def _watch(page, requests: list[str], dialogs: list[str]) -> None:
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))


def test_no_page_runs_a_script_or_reaches_outside(browser, hostile_site, hostile_url) -> None:
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    dialogs: list[str] = []
    _watch(page, requests, dialogs)
    paths = sorted(
        path.relative_to(hostile_site).as_posix() for path in hostile_site.rglob("index.html")
    )
    assert "widgets/widget-limit/index.html" in paths
    pwned = {}
    for path in paths:
        page.goto(hostile_url + path, wait_until="load")
        page.wait_for_timeout(100)
        marks = page.evaluate(MARKS)
        if marks:
            pwned[path] = marks
    context.close()
    assert pwned == {}
    assert dialogs == []
    outside = [url for url in requests if not url.startswith("http://127.0.0.1:")]
    assert outside == []


def test_search_shows_hostile_text_as_text(browser, hostile_url) -> None:
    page = browser.new_page()
    requests: list[str] = []
    dialogs: list[str] = []
    _watch(page, requests, dialogs)
    page.goto(hostile_url, wait_until="load")
    box = "input[data-md-component=search-query]"
    page.click(box)
    page.keyboard.type("widget alias class int")
    tags = page.locator(".md-search-result__list .md-tag")
    tags.first.wait_for(state="attached", timeout=15_000)
    page.wait_for_timeout(300)
    shown = tags.all_text_contents()
    marks = page.evaluate(MARKS)
    page.close()
    assert marks == []
    assert dialogs == []
    assert ALIAS in shown


def test_log_page_shows_hostile_titles_as_text(browser, hostile_url) -> None:
    page = browser.new_page()
    requests: list[str] = []
    dialogs: list[str] = []
    _watch(page, requests, dialogs)
    page.goto(hostile_url + "diagnose/")
    page.wait_for_selector("#failpedia-diagnose[data-fp-ready]")
    page.fill("#failpedia-diagnose textarea", f"step 3\n{SIGNATURE}\n")
    page.click("[data-fp-run]")
    page.wait_for_selector("#failpedia-diagnose[data-fp-state=done]", timeout=60_000)
    finding = page.locator(".fp-finding__title").first
    title = finding.inner_text()
    page.wait_for_timeout(300)
    marks = page.evaluate(MARKS)
    page.close()
    assert marks == []  # first: a payload that ran says more than a title that differs
    assert dialogs == []
    assert title == f"1. {TITLE}"  # numbered in diagnosis order


@pytest.mark.slow
def test_a_page_whose_html_would_carry_markup_is_not_published(
    hostile_project: Path, tmp_path: Path
) -> None:
    """The last line of defence: were a template to print record text unescaped, the build
    refuses the page instead of publishing its script."""
    project = tmp_path / "project"
    shutil.copytree(hostile_project, project)
    template = project / "templates" / "entry.md.j2"
    text = template.read_text(encoding="utf-8")
    proof_sentence = "{{ proof.label | plain }}{% if proof.torch %}"
    assert text.count(proof_sentence) == 1
    template.write_text(
        text.replace(proof_sentence, "{{ proof.label }}{% if proof.torch %}"),
        encoding="utf-8",
    )
    site = tmp_path / "site"
    result = mkdocs_build(project, site, "--strict")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert (
        "entries/widgets/widget-limit/entry.yaml: its page's HTML holds the attribute 'onerror' "
        "on <img>, which entry text must not make; the page was not published" in output
    )
    assert "Traceback" not in output
    assert not (site / "widgets" / "widget-limit" / "index.html").exists()
