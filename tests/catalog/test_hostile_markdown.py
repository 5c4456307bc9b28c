"""Markdown fields from strangers: no raw HTML however it is spelled, links only to http(s)
addresses and pages of the site, images only from the site, reference URLs that are one
well-formed http(s) address. Each attack is refused by ``failpedia validate`` with its
file, line and field; code spans and fences may still show markup as code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    LIMIT,
    copy_fixture,
    display,
    entry_data,
    line_of,
    run_cli,
    validate,
    write_entry_data,
)

LIMIT_FILE = display(LIMIT)
RAW_HTML = "raw HTML is not allowed ({!r}); use Markdown, or put code in backticks"
LINK_RULE = "links go to http or https addresses, or to pages of this site"
IMAGE_RULE = "pages load nothing from other sites: images must be files of this site"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_fixture(tmp_path)


def _line(text: str, value: str) -> int:
    return line_of(text, json.dumps(value, ensure_ascii=False))


def _snippet(value: str) -> str:
    """What the raw HTML message quotes: 20 characters from the tag's ``<``."""
    return value[value.index("<") :][:20].split("\n")[0]


def _with_sections(data: dict[str, Any], text: str) -> dict[str, Any]:
    """The entry with ``text`` in every Markdown field the fixture lacks, too."""
    data = dict(data)
    data["aliases"] = [{"text": "Widget alias", "note": text}]
    data["symptoms"] = [{"observation": text, "meaning": text + " meaning"}]
    data["prevention"] = [text]
    data["faq"] = [{"question": text, "answer": text + " answer"}]
    data["references"] = [{"title": text, "url": "https://example.org/widgets"}]
    data["versions"] = {"affected": text, "fixed_in": text + " fixed", "note": text + " note"}
    return data


# --- 1. raw HTML, however the tag is spelled ---------------------------------------------

TAG_SPELLINGS = [
    "<x:y autofocus tabindex=1 onfocus=alert(1)>",
    "<x_y autofocus tabindex=1 onfocus=alert(1)>",
    "<x.y autofocus tabindex=1 onfocus=alert(1)>",
    "<svg/onload=alert(1)>",
    "</x:y>",
    "<!doctype html>",
    "<?xml version=1?>",
    "<!x>",
]


@pytest.mark.parametrize("markup", TAG_SPELLINGS)
def test_raw_html_in_a_title_is_refused_however_spelled(root: Path, markup: str) -> None:
    data = entry_data(root, LIMIT)
    data["title"] = f"Widget {markup} limit"
    text = write_entry_data(root, LIMIT, data)
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{_line(text, data['title'])}: title: "
        + RAW_HTML.format(_snippet(data["title"]))
    ]


def test_raw_html_is_refused_in_every_markdown_field_and_category(root: Path) -> None:
    markup = "Look <x:y autofocus tabindex=1 onfocus=alert(1)> here"
    data = _with_sections(entry_data(root, LIMIT), markup)
    for name in ("title", "summary", "mechanism"):
        data[name] = f"{name} {markup}"
    data["affects"] = [markup + " affects"]
    data["confirm"] = [markup + " confirm"]
    data["fix"][0]["text"] = markup + " fix"
    data["signatures"][0]["verified_at"] = markup + " at"
    data["signatures"][0]["emitted_by"] = markup + " by"
    text = write_entry_data(root, LIMIT, data)
    categories = root / "entries" / "categories.yaml"
    categories.write_text(
        categories.read_text(encoding="utf-8")
        .replace("title: Widgets", f"title: {json.dumps(markup)}")
        .replace("description: Failures of gadgets", f"description: {markup} gadgets"),
        encoding="utf-8",
    )
    _, lines = validate(root)
    snippet = _snippet(markup)
    fields = {
        "title": data["title"],
        "summary": data["summary"],
        "mechanism": data["mechanism"],
        "affects[0]": data["affects"][0],
        "confirm[0]": data["confirm"][0],
        "fix[0].text": data["fix"][0]["text"],
        "signatures[0].verified_at": data["signatures"][0]["verified_at"],
        "signatures[0].emitted_by": data["signatures"][0]["emitted_by"],
        "aliases[0].note": markup,
        "symptoms[0].observation": markup,
        "symptoms[0].meaning": markup + " meaning",
        "prevention[0]": markup,
        "faq[0].question": markup,
        "faq[0].answer": markup + " answer",
        "references[0].title": markup,
        "versions.affected": markup,
        "versions.fixed_in": markup + " fixed",
        "versions.note": markup + " note",
    }
    expected = [
        "entries/categories.yaml:3: categories[0].title: " + RAW_HTML.format(snippet),
        "entries/categories.yaml:7: categories[1].description: " + RAW_HTML.format(snippet),
    ]
    lines_by_value: dict[str, list[int]] = {}
    for value in fields.values():
        lines_by_value.setdefault(value, [])
    numbered = text.splitlines()
    for value in lines_by_value:
        quoted = json.dumps(value, ensure_ascii=False)
        lines_by_value[value] = [n for n, line in enumerate(numbered, 1) if quoted in line]
    for field, value in fields.items():
        line = lines_by_value[value].pop(0)
        expected.append(f"{LIMIT_FILE}:{line}: {field}: " + RAW_HTML.format(_snippet(value)))
    assert sorted(lines) == sorted(expected)


