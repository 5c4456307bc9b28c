"""The drafts that ``mkdocs serve`` previews are written by strangers too: a draft's title
and its folder's name reach the page as text, and a folder whose name is not an id is
refused before it can name a page, a path or a URL.

Every payload sets ``window.__xss`` when it runs; each page the preview built is loaded
in headless Chromium, which must see none of them set, nor a dialog.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import FIXTURE, JAM, entry_file, run_cli, validate
from sitebuild import REPO, mkdocs_serve, wait_for


def _payload(number: int) -> str:
    return f"<img src=x onerror=window.__xss={number}>"


# A draft that converts and fails a later check is previewed with its own page: its title
# passes the Markdown checks (the markup is in a code span) and must stay text in the
# page's head and header, which the theme prints as HTML.
JAM_TITLE = f"Widget **jam** [x](https://example.org/) `{_payload(1)}`"
# A scaffolded draft whose title holds what the checks refuse: its problems quote it.
DRAFT = "widgets/widget-draft"
DRAFT_TITLE = f"{_payload(2)} [x](javascript:alert(1)) **bold**"
# Folders whose names are not ids: never a page of their own.
MISNAMED = [_payload(3), 'Widget "jam" `x`', "widget_jam"]


def _refused(name: str) -> str:
    return (
        f"entries/widgets/{name}/entry.yaml: the entry folder name {name!r} is not an id "
        "(lowercase letters and digits, in words joined by single hyphens): the entry is "
        "left out until its folder is renamed"
    )


def _project(tmp_path: Path) -> Path:
    """The mini catalog in the repository's site set-up, with the drafts above."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "mkdocs.yml", project / "mkdocs.yml")
    for name in ("docs", "templates"):
        shutil.copytree(REPO / name, project / name)
    shutil.copytree(FIXTURE / "entries", project / "entries")
    jam = entry_file(project, JAM)
    text = jam.read_text(encoding="utf-8")
    text = text.replace("title: Widget jammed in a slot", f"title: '{JAM_TITLE}'")
    jam.write_text(text.replace("jammed in slot \\d+'", "jammed in a slot'"), encoding="utf-8")
    assert run_cli(project, "new", DRAFT).returncode == 0
    draft = entry_file(project, DRAFT)
    text = draft.read_text(encoding="utf-8").replace("title: TODO", f"title: '{DRAFT_TITLE}'")
    draft.write_text(text, encoding="utf-8")
    for name in MISNAMED:
        shutil.copytree(jam.parent, jam.parent.parent / name)
    return project


def test_a_folder_whose_name_is_not_an_id_is_refused(tmp_path: Path) -> None:
    project = _project(tmp_path)
    _, lines = validate(project)
    for name in MISNAMED:
        assert _refused(name) in lines
        # Nothing else is read from it: its problems would be the copied entry's.
        assert [line for line in lines if line.startswith(f"entries/widgets/{name}/")] == [
            _refused(name)
        ]


def test_the_preview_shows_drafts_titles_and_folder_names_as_text(
    browser,
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    terminal = tmp_path / "serve.log"
    with mkdocs_serve(project, terminal) as site:
        assert wait_for(f"{site}{JAM}/", "does not match any line", 90), "no preview of the jam"
        [built] = (tmp_path / "tmp").glob("mkdocs_*")  # where serve builds the site
        pages = sorted(
            path.parent.relative_to(built).as_posix() for path in built.rglob("index.html")
        )
        assert {JAM, DRAFT} <= set(pages)
        context = browser.new_context()
        page = context.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        ran: dict[str, object] = {}  # page: the payload that ran there
        for path in pages:
            page.goto(f"{site}{'' if path == '.' else path + '/'}", wait_until="load")
            page.wait_for_timeout(100)
            if page.evaluate("window.__xss") is not None:
                ran[path] = page.evaluate("window.__xss")
            if path == JAM:
                jam_title = page.title()
                jam_topic = page.locator('[data-md-component="header-topic"]').first.inner_text()
            if path == DRAFT:
                draft_text = page.locator("article").first.inner_text()
        context.close()
        output = terminal.read_text(encoding="utf-8")
    assert ran == {}
    assert dialogs == []
    assert jam_title.startswith(JAM_TITLE)
    assert jam_topic.strip() == JAM_TITLE
    # A folder whose name is not an id gets no page, only its problem in the terminal.
    assert not [path for path in pages if path.startswith("widgets/") and "_" in path]
    assert not [path for path in pages if any(char in path for char in '<>"` ')]
    for name in MISNAMED:
        assert _refused(name) in output
    assert f"title: raw HTML is not allowed ('{_payload(2)[:20]}')" in draft_text
