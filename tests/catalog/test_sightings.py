"""Signatures carry real sightings (``seen_in``): lines from public threads that their
pattern must match as a log line is read. What the validator refuses, through the CLI,
and that every sighting in the catalog is found by ``failpedia diagnose`` itself."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import (
    LIMIT,
    REPO_ROOT,
    copy_fixture,
    display,
    entry_data,
    run_cli,
    validate,
    write_entry_data,
)

LIMIT_FILE = display(LIMIT)
SIGHTINGS = [
    {
        "url": "https://github.com/example/widgets/issues/7",
        "line": "FooError: widget count 9 exceeds limit 4",
    },
    {
        "url": "https://discuss.example.org/t/widget-limits/31#post_2",
        "line": "[rank1]: FooError: widget count 12 exceeds limit 8",
    },
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_fixture(tmp_path)


def with_sightings(root: Path, sightings: list[dict[str, str]], **signature: Any) -> None:
    data = entry_data(root, LIMIT)
    data["signatures"][0].pop("seen_in_note", None)
    data["signatures"][0]["seen_in"] = sightings
    data["signatures"][0].update(signature)
    write_entry_data(root, LIMIT, data)


def problems_of_limit(root: Path) -> list[str]:
    _, lines = validate(root)
    return [line.split(": ", 1)[1] for line in lines if line.startswith(f"{LIMIT_FILE}:")]


def test_real_lines_from_two_threads_pass_with_their_prefixes(root: Path) -> None:
    with_sightings(root, SIGHTINGS)
    checked = run_cli(root, "validate")
    assert checked.returncode == 0, checked.stderr


def test_a_line_the_pattern_misses_is_named_with_its_field(root: Path) -> None:
    with_sightings(root, [SIGHTINGS[0], {**SIGHTINGS[1], "line": "FooError: too many widgets"}])
    problems = problems_of_limit(root)
    assert len(problems) == 1
    assert problems[0].startswith("signatures[0].seen_in[1].line: the signature's pattern does not")


def test_two_comments_of_one_thread_are_one_thread(root: Path) -> None:
    same = {**SIGHTINGS[0], "url": SIGHTINGS[0]["url"] + "#issuecomment-3"}
    with_sightings(root, [SIGHTINGS[0], same])
    problems = problems_of_limit(root)
    assert any(p.startswith("signatures[0].seen_in[1].url: the same thread as") for p in problems)
    assert any(p.startswith("signatures[0].seen_in: 1 public thread(s) show") for p in problems)


def test_a_thread_the_entry_cites_does_not_count(root: Path) -> None:
    with_sightings(root, SIGHTINGS)
    data = entry_data(root, LIMIT)
    data["references"] = [{"title": "The widget thread", "url": SIGHTINGS[1]["url"]}]
    write_entry_data(root, LIMIT, data)
    problems = problems_of_limit(root)
    assert any(
        p.startswith("signatures[0].seen_in[1].url: a thread the entry was written from")
        for p in problems
    )


def test_a_posters_home_folder_is_refused_in_the_neutral_form(root: Path) -> None:
    line = "FooError: widget count 9 exceeds limit 4 in /home/alice/run.py"
    with_sightings(root, [SIGHTINGS[0], {**SIGHTINGS[1], "line": line}])
    problems = problems_of_limit(root)
    assert problems == [
        "signatures[0].seen_in[1].line: holds a path of the poster's machine; pages publish "
        "paths in the neutral form: FooError: widget count 9 exceeds limit 4 in ~/run.py"
    ]


def test_fewer_than_two_threads_need_a_note_and_two_need_none(root: Path) -> None:
    with_sightings(root, SIGHTINGS[:1])
    assert problems_of_limit(root) == [
        "signatures[0].seen_in: 1 public thread(s) show this signature; give at least 2 "
        "(`seen_in`: the line as pasted and the thread's URL), or say in `seen_in_note` what "
        "was searched and why fewer were found"
    ]
    with_sightings(root, SIGHTINGS, seen_in_note="Searched the tracker.")
    assert problems_of_limit(root) == [
        "signatures[0].seen_in_note: 2 threads are given: the note is for signatures with "
        "fewer; remove it"
    ]


def _sightings() -> list[tuple[str, str, str]]:
    """(entry id, url, line) of every sighting in the catalog."""
    found = []
    for path in sorted((REPO_ROOT / "entries").glob("*/*/entry.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for signature in data["signatures"]:
            for sighting in signature.get("seen_in", []):
                found.append((data["id"], sighting["url"], sighting["line"]))
    return found


# Lines per log: below ``line_rules.MAX_LOCATIONS``, so no finding's locations are cut.
CHUNK = 40


@pytest.mark.slow
def test_diagnose_finds_every_sighting_of_the_catalog_as_its_entry(tmp_path: Path) -> None:
    sightings = _sightings()
    assert sightings
    missed = []
    for start in range(0, len(sightings), CHUNK):
        chunk = sightings[start : start + CHUNK]
        log = tmp_path / f"sightings-{start}.log"
        log.write_text("".join(line + "\n" for _, _, line in chunk), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "failpedia.cli", "diagnose", "--json", str(log)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        lines_of = {
            finding["id"]: {item["line"] for item in finding["locations"]}
            for finding in json.loads(done.stdout)["findings"]
        }
        missed += [
            (entry, url, line)
            for number, (entry, url, line) in enumerate(chunk, start=1)
            if number not in lines_of.get(entry, set())
        ]
    assert missed == []


def test_the_page_links_each_sighting_under_its_signature(root: Path) -> None:
    shutil.copytree(REPO_ROOT / "templates", root / "templates")
    with_sightings(root, SIGHTINGS)
    rendered = run_cli(root, "render", "--out", str(root / "out"))
    assert rendered.returncode == 0, rendered.stderr
    page = (root / "out" / "widgets" / "widget-limit.md").read_text(encoding="utf-8")
    assert (
        "        - **Seen in:** [github.com/example/widgets/issues/7]"
        "(https://github.com/example/widgets/issues/7), "
        "[discuss.example.org/t/widget-limits/31#post\\_2]"
        "(https://discuss.example.org/t/widget-limits/31#post_2)\n"
    ) in page


def test_no_sighting_is_a_thread_of_the_benchmark() -> None:
    """Sightings and the real-log benchmark stay apart: a pattern checked on a case's own
    thread would be fitted to the benchmark that measures it."""
    cases = REPO_ROOT / "benchmarks" / "realworld" / "cases"
    sources = {
        str(yaml.safe_load(path.read_text(encoding="utf-8"))["source"]).split("#")[0].rstrip("/")
        for path in cases.glob("*.yaml")
    }
    shared = [
        (entry, url) for entry, url, _ in _sightings() if url.split("#")[0].rstrip("/") in sources
    ]
    assert shared == []