# Markup that hides in something that looks like code but is not code to the renderer.
NOT_REALLY_CODE = {
    "escaped-backticks": "See \\`<img src=x onerror=alert(1)>\\` here.",
    "span-over-a-tag-line": "a `x\n<div onmouseover=alert(1)>y</div>\n` b",
    "span-over-a-blank-line": "a `x\n\n<img src=x onerror=alert(1)>\n\n` b",
    "list-items-shift-the-pairing": "- a `x\n- y` z ` <img src=x onerror=alert(1)> `",
    "one-line-tilde-fence": "~~~ <img src=x onerror=alert(1)> ~~~",
}


@pytest.mark.parametrize("mechanism", NOT_REALLY_CODE.values(), ids=NOT_REALLY_CODE.keys())
def test_markup_in_what_only_looks_like_code_is_refused(root: Path, mechanism: str) -> None:
    data = entry_data(root, LIMIT)
    data["mechanism"] = mechanism
    text = write_entry_data(root, LIMIT, data)
    _, lines = validate(root)
    where = f"{LIMIT_FILE}:{_line(text, mechanism)}: mechanism: "
    assert where + RAW_HTML.format(_snippet(mechanism)) in lines


FENCE_RULE = (
    "a code fence opens with ``` or ~~~ (and a language) on a line of its own, not the "
    "field's first, and closes with the same fence at the same indentation"
)
BROKEN_FENCES = {
    "unclosed": "Run:\n\n```\n<img src=x onerror=alert(1)>",
    "closed-by-a-longer-fence": "Run:\n\n```\n<img src=x onerror=alert(1)>\n````",
    "on-the-first-line": "```\n<img src=x onerror=alert(1)>\n```",
    "less-indented-content": "Run:\n\n  ```\n<img src=x onerror=alert(1)>\n  ```",
}


@pytest.mark.parametrize("mechanism", BROKEN_FENCES.values(), ids=BROKEN_FENCES.keys())
def test_a_fence_the_renderer_would_not_close_is_refused(root: Path, mechanism: str) -> None:
    data = entry_data(root, LIMIT)
    data["mechanism"] = mechanism
    text = write_entry_data(root, LIMIT, data)
    _, lines = validate(root)
    where = f"{LIMIT_FILE}:{_line(text, mechanism)}: mechanism: "
    assert sorted(lines) == sorted(
        [where + FENCE_RULE, where + RAW_HTML.format(_snippet(mechanism))]
    )


