"""Release ranges (``signatures[].releases``): what the validator requires of them, and
``failpedia releases``, which checks each against the release installed here, so that a
new pin that changes a wording fails instead of leaving the page wrong.

A made-up package (``fakewidgets``, a folder on ``PYTHONPATH`` with its ``dist-info``)
plays the pinned package: each test installs the release it needs, with or without the
fixture's message in its source, and pins it in the fixture's reproducer.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
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
MESSAGE_SOURCE = 'raise SystemExit(f"FooError: widget count {n} exceeds limit {limit}")\n'
OTHER_SOURCE = 'raise SystemExit(f"FooError: {n} widgets, at most {limit}")\n'


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_fixture(tmp_path)


def install_fake(where: Path, version: str, source: str) -> Path:
    """A ``fakewidgets`` release in ``where`` (a folder for ``PYTHONPATH``)."""
    package = where / "fakewidgets"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(source, encoding="utf-8")
    info = where / f"fakewidgets-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: fakewidgets\nVersion: {version}\n", encoding="utf-8"
    )
    (info / "RECORD").write_text(
        f"fakewidgets/__init__.py,,\nfakewidgets-{version}.dist-info/METADATA,,\n",
        encoding="utf-8",
    )
    return where


def with_claim(
    root: Path, emitted_by: str, releases: list[dict[str, str]], pin: str | None = None
) -> None:
    """Give the fixture's signature ``releases``; pin ``fakewidgets`` when ``pin`` is set."""
    data = entry_data(root, LIMIT)
    data["signatures"][0]["emitted_by"] = emitted_by
    data["signatures"][0]["releases"] = releases
    if pin is not None:
        data["reproducer"]["requirements"] = [f"fakewidgets=={pin}"]
    write_entry_data(root, LIMIT, data)


