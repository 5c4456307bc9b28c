"""Entries documented from public reports instead of proved by a reproducer.

``gadget-timeout`` of the mini fixture is turned into such an entry; the catalog is grown
with proved entries where the 15% cap needs room. What the validator refuses, what the
pages say, and what ``failpedia verify`` does with such an entry, through the CLI.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    REPO_ROOT,
    TIMEOUT,
    copy_fixture,
    display,
    entry_data,
    grow_catalog,
    run_cli,
    validate,
    write_entry_data,
)

TIMEOUT_FILE = display(TIMEOUT)
REPORTS = [
    {
        "url": "https://github.com/example/gadgets/issues/12",
        "quote": "[rank3]: BazError: gadget 7 timed out after 45 seconds",
        "versions": "gadgets 1.2, torch 2.4.0, CUDA 12.1",
        "hardware": "NVIDIA A100-SXM4-80GB",
    },
    {
        "url": "https://discuss.example.org/t/gadget-timeouts/99",
        "quote": "BazError: gadget 300 timed out after 5 seconds",
        "versions": "gadgets 1.3 on Windows 11",
    },
]
WHY = "It needs a gadget firmware fault that no script can cause on demand."


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = copy_fixture(tmp_path)
    shutil.copytree(REPO_ROOT / "templates", project / "templates")
    return project


def documented(root: Path, **changes: Any) -> dict[str, Any]:
    """Make ``gadget-timeout`` an entry documented from reports (with ``changes`` on top)."""
    data = entry_data(root, TIMEOUT)
    data.pop("reproducer")
    data["signatures"][0]["verified_from"] = "framework-source"
    data["signatures"][0]["verified_at"] = "gadgets/deadline.py, gadgets 1.3"
    data["evidence"] = {"unreproducible": WHY, "reports": [dict(r) for r in REPORTS]}
    data.update(changes)
    write_entry_data(root, TIMEOUT, data)
    (root / "entries" / TIMEOUT / "repro.py").unlink()
    return data


def problems_of_timeout(root: Path) -> list[str]:
    _, lines = validate(root)
    return [line.split(": ", 1)[1] for line in lines if line.startswith(f"{TIMEOUT_FILE}:")]


def test_an_entry_documented_from_reports_builds_with_its_reports_on_the_page(root: Path) -> None:
    grow_catalog(root, 4)  # 7 entries: 15% leaves room for one documented entry
    documented(root)
    checked = run_cli(root, "validate")
    assert checked.returncode == 0, checked.stderr
    rendered = run_cli(root, "render", "--out", str(root / "out"))
    assert rendered.returncode == 0, rendered.stderr
    page = (root / "out" / "gadgets" / "gadget-timeout.md").read_text(encoding="utf-8")
    assert "**[Documented from 2 public reports](#proof)**" in page
    assert (
        "**Documented from 2 public reports; no reproducer can trigger it on demand.** " + WHY
    ) in page
    assert (
        "1. [github.com/example/gadgets/issues/12](https://github.com/example/gadgets/issues/12):"
        " gadgets 1.2, torch 2.4.0, CUDA 12.1; NVIDIA A100-SXM4-80GB"
    ) in page
    assert "<pre><code>[rank3]: BazError: gadget 7 timed out after 45 seconds</code></pre>" in page
    assert "## Reproducer" not in page
    assert "Not yet proved" not in page
    coverage = (root / "out" / "coverage.md").read_text(encoding="utf-8")
    assert "## Documented from public reports" in coverage
    assert f"| [Gadget timed out](gadgets/gadget-timeout.md) | 2 | {WHY} |" in coverage
    assert "| Not yet proved | 6 |" in coverage  # the documented entry is counted apart
    home = (root / "out" / "index.md").read_text(encoding="utf-8")
    assert "The 1 failures no script can trigger on demand" in home


def test_verify_says_a_documented_entry_has_nothing_to_run(root: Path) -> None:
    grow_catalog(root, 4)
    documented(root)
    result = run_cli(root, "verify", "gadget-timeout", "--no-record")
    assert result.returncode == 0, result.stderr
    assert (
        "failpedia verify: gadget-timeout: documented from public reports; "
        "it has no reproducer to run"
    ) in result.stderr
    assert "Traceback" not in result.stderr
    requirements = run_cli(root, "requirements", "--device", "all")
    assert requirements.returncode == 0, requirements.stderr


def test_an_entry_needs_a_reproducer_or_evidence_and_not_both(root: Path) -> None:
    grow_catalog(root, 4)
    data = entry_data(root, TIMEOUT)
    reproducer = data.pop("reproducer")
    write_entry_data(root, TIMEOUT, data)
    assert problems_of_timeout(root) == [
        "reproducer: missing: every entry has a reproducer, or "
        "`evidence` (public reports) when no script can trigger the failure on demand"
    ]
    data["reproducer"] = reproducer
    data["evidence"] = {"unreproducible": WHY, "reports": REPORTS}
    write_entry_data(root, TIMEOUT, data)
    assert problems_of_timeout(root) == [
        "evidence: an entry has a reproducer or evidence, not both: a reproducer proves what "
        "evidence can only document; remove `evidence`"
    ]


def test_reports_must_be_two_threads_whose_quotes_the_patterns_match(root: Path) -> None:
    grow_catalog(root, 4)
    reports = [dict(report) for report in REPORTS]
    reports[1]["url"] = reports[0]["url"] + "/"
    reports.append({**REPORTS[1], "quote": "BazError: gadget seven timed out"})
    reports.append({**REPORTS[1], "url": "https://example.org/b", "quote": "one\ntwo"})
    data = documented(root)
    data["evidence"]["reports"] = reports
    data["signatures"][0]["verified_from"] = "reproducer-output"
    write_entry_data(root, TIMEOUT, data)
    assert problems_of_timeout(root) == [
        "signatures[0].verified_from: an entry without a reproducer has no reproducer output "
        "to copy from; copy the wording from the framework's source (`framework-source`)",
        "evidence.reports[1].url: the same thread as reports[0]: each report is another thread",
        "evidence.reports[2].quote: no signature pattern matches it: the patterns must catch "
        "the line as real logs print it (add the wording this report shows as a signature, "
        "from the framework's source)",
        "evidence.reports[3].quote: one line: the failure's line exactly as the report shows it",
    ]


def test_quotes_are_published_without_the_reporters_paths(root: Path) -> None:
    grow_catalog(root, 4)
    data = documented(root)
    data["evidence"]["reports"][1]["quote"] = (
        "  File /home/ada/env/lib/python3.10/site-packages/gadgets/run.py: "
        "BazError: gadget 3 timed out after 9 seconds"
    )
    write_entry_data(root, TIMEOUT, data)
    assert problems_of_timeout(root) == [
        "evidence.reports[1].quote: holds a path of the reporter's machine; pages publish "
        "paths in the neutral form:   File .../site-packages/gadgets/run.py: BazError: "
        "gadget 3 timed out after 9 seconds"
    ]


def test_one_report_is_not_evidence(root: Path) -> None:
    grow_catalog(root, 4)
    data = documented(root)
    data["evidence"]["reports"] = REPORTS[:1]
    write_entry_data(root, TIMEOUT, data)
    [problem] = problems_of_timeout(root)
    assert "evidence.reports: " in problem and "at least 2" in problem, problem


def test_documented_entries_stay_within_15_percent_of_the_catalog(root: Path) -> None:
    documented(root)  # 1 of 3 entries
    _, lines = validate(root)
    assert lines == [
        "entries: 1 of 3 entries are documented from reports instead of proved by a "
        "reproducer; at most 15% (0) may be. Write a reproducer for one of them, or add "
        "entries that have one. Documented: gadget-timeout"
    ]