def test_an_unclosed_fence_cannot_swallow_the_next_field(root: Path) -> None:
    """A fence left open in one field would close on the next field's fence on the page,
    turning that field's code into markup."""
    data = _with_sections(entry_data(root, LIMIT), "Plain text.")
    data["mechanism"] = "Run:\n\n```"
    data["faq"][0]["answer"] = "Then:\n\n```\n<img src=x onerror=alert(1)>\n```"
    text = write_entry_data(root, LIMIT, data)
    _, lines = validate(root)
    assert lines == [f"{LIMIT_FILE}:{_line(text, data['mechanism'])}: mechanism: {FENCE_RULE}"]


NOT_MARKUP = {
    "less-than": "Fails when x < 3, a <= b, a << 2, <- or <3.",
    "code-spans": "Set `<b>`, ``a <i> b`` and `` `<x:y>` `` then.",
    "fenced": "Run:\n\n```html\n<div onclick=x>limit</div>\n```\n\n~~~~\n<span>\n~~~~\n\nThen.",
    "indented-fence": "Run:\n\n    ```\n    <b>\n    ```",
    "entity": "Shows &lt;img src=x&gt; as text.",
    "http-autolink": "See <https://example.org/widgets>.",
}


@pytest.mark.parametrize("mechanism", NOT_MARKUP.values(), ids=NOT_MARKUP.keys())
def test_text_that_is_not_markup_passes(root: Path, mechanism: str) -> None:
    data = entry_data(root, LIMIT)
    data["mechanism"] = mechanism
    data["title"] = "Cannot get `<module '__main__'>` for `<lambda>`"
    data["signatures"][0]["text"] += "\n<class 'int'> <img src=x onerror=alert(1)>"
    data["aliases"] = [{"text": "<lambda>() takes 1 positional argument", "note": "Quoted."}]
    write_entry_data(root, LIMIT, data)
    result = run_cli(root, "validate")
    assert result.returncode == 0, result.stderr


# --- 3. links: http(s) and the site's own pages only ---------------------------------------

BAD_LINKS = [
    "[x](javascript:alert(1))",
    "[x]( JavaScript:alert(1) )",
    "[x](<javascript:alert(1)>)",
    "[x](javascript&#58;alert(1))",
    "[x](java&#9;script:alert(1))",
    "[x](`javascript:alert(1)`)",
    "[x](j` a `vascript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](vbscript:msgbox(1))",
    "[x](file:///etc/passwd)",
    "[x](//evil.example/)",
    "[x](/\\evil.example/)",
    "[x](https://example.org/)[y](javascript:alert(1))",
    "See [x].\n\n[x]: javascript:alert(1)",
    "See [x][y].\n\n  [Y]:\n    vbscript:alert(1)",
    "<javascript:alert(1)>",
    "`x` <data:text/html,hi>",
]


def test_links_to_anything_but_web_pages_are_refused(root: Path) -> None:
    data = entry_data(root, LIMIT)
    data["confirm"] = BAD_LINKS
    text = write_entry_data(root, LIMIT, data)
    _, lines = validate(root)
    assert len(lines) == len(BAD_LINKS), lines
    for index, link in enumerate(BAD_LINKS):
        line = next(problem for problem in lines if f": confirm[{index}]: " in problem)
        assert line.startswith(f"{LIMIT_FILE}:{_line(text, link)}: confirm[{index}]: link to ")
        assert line.endswith(" is not allowed: " + LINK_RULE), line


def test_a_link_in_a_title_or_category_is_refused(root: Path) -> None:
    data = entry_data(root, LIMIT)
    data["title"] = "Widget [limit](javascript:alert(1))"
    text = write_entry_data(root, LIMIT, data)
    categories = root / "entries" / "categories.yaml"
    categories.write_text(
        categories.read_text(encoding="utf-8").replace(
            "description: Failures of the widget factory.",
            "description: '[Widgets](javascript:alert(1)) fail.'",
        ),
        encoding="utf-8",
    )
    _, lines = validate(root)
    assert lines == [
        "entries/categories.yaml:4: categories[0].description: link to 'javascript:alert(1)' "
        "is not allowed: " + LINK_RULE,
        f"{LIMIT_FILE}:{_line(text, data['title'])}: title: link to 'javascript:alert(1)' "
        "is not allowed: " + LINK_RULE,
    ]


