"""`mkdocs serve`: rebuilds when an entry changes, previews drafts with their problems on
their pages, and re-checks and rebuilds only what an edit changed."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURE, JAM, LIMIT, TIMEOUT, entry_file, fill_scaffold, run_cli
from sitebuild import REPO, fetch, mkdocs_build, mkdocs_serve, wait_for

# Starts mkdocs serve and waits for rebuilds.
pytestmark = pytest.mark.slow

DRAFT = "widgets/widget-draft"
DRAFT_FILE = f"entries/{DRAFT}/entry.yaml"
# A draft's title quoting HTML: its problem quotes the tag back, and the page must show
# it as text.
DRAFT_TITLE = "Widget <b>draft</b>"
TITLE_PROBLEM = f"{DRAFT_FILE}:3: title: raw HTML is not allowed"
# How the plugin reports, at debug level, what one build re-read and re-rendered.
WORK_LINE = re.compile(
    r"failpedia: entry files: (\d+) read and checked, (\d+) unchanged; "
    r"entry pages: (\d+) rendered, (\d+) unchanged"
)


def _site_project(tmp_path: Path, entries: Path) -> Path:
    """The repository's site set-up (mkdocs.yml, docs, templates) around ``entries``."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "mkdocs.yml", project / "mkdocs.yml")
    for name in ("docs", "templates"):
        shutil.copytree(REPO / name, project / name)
    shutil.copytree(entries, project / "entries")
    return project


def _with_draft(tmp_path: Path) -> Path:
    """The mini catalog with a fresh scaffold whose title quotes HTML."""
    project = _site_project(tmp_path, FIXTURE / "entries")
    assert run_cli(project, "new", DRAFT).returncode == 0
    draft = entry_file(project, DRAFT)
    draft.write_text(draft.read_text().replace("title: TODO", f"title: {DRAFT_TITLE}"))
    return project


def _finish_draft(project: Path) -> None:
    """Fill every placeholder of the draft so that it validates."""
    draft = entry_file(project, DRAFT)
    text = draft.read_text(encoding="utf-8").replace(DRAFT_TITLE, "Widget finished at last")
    draft.write_text(text, encoding="utf-8")
    fill_scaffold(project, DRAFT)


def _work_lines(terminal: Path) -> list[tuple[int, int, int, int]]:
    text = terminal.read_text(encoding="utf-8", errors="replace")
    return [tuple(int(number) for number in match) for match in WORK_LINE.findall(text)]


def test_serve_rebuilds_when_an_entry_changes(tmp_path: Path) -> None:
    project = _site_project(tmp_path, REPO / "entries")
    entry = project / "entries/compile/dynamo-recompile-limit/entry.yaml"
    with mkdocs_serve(project, tmp_path / "serve.log") as site:
        url = f"{site}compile/dynamo-recompile-limit/"
        assert wait_for(url, "Quick answer", 90), "serve did not come up"
        text = entry.read_text(encoding="utf-8")
        edited = text.replace("summary: >-\n  ", "summary: >-\n  Zq7 edited. ", 1)
        assert edited != text, "the entry's summary is no longer a folded block"
        entry.write_text(edited, encoding="utf-8")
        assert wait_for(url, "Zq7 edited", 90), "the page was not rebuilt after the edit"


def test_serve_previews_a_draft_with_its_problems_until_it_is_fixed(tmp_path: Path) -> None:
    project = _with_draft(tmp_path)
    # An entry that converts but fails a check: its page shows the problem above the rest.
    jam = entry_file(project, JAM)
    jam.write_text(jam.read_text().replace("jammed in slot \\d+'", "jammed in a slot'"))
    terminal = tmp_path / "serve.log"
    with mkdocs_serve(project, terminal) as site:
        assert wait_for(f"{site}{LIMIT}/", "Quick answer", 90), "the valid pages are not served"
        assert "Quick answer" in fetch(f"{site}{TIMEOUT}/")
        page = fetch(f"{site}{DRAFT}/")
        assert TITLE_PROBLEM in page
        assert "&lt;b&gt;draft&lt;/b&gt;" in page
        assert "<b>draft</b>" not in page
        assert f"{DRAFT_FILE}:5: kind: still the placeholder TODO" in page
        assert "widget-draft" in page
        jam_page = fetch(f"{site}{JAM}/")
        assert "signatures[0].pattern: does not match any line of its own signature text" in (
            jam_page
        )
        assert jam_page.index("does not match any line") < jam_page.index("Quick answer")
        output = terminal.read_text(encoding="utf-8")
        assert re.search(rf"WARNING +- +(failpedia: )?{re.escape(TITLE_PROBLEM)}", output), output

        _finish_draft(project)
        assert wait_for(f"{site}{DRAFT}/", "Widget finished at last", 90), "draft not rebuilt"
        page = fetch(f"{site}{DRAFT}/")
        assert "Quick answer" in page
        assert "still the placeholder" not in page


def test_build_fails_on_a_draft_and_writes_no_site(tmp_path: Path) -> None:
    project = _with_draft(tmp_path)
    site = tmp_path / "site"
    result = mkdocs_build(project, site)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert TITLE_PROBLEM in output
    assert f"{DRAFT_FILE}:5: kind: still the placeholder TODO" in output
    assert "Traceback" not in output
    assert not (site / "index.html").exists()


def test_an_edit_reads_checks_and_renders_only_the_entry_it_changed(tmp_path: Path) -> None:
    project = _site_project(tmp_path, FIXTURE / "entries")
    terminal = tmp_path / "serve.log"
    with mkdocs_serve(project, terminal, "--verbose") as site:
        assert wait_for(f"{site}{JAM}/", "Quick answer", 90), "serve did not come up"
        assert _work_lines(terminal) == [(3, 0, 3, 0)]
        jam = entry_file(project, JAM)
        jam.write_text(jam.read_text().replace("blocks the belt", "Zq8 blocks the belt"))
        assert wait_for(f"{site}{JAM}/", "Zq8 blocks", 90), "the page was not rebuilt"
        assert _work_lines(terminal)[-1] == (1, 2, 1, 2)


def test_a_dirty_serve_rebuilds_only_the_pages_an_edit_changed(tmp_path: Path) -> None:
    project = _site_project(tmp_path, FIXTURE / "entries")
    terminal = tmp_path / "serve.log"
    with mkdocs_serve(project, terminal, "--dirty", "--no-strict") as site:
        assert wait_for(f"{site}{JAM}/", "Quick answer", 90), "serve did not come up"
        [built] = (tmp_path / "tmp").glob("mkdocs_*")  # where serve builds the site
        pages = {name: built / name / "index.html" for name in (JAM, LIMIT, TIMEOUT, "widgets")}
        written = {name: page.stat().st_mtime_ns for name, page in pages.items()}
        jam = entry_file(project, JAM)
        jam.write_text(jam.read_text().replace("blocks the belt", "Zq9 blocks the belt"))
        assert wait_for(f"{site}{JAM}/", "Zq9 blocks", 90), "the page was not rebuilt"
        assert "Quick answer" in fetch(f"{site}{LIMIT}/")
        rewritten = {
            name for name, page in pages.items() if page.stat().st_mtime_ns != written[name]
        }
        assert rewritten == {JAM}
