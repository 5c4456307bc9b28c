"""The documents that describe the interface are written from it (``failpedia docs``): the
check passes on the repository, and on a copy of the package where an option, a field or a
part was added without rewriting them, it fails naming the region, its file and line, and
how to rewrite it; rewriting changes only the regions."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ("README.md", "CONTRIBUTING.md")
REGION = re.compile(r"<!-- begin: failpedia docs (.+?) -->.*?<!-- end: failpedia docs \1 -->", re.S)


def docs(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``failpedia --root ROOT docs ARGS`` with the package of ``ROOT/generator`` (a copy's
    own, so that its parser, model and parts are what the documents are written from)."""
    environment = {**os.environ, "PYTHONPATH": str(root / "generator")}
    return subprocess.run(
        [sys.executable, "-m", "failpedia.cli", "--root", str(root), "docs", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
        cwd=root,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The documents and the package, copied."""
    for name in DOCUMENTS:
        shutil.copy2(REPO_ROOT / name, tmp_path / name)
    shutil.copytree(
        REPO_ROOT / "generator" / "failpedia",
        tmp_path / "generator" / "failpedia",
        ignore=shutil.ignore_patterns("__pycache__", "*.so"),
    )
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: {old!r} is not there once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def outside_regions(path: Path) -> str:
    return REGION.sub("", path.read_text(encoding="utf-8"))


def test_the_documents_are_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "failpedia.cli", "--root", str(REPO_ROOT), "docs", "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_a_new_option_fails_the_check_until_the_table_is_rewritten(project: Path) -> None:
    edit(
        project / "generator" / "failpedia" / "cli" / "main.py",
        'schema.add_argument("--check"',
        'schema.add_argument("--indent-width", metavar="COLUMNS", help="indentation")\n'
        '    schema.add_argument("--check"',
    )
    before = {name: outside_regions(project / name) for name in DOCUMENTS}

    result = docs(project, "--check")
    assert result.returncode == 1, result.stdout + result.stderr
    line = next(
        number
        for number, text in enumerate((project / "README.md").read_text().splitlines(), 1)
        if text == "<!-- begin: failpedia docs commands -->"
    )
    assert result.stderr.splitlines() == [
        f"README.md:{line}: the region 'commands' is out of date with the parser "
        "(cli/main.py); run `failpedia docs` to rewrite it"
    ]

    written = docs(project)
    assert written.returncode == 0, written.stderr
    assert "wrote README.md" in written.stdout
    assert "`--indent-width COLUMNS`" in (project / "README.md").read_text()
    assert {name: outside_regions(project / name) for name in DOCUMENTS} == before
    assert docs(project, "--check").returncode == 0


def test_a_new_model_field_fails_the_check(project: Path) -> None:
    edit(
        project / "generator" / "failpedia" / "catalog" / "model.py",
        '    note: str | None = spec("Anything else about versions.", default=None)\n',
        '    note: str | None = spec("Anything else about versions.", default=None)\n'
        '    backported_to: str | None = spec("Releases the fix was backported to.", '
        "default=None)\n",
    )
    result = docs(project, "--check")
    assert result.returncode == 1
    assert "CONTRIBUTING.md:" in result.stderr
    assert "the region 'entry fields' is out of date with the entry model" in result.stderr

    assert docs(project).returncode == 0
    assert (
        "| `versions.backported_to` | optional | Markdown | Releases the fix was backported to. |"
        in (project / "CONTRIBUTING.md").read_text()
    )


def test_a_new_part_needs_only_its_own_declaration(project: Path) -> None:
    part = project / "generator" / "failpedia" / "sketches"
    part.mkdir()
    (part / "__init__.py").write_text('"""Sketches of pages.\n\nNothing else."""\n')
    result = docs(project, "--check")
    assert result.returncode == 1
    assert result.stderr.startswith(
        "failpedia docs: generator/failpedia/sketches/__init__.py:1: MAY_IMPORT: declare the "
        "parts it may import"
    )

    (part / "__init__.py").write_text(
        '"""Sketches of pages.\n\nNothing else."""\n\nMAY_IMPORT = ("catalog",)\n'
    )
    result = docs(project, "--check")
    assert "the region 'layering' is out of date" in result.stderr
    assert docs(project).returncode == 0
    assert "| `sketches/` | sketches of pages | `catalog/` |" in (
        project / "CONTRIBUTING.md"
    ).read_text(encoding="utf-8")


def test_a_document_without_its_markers_is_named_and_nothing_is_written(project: Path) -> None:
    edit(
        project / "generator" / "failpedia" / "cli" / "main.py",
        'schema.add_argument("--check"',
        'schema.add_argument("--indent-width", metavar="COLUMNS", help="indentation")\n'
        '    schema.add_argument("--check"',
    )
    edit(project / "CONTRIBUTING.md", "<!-- end: failpedia docs layering -->\n", "")
    readme = (project / "README.md").read_text(encoding="utf-8")

    result = docs(project)
    assert result.returncode == 1
    assert re.fullmatch(
        r"failpedia docs: CONTRIBUTING\.md:\d+: 'layering' never ends; add "
        r"<!-- end: failpedia docs layering -->\n",
        result.stderr,
    ), result.stderr
    assert (project / "README.md").read_text(encoding="utf-8") == readme


def test_a_document_missing_a_region_is_named(project: Path) -> None:
    text = (project / "README.md").read_text(encoding="utf-8")
    (project / "README.md").write_text(REGION.sub("", text, count=1), encoding="utf-8")
    result = docs(project, "--check")
    assert result.returncode == 1
    assert result.stderr.startswith(
        "failpedia docs: README.md: has no region 'commands' (the parser (cli/main.py)); put "
        "<!-- begin: failpedia docs commands --> and <!-- end: failpedia docs commands --> on "
        "lines of their own"
    ), result.stderr