def releases(root: Path, site: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``failpedia releases --list`` with ``site`` first on the import path."""
    env = dict(os.environ)
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-m", "failpedia.cli", "--root", str(root), "releases", "--list"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def problems_of_limit(root: Path) -> list[str]:
    _, lines = validate(root)
    return [line.split(": ", 1)[1] for line in lines if line.startswith(f"{LIMIT_FILE}:")]


# --- what the validator requires ---------------------------------------------------------


def test_a_range_said_in_emitted_by_with_a_piece_of_the_text_validates(root: Path) -> None:
    with_claim(
        root,
        "fakewidgets 1.0 to 1.4",
        [{"package": "fakewidgets", "first": "1.0", "last": "1.4", "source_text": "exceeds limit"}],
    )
    checked = run_cli(root, "validate")
    assert checked.returncode == 0, checked.stderr


def test_bounds_emitted_by_does_not_name_are_refused(root: Path) -> None:
    with_claim(root, "fakewidgets 1.0.2 and 11.4", [{"package": "fakewidgets", "first": "1.0"}])
    problems = problems_of_limit(root)
    assert problems == [
        "signatures[0].releases[0].first: `emitted_by` must name 1.0, so the page says the "
        "range that is checked (fakewidgets 1.0 and later)"
    ]


def test_a_package_emitted_by_does_not_name_is_refused(root: Path) -> None:
    with_claim(root, "gizmo 1.0 and later", [{"package": "fakewidgets", "first": "1.0"}])
    problems = problems_of_limit(root)
    assert problems == [
        "signatures[0].releases[0].package: `emitted_by` must name fakewidgets, so the page "
        "says what is checked"
    ]


def test_a_range_that_ends_before_it_starts_is_refused(root: Path) -> None:
    with_claim(
        root, "fakewidgets 1.4 to 1.2", [{"package": "fakewidgets", "first": "1.4", "last": "1.2"}]
    )
    assert problems_of_limit(root) == [
        "signatures[0].releases[0].last: 1.2 comes before first (1.4)"
    ]


def test_source_text_must_be_a_piece_of_the_message(root: Path) -> None:
    with_claim(
        root,
        "fakewidgets 1.0 and later",
        [{"package": "fakewidgets", "first": "1.0", "source_text": "exceeds the limit"}],
    )
    assert problems_of_limit(root) == [
        "signatures[0].releases[0].source_text: must be a piece of this signature's `text` "
        "(the message as emitted)"
    ]


def test_two_ranges_for_one_package_are_refused(root: Path) -> None:
    ranges = [
        {"package": "fakewidgets", "first": "1.0"},
        {"package": "FakeWidgets", "first": "1.2"},
    ]
    with_claim(root, "fakewidgets 1.0 and later, FakeWidgets 1.2", ranges)
    assert problems_of_limit(root) == [
        "signatures[0].releases[1].package: a second range for 'FakeWidgets'; give one"
    ]


def test_a_release_with_more_than_numbers_is_refused(root: Path) -> None:
    with_claim(root, "fakewidgets 1.0-beta", [{"package": "fakewidgets", "first": "1.0-beta"}])
    problems = problems_of_limit(root)
    assert len(problems) == 1
    assert problems[0].startswith("signatures[0].releases[0].first: '1.0-beta' does not match")


# --- failpedia releases: the claims against the installed, pinned release ----------------


def test_an_open_range_holds_while_the_pinned_release_holds_the_message(
    root: Path, tmp_path: Path
) -> None:
    site = install_fake(tmp_path / "site", "1.4.0", MESSAGE_SOURCE)
    claim = {"package": "fakewidgets", "first": "1.0", "source_text": "exceeds limit"}
    with_claim(root, "fakewidgets 1.0 and later", [claim], pin="1.4.0")
    result = releases(root, site)
    assert result.returncode == 0, result.stderr
    assert "fakewidgets 1.0 and later: fakewidgets 1.4.0 holds `exceeds limit`" in result.stdout
    assert "1 release claims hold for the installed releases (fakewidgets 1.4.0)." in result.stdout


def test_a_new_pin_that_drops_the_wording_fails_an_open_range(root: Path, tmp_path: Path) -> None:
    site = install_fake(tmp_path / "site", "1.5.0", OTHER_SOURCE)
    claim = {"package": "fakewidgets", "first": "1.0", "source_text": "exceeds limit"}
    with_claim(root, "fakewidgets 1.0 and later", [claim], pin="1.5.0")
    result = releases(root, site)
    assert result.returncode == 1
    assert (
        f"{LIMIT_FILE}: signatures[0].releases[0]: fakewidgets 1.0 and later, but fakewidgets "
        "1.5.0 holds no `exceeds limit`: find the release that changed the wording, set `last` "
        "and say so in `emitted_by`"
    ) in result.stderr.splitlines()
    assert result.stderr.splitlines()[-1] == "1 problem found."


def test_a_new_pin_that_keeps_the_wording_fails_a_closed_range(root: Path, tmp_path: Path) -> None:
    site = install_fake(tmp_path / "site", "1.5.0", MESSAGE_SOURCE)
    claim = {
        "package": "fakewidgets",
        "first": "1.0",
        "last": "1.4",
        "source_text": "exceeds limit",
    }
    with_claim(root, "fakewidgets 1.0 to 1.4", [claim], pin="1.5.0")
    result = releases(root, site)
    assert result.returncode == 1
    assert (
        "fakewidgets 1.0 to 1.4, but fakewidgets 1.5.0 still holds `exceeds limit`: extend the "
        "range (`last`) and `emitted_by`"
    ) in result.stderr


def test_a_closed_range_holds_once_the_pinned_release_dropped_the_wording(
    root: Path, tmp_path: Path
) -> None:
    site = install_fake(tmp_path / "site", "1.5.0", OTHER_SOURCE)
    claim = {
        "package": "fakewidgets",
        "first": "1.0",
        "last": "1.4",
        "source_text": "exceeds limit",
    }
    with_claim(root, "fakewidgets 1.0 to 1.4", [claim], pin="1.5.0")
    result = releases(root, site)
    assert result.returncode == 0, result.stderr
    assert "fakewidgets 1.0 to 1.4: fakewidgets 1.5.0 holds no `exceeds limit`" in result.stdout


def test_a_last_release_covers_its_patch_releases(root: Path, tmp_path: Path) -> None:
    site = install_fake(tmp_path / "site", "1.4.7", MESSAGE_SOURCE)
    claim = {
        "package": "fakewidgets",
        "first": "1.0",
        "last": "1.4",
        "source_text": "exceeds limit",
    }
    with_claim(root, "fakewidgets 1.0 to 1.4", [claim], pin="1.4.7")
    assert releases(root, site).returncode == 0


def test_an_installed_release_other_than_the_pin_is_refused(root: Path, tmp_path: Path) -> None:
    site = install_fake(tmp_path / "site", "1.4.0", MESSAGE_SOURCE)
    claim = {"package": "fakewidgets", "first": "1.0", "source_text": "exceeds limit"}
    with_claim(root, "fakewidgets 1.0 and later", [claim], pin="1.5.0")
    result = releases(root, site)
    assert result.returncode == 1
    assert (
        "fakewidgets 1.4.0 is installed but the catalog pins 1.5.0; install the pins "
        "(`failpedia requirements`) to check claims"
    ) in result.stderr


def test_a_package_the_catalog_does_not_install_cannot_be_claimed(root: Path) -> None:
    with_claim(root, "fakewidgets 1.0 and later", [{"package": "fakewidgets", "first": "1.0"}])
    result = releases(root)
    assert result.returncode == 1
    assert "the catalog does not install fakewidgets (only torch and the packages" in result.stderr


def test_a_range_the_pinned_release_leaves_out_needs_a_source_text(
    root: Path, tmp_path: Path
) -> None:
    site = install_fake(tmp_path / "site", "1.5.0", OTHER_SOURCE)
    claim = {"package": "fakewidgets", "first": "1.0", "last": "1.4"}
    with_claim(root, "fakewidgets 1.0 to 1.4", [claim], pin="1.5.0")
    result = releases(root, site)
    assert result.returncode == 1
    assert "give `source_text` so the check can tell that it no longer emits" in result.stderr


# --- evidence from the verification record ----------------------------------------------


def write_record(root: Path, torch_version: str, signature: int | None) -> None:
    """A record of the fixture entry whose broken mode ran under ``torch_version``."""
    matched = [] if signature is None else [{"line": "FooError: ...", "signature": signature}]
    result: dict[str, Any] = {
        "entry": "widget-limit",
        "verdict": "proved",
        "reason": "",
        "device": "cpu",
        "started_at": "2026-01-01T00:00:00Z",
        "timeout": 30,
        "broken": {"mode": "broken", "seconds": 1.0, "matched_lines": matched},
        "fixed": {"mode": "fixed", "seconds": 1.0, "matched_lines": []},
        "environment": {"key": "cpu", "torch": torch_version},
    }
    folder = root / "verification"
    folder.mkdir(exist_ok=True)
    record = {"entry": "widget-limit", "results": [result]}
    (folder / "widget-limit.json").write_text(json.dumps(record), encoding="utf-8")


TORCH = importlib.metadata.version("torch")


def test_a_record_under_the_installed_torch_proves_an_open_range(root: Path) -> None:
    with_claim(root, "torch 1.0 and later", [{"package": "torch", "first": "1.0"}])
    write_record(root, TORCH, signature=0)
    result = releases(root)
    assert result.returncode == 0, result.stderr
    assert f"torch 1.0 and later: the record under torch {TORCH} shows it" in result.stdout


def test_a_record_under_another_torch_proves_nothing(root: Path) -> None:
    with_claim(root, "torch 1.0 and later", [{"package": "torch", "first": "1.0"}])
    write_record(root, "1.0.0", signature=0)
    result = releases(root)
    assert result.returncode == 1
    assert f"nothing shows that torch {TORCH} emits it" in result.stderr


def test_a_record_under_the_installed_torch_refutes_a_range_that_ended(root: Path) -> None:
    with_claim(root, "torch 1.0 to 1.1", [{"package": "torch", "first": "1.0", "last": "1.1"}])
    write_record(root, TORCH, signature=0)
    result = releases(root)
    assert result.returncode == 1
    assert f"torch 1.0 to 1.1, but the record under torch {TORCH} shows it" in result.stderr


# --- the catalog -------------------------------------------------------------------------


@pytest.mark.slow
def test_every_release_claim_of_the_catalog_holds_for_the_pinned_releases() -> None:
    """The catalog's ranges against torch and the pins installed here (CI installs them):
    a pin that changes a wording fails this test until the entry says so."""
    result = releases(REPO_ROOT)
    assert result.returncode == 0, result.stderr + result.stdout
