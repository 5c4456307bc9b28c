"""``failpedia render`` writes the Markdown pages ``mkdocs build`` builds the site from,
the home page's most common failures included: one function builds both."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers import run_cli
from mkdocs.commands.build import build
from mkdocs.config import load_config
from sitebuild import REPO, copy_site_project


@pytest.mark.slow
def test_render_writes_the_pages_mkdocs_builds(tmp_path: Path) -> None:
    project = copy_site_project(tmp_path / "project")
    for name in ("verification", "benchmarks/realworld/cases"):
        shutil.copytree(REPO / name, project / name)
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    config = load_config(str(project / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    build(config)
    built = {page.path: page.markdown for page in config.plugins["failpedia"].pages}

    out = tmp_path / "rendered"
    result = run_cli(project, "render", "--out", str(out), timeout=300)
    assert result.returncode == 0, result.stderr
    rendered = {
        path.relative_to(out).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(out.rglob("*.md"))
    }
    assert sorted(rendered) == sorted(built)
    different = [path for path in built if rendered[path] != built[path]]
    assert not different, different
    assert "## Most common failures" in rendered["index.md"]
    assert (tmp_path / "site" / "index.html").is_file()
