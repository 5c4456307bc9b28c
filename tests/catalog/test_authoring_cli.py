"""``failpedia new``, ``render`` and ``schema`` as an author runs them."""

from __future__ import annotations

import re
import shutil

import pytest
import yaml
from failpedia.catalog.json_schema import SCHEMA_FILENAMES
from failpedia.catalog.model import PLACEHOLDER
from failpedia.catalog.yaml_source import format_field_path
from helpers import (
    ENTRIES,
    LIMIT,
    REPO_ROOT,
    copy_fixture,
    display,
    entry_file,
    fill_scaffold,
    replace_in_entry,
    run_cli,
    validate,
)

NEW = "widgets/new-widget"


@pytest.fixture
def root(tmp_path):
    return copy_fixture(tmp_path)


def todo_fields(value, path=()):
    """Field paths (``signatures[0].text``) of every placeholder in a parsed document."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from todo_fields(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from todo_fields(item, (*path, index))
    elif value == PLACEHOLDER:
        yield format_field_path(path)


# --- failpedia new ----------------------------------------------------------------------


def test_new_creates_entry_and_reproducer(root):
    result = run_cli(root, "new", NEW)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == f"created entries/{NEW}/entry.yaml and repro.py"
    folder = root / "entries" / NEW
    assert sorted(path.name for path in folder.iterdir()) == ["entry.yaml", "repro.py"]
    data = yaml.safe_load(entry_file(root, NEW).read_text(encoding="utf-8"))
    assert data["id"] == "new-widget"
    assert data["category"] == "widgets"
    repro = (folder / "repro.py").read_text(encoding="utf-8")
    compile(repro, "repro.py", "exec")  # a valid Python file
    assert "new-widget" in repro


def test_new_entry_fails_only_on_its_todo_placeholders(root):
    assert run_cli(root, "new", NEW).returncode == 0
    text = entry_file(root, NEW).read_text(encoding="utf-8")
    expected = set(todo_fields(yaml.safe_load(text)))
    # What the scaffold leaves to the author, independent of the validator.
    assert "title" in expected
    assert "signatures[0].pattern" in expected
    assert "reproducer.device" in expected
    assert "id" not in expected
    assert "category" not in expected

    _, lines = validate(root)
    file_lines = text.splitlines()
    reported = set()
    for line in lines:
        match = re.fullmatch(
            re.escape(display(NEW)) + r":(\d+): ([^:]+): still the placeholder TODO: .+", line
        )
        assert match, f"not a placeholder problem in the new entry: {line}"
        number, field = int(match.group(1)), match.group(2)
        assert PLACEHOLDER in file_lines[number - 1], (line, file_lines[number - 1])
        assert field not in reported, f"{field} reported twice"
        reported.add(field)
    assert reported == expected


def test_new_with_evidence_leaves_reports_to_fill_and_no_reproducer(root):
    result = run_cli(root, "new", "--evidence", NEW)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == f"created entries/{NEW}/entry.yaml"
    assert [path.name for path in (root / "entries" / NEW).iterdir()] == ["entry.yaml"]
    data = yaml.safe_load(entry_file(root, NEW).read_text(encoding="utf-8"))
    assert "reproducer" not in data
    expected = set(todo_fields(data))
    assert {"evidence.unreproducible", "evidence.reports[1].quote"} <= expected
    _, lines = validate(root)
    reported = {line.split(": ")[1] for line in lines if line.startswith(display(NEW))}
    assert reported == expected
    assert all(": still the placeholder TODO" in line for line in lines), lines


def test_new_entry_passes_once_the_todos_are_filled(root):
    assert run_cli(root, "new", NEW).returncode == 0
    fill_scaffold(root, NEW)
    result = run_cli(root, "validate")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "4 entries in 2 categories: no problems.\n"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("widgets", "expected <category>/<id>, got 'widgets'"),
        ("widgets/a/b", "expected <category>/<id>, got 'widgets/a/b'"),
        ("", "expected <category>/<id>, got ''"),
        (
            "Widgets/new-widget",
            "category 'Widgets' must be lowercase words joined by hyphens, e.g. oom-on-backward",
        ),
        (
            "widgets/new_widget",
            "id 'new_widget' must be lowercase words joined by hyphens, e.g. oom-on-backward",
        ),
        (
            "widgets/-new",
            "id '-new' must be lowercase words joined by hyphens, e.g. oom-on-backward",
        ),
        ("../new", "category '..' must be lowercase words joined by hyphens, e.g. oom-on-backward"),
    ],
    ids=["no-slash", "too-deep", "empty", "uppercase", "underscore", "leading-hyphen", "dotdot"],
)
def test_new_refuses_bad_targets(root, target, message):
    before = sorted(path.relative_to(root) for path in root.rglob("*"))
    result = run_cli(root, "new", target)
    assert result.returncode == 2
    assert result.stderr == f"failpedia new: {message}\n"
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert sorted(path.relative_to(root) for path in root.rglob("*")) == before


def test_new_refuses_an_existing_entry(root):
    original = entry_file(root, LIMIT).read_text(encoding="utf-8")
    result = run_cli(root, "new", LIMIT)
    assert result.returncode == 2
    assert result.stderr == (
        f"failpedia new: {(root / 'entries' / LIMIT).resolve()} already exists\n"
    )
    assert entry_file(root, LIMIT).read_text(encoding="utf-8") == original


def test_cli_without_a_command_is_bad_usage(root):
    result = run_cli(root)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "usage: failpedia" in result.stderr


# --- failpedia render -------------------------------------------------------------------


def with_templates(root):
    shutil.copytree(REPO_ROOT / "templates", root / "templates")
    return root


def test_render_writes_home_category_and_entry_pages(root, tmp_path):
    with_templates(root)
    out = tmp_path / "out"
    result = run_cli(root, "render", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"wrote 7 pages to {out}\n"
    written = sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file())
    assert written == sorted(
        ["index.md", "coverage.md", "widgets/index.md", "gadgets/index.md"]
        + [f"{e}.md" for e in ENTRIES]
    )
    page = (out / f"{LIMIT}.md").read_text(encoding="utf-8")
    assert "FooError: widget count 3 exceeds limit 2" in page
    assert "# Widget count exceeds the limit" in page
    # widget-jam says it is caused by widget-limit: the link shows on both pages.
    assert "[Widget jammed in a slot](widget-jam.md)" in page
    jam = (out / "widgets/widget-jam.md").read_text(encoding="utf-8")
    assert "BarError: widget 7 jammed in slot 4" in jam
    assert "[Widget count exceeds the limit](widget-limit.md)" in jam
    category = (out / "widgets/index.md").read_text(encoding="utf-8")
    assert "(widget-limit.md)" in category
    assert "(widget-jam.md)" in category
    assert "(gadget-timeout.md)" not in category
    home = (out / "index.md").read_text(encoding="utf-8")
    assert "3 entries." in home
    assert "(gadgets/index.md)" in home


def test_render_refuses_entries_with_problems(root, tmp_path):
    with_templates(root)
    replace_in_entry(root, LIMIT, "kind: crash", "kind: TODO")
    out = tmp_path / "out"
    result = run_cli(root, "render", "--out", str(out))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(f"{display(LIMIT)}:5: kind: still the placeholder TODO")
    assert not out.exists()


# --- failpedia schema -------------------------------------------------------------------


def test_committed_schemas_match_the_model():
    result = run_cli(REPO_ROOT, "schema", "--check")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


@pytest.fixture
def schema_root(root):
    for name in SCHEMA_FILENAMES:
        shutil.copyfile(REPO_ROOT / "entries" / name, root / "entries" / name)
    return root


def test_schema_check_passes_on_a_copy(schema_root):
    result = run_cli(schema_root, "schema", "--check")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", sorted(SCHEMA_FILENAMES))
def test_schema_check_fails_after_an_edit(schema_root, name):
    path = schema_root / "entries" / name
    text = path.read_text(encoding="utf-8")
    assert text.count('"additionalProperties": false') >= 1
    edited = text.replace('"additionalProperties": false', '"additionalProperties": true', 1)
    path.write_text(edited, encoding="utf-8")
    result = run_cli(schema_root, "schema", "--check")
    assert result.returncode == 1
    entries_dir = (schema_root / "entries").resolve()
    assert result.stderr == f"{entries_dir / name} is out of date; run `failpedia schema`\n"


def test_schema_check_fails_when_a_schema_is_missing(schema_root):
    (schema_root / "entries" / "categories.schema.json").unlink()
    result = run_cli(schema_root, "schema", "--check")
    assert result.returncode == 1
    entries_dir = (schema_root / "entries").resolve()
    assert result.stderr == (
        f"{entries_dir / 'categories.schema.json'} is out of date; run `failpedia schema`\n"
    )


def test_schema_rewrites_stale_files(schema_root):
    path = schema_root / "entries" / "entry.schema.json"
    path.write_text("{}\n", encoding="utf-8")
    result = run_cli(schema_root, "schema")
    assert result.returncode == 0, result.stderr
    assert "wrote entries/entry.schema.json" in result.stdout.splitlines()
    committed = REPO_ROOT / "entries" / "entry.schema.json"
    assert path.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8")
    assert run_cli(schema_root, "schema", "--check").returncode == 0