GOOD_LINKS = [
    "[x](https://example.org/wiki/Widget_(machine))",
    "[x](http://example.org/a?b=c#d)",
    "[x](../gadget-timeout/)",
    "[x](#fix)",
    '[x](https://example.org/ "A title: with a colon")',
    "<https://example.org/widgets>",
    "See [x].\n\n[x]: https://example.org/",
    "Run `f[0](x:y)` to see it.",
    "![diagram](widget-belt.png)",
]


def test_web_and_site_links_pass(root: Path) -> None:
    data = entry_data(root, LIMIT)
    data["confirm"] = GOOD_LINKS
    write_entry_data(root, LIMIT, data)
    result = run_cli(root, "validate")
    assert result.returncode == 0, result.stderr


BAD_URLS = [
    "https://example.org/)[x](javascript:alert(1))",
    "https://example.org/a)",
    "https://example.org/(a",
    "https://example.org/<b>",
    "https://example.org/`x`",
    "https://example.org/[x]",
    "https://example.org/\\x",
    "https://",
    "https:example.org",
    "https://exa mple.org/",
    "https://example.org/ x",
    "javascript:alert(1)//https://example.org",
]


def test_reference_urls_are_one_well_formed_web_address(root: Path) -> None:
    data = entry_data(root, LIMIT)
    data["references"] = [{"title": f"Page {n}", "url": url} for n, url in enumerate(BAD_URLS)]
    text = write_entry_data(root, LIMIT, data)
    _, lines = validate(root)
    assert len(lines) == len(BAD_URLS), lines
    for index, url in enumerate(BAD_URLS):
        line = next(problem for problem in lines if f": references[{index}].url: " in problem)
        assert line.startswith(
            f"{LIMIT_FILE}:{_line(text, url)}: references[{index}].url: "
            f"{url!r} is not one well-formed http(s) address: "
        ), line


# --- 4. images: only files of the site ---------------------------------------------------

BAD_IMAGES = [
    "![t](https://tracker.example/pixel.png)",
    "![t](//tracker.example/pixel.png)",
    "![t](<http://tracker.example/pixel.png>)",
    "![t](\nhttps://tracker.example/pixel.png)",
    "![t](/pixel.png)",
    "![t][p]\n\n[p]: https://tracker.example/pixel.png",
    "![t]\n\n[t]: http://tracker.example/pixel.png",
    "[a ![x](https://tracker.example/pixel.png) b](https://example.org/)",
]


def test_images_from_other_sites_are_refused(root: Path) -> None:
    data = entry_data(root, LIMIT)
    data["confirm"] = BAD_IMAGES
    text = write_entry_data(root, LIMIT, data)
    _, lines = validate(root)
    assert len(lines) == len(BAD_IMAGES), lines
    for index, image in enumerate(BAD_IMAGES):
        line = next(problem for problem in lines if f": confirm[{index}]: " in problem)
        assert line.startswith(f"{LIMIT_FILE}:{_line(text, image)}: confirm[{index}]: image ")
        assert line.endswith(" is not allowed: " + IMAGE_RULE), line


# --- validation stays fast on hostile text ----------------------------------------------

HOSTILE_TEXT = {
    "brackets": "](" * 200_000,
    "open-brackets": "![" * 200_000,
    "backticks": "`a" * 200_000,
    "tags": "<a" * 200_000,
    "fences": "x\n" + "```\n" * 100_000,
    "references": "[a]:\n" * 100_000,
}


@pytest.mark.parametrize("mechanism", HOSTILE_TEXT.values(), ids=HOSTILE_TEXT.keys())
def test_hostile_markdown_validates_quickly(root: Path, mechanism: str) -> None:
    data = entry_data(root, LIMIT)
    data["mechanism"] = mechanism
    write_entry_data(root, LIMIT, data)
    # Linear work on these 400 KB takes a second; quadratic work would take hours. The
    # limit is far from both, so a busy machine does not fail it and a regression does.
    result = run_cli(root, "validate", timeout=60)
    assert "Traceback" not in result.stderr
