"""The issue forms and the pull-request template: valid for GitHub's issue-forms schema,
and every field a link fills in (entry pages, ``failpedia report``) is a field of its
form."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
import yaml
from sitebuild import REPO

GITHUB = REPO / ".github"
FORMS = GITHUB / "ISSUE_TEMPLATE"
FIELD_TYPES = {"markdown", "textarea", "input", "dropdown", "checkboxes"}
TOP_LEVEL_KEYS = {"name", "description", "body", "title", "labels", "assignees", "projects"}
ID = re.compile(r"^[A-Za-z0-9_-]+$")
# The fields each form must ask for, and require.
REQUIRED = {
    "unknown-failure.yml": {"report"},
    "entry-wrong.yml": {"entry", "what-happened", "environment"},
}


def load_form(name: str) -> dict[str, Any]:
    data = yaml.safe_load((FORMS / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict), name
    return data


def field_ids(form: dict[str, Any]) -> set[str]:
    return {item["id"] for item in form["body"] if "id" in item}


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_form_follows_the_issue_forms_schema(name: str) -> None:
    form = load_form(name)
    assert set(form) <= TOP_LEVEL_KEYS, set(form) - TOP_LEVEL_KEYS
    assert isinstance(form["name"], str) and form["name"].strip()
    assert isinstance(form["description"], str) and form["description"].strip()
    body = form["body"]
    assert isinstance(body, list) and body
    ids: list[str] = []
    labels: list[str] = []
    for number, item in enumerate(body):
        where = f"{name}: body[{number}]"
        assert item.get("type") in FIELD_TYPES, where
        attributes = item.get("attributes")
        assert isinstance(attributes, dict), where
        if item["type"] == "markdown":
            assert isinstance(attributes.get("value"), str) and attributes["value"].strip()
            assert "validations" not in item, where
            continue
        assert ID.match(str(item.get("id", ""))), f"{where}: id"
        ids.append(item["id"])
        assert isinstance(attributes.get("label"), str) and attributes["label"].strip(), where
        labels.append(attributes["label"])
        if item["type"] == "dropdown":
            options = attributes.get("options")
            assert isinstance(options, list) and options and len(set(options)) == len(options)
        if item["type"] == "checkboxes":
            options = attributes.get("options")
            assert isinstance(options, list) and options, where
            assert all(isinstance(option.get("label"), str) for option in options), where
        validations = item.get("validations", {})
        assert set(validations) <= {"required"}, where
        assert isinstance(validations.get("required", False), bool), where
    assert len(ids) == len(set(ids)), f"{name}: ids repeat: {ids}"
    assert len(labels) == len(set(labels)), f"{name}: labels repeat"
    required = {
        item["id"] for item in body if item.get("validations", {}).get("required") and "id" in item
    }
    assert REQUIRED[name] <= required, f"{name}: must require {REQUIRED[name] - required}"


def test_config_and_pull_request_template() -> None:
    config = yaml.safe_load((FORMS / "config.yml").read_text(encoding="utf-8"))
    assert isinstance(config["blank_issues_enabled"], bool)
    for link in config["contact_links"]:
        assert {"name", "url", "about"} <= set(link)
        assert link["url"].startswith("https://")
    template = (GITHUB / "pull_request_template.md").read_text(encoding="utf-8")
    checklist = [line for line in template.splitlines() if line.lstrip().startswith("- [ ]")]
    text = " ".join(template.split())
    for step in ("failpedia validate", "failpedia verify", "check region", "reference"):
        assert step in text, step
    assert len(checklist) >= 6


def _link_fields(url: str) -> tuple[str, dict[str, list[str]]]:
    query = parse_qs(urlsplit(url).query)
    [template] = query.pop("template")
    return template, query


@pytest.mark.slow
def test_entry_pages_link_to_the_entry_wrong_form_with_the_id_filled_in(tmp_path: Path) -> None:
    out = tmp_path / "pages"
    subprocess.run(
        [sys.executable, "-m", "failpedia.cli", "render", "--out", str(out)],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    page = (out / "cuda" / "cuda-oom.md").read_text(encoding="utf-8")
    links = re.findall(r"\((https://github\.com/failpedia/failpedia/issues/new\?[^)\s]+)\)", page)
    assert len(links) == 1, links
    template, fields = _link_fields(links[0])
    assert template == "entry-wrong.yml"
    assert fields["entry"] == ["cuda-oom"]
    assert set(fields) - {"title", "labels"} <= field_ids(load_form(template))
    assert "cuda-oom" in unquote(links[0])
