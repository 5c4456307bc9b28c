"""The project a command works on, and its index kept in the user's cache: ``--root`` and
``entries_dir`` name the catalog ``diagnose`` reads (never the checkout the package runs
from), a second call reads the cached index, and an edited entry changes the next one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO_ROOT, TIMEOUT, copy_fixture

TIMEOUT_LINE = "BazError: gadget 12 timed out after 30 seconds"
JAM_LINE = "BarError: widget 7 jammed in slot 4"


def _failpedia(
    cache: Path, *args: str, cwd: Path | None = None, package: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``failpedia ARGS`` with its cache in ``cache`` (and its package from ``package``)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    if package is not None:
        env["PYTHONPATH"] = str(package)
    return subprocess.run(
        [sys.executable, "-m", "failpedia.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env=env,
    )


def _package_copy(tmp_path: Path) -> Path:
    """A copy of the package, whose modules (part of the cache key) nobody edits while the
    test runs."""
    folder = tmp_path / "generator"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(REPO_ROOT / "generator" / "failpedia", folder / "failpedia", ignore=ignore)
    return folder


def _found(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode in (0, 1), result.stderr
    return [finding["id"] for finding in json.loads(result.stdout)["findings"]]


def _two_checkouts(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Checkout A without the gadget entry, B with it (entries in ``other/``), a log."""
    first = copy_fixture(tmp_path / "a")
    shutil.rmtree(first / "entries" / TIMEOUT)
    second = copy_fixture(tmp_path / "b")
    (second / "entries").rename(second / "other")
    (second / "mkdocs.yml").write_text(
        "site_name: B\nplugins:\n  - failpedia:\n      entries_dir: other\n", encoding="utf-8"
    )
    log = tmp_path / "train.log"
    log.write_text(f"step 1\n{TIMEOUT_LINE}\n", encoding="utf-8")
    return first, second, log


def test_root_names_the_catalog_and_entries_dir_is_honoured(tmp_path: Path) -> None:
    first, second, log = _two_checkouts(tmp_path)
    cache = tmp_path / "cache"
    from_b = _failpedia(cache, "--root", str(second), "diagnose", "--json", str(log))
    assert _found(from_b) == ["gadget-timeout"]
    from_a = _failpedia(cache, "--root", str(first), "diagnose", "--json", str(log))
    assert _found(from_a) == []
    # Without --root, the current folder's project (it has mkdocs.yml and its entries).
    here = _failpedia(cache, "diagnose", "--json", str(log), cwd=second)
    assert _found(here) == ["gadget-timeout"]
    explained = _failpedia(cache, "--root", str(second), "explain", "gadget-timeout")
    assert explained.returncode == 0, explained.stderr
    missing = _failpedia(cache, "--root", str(first), "explain", "gadget-timeout")
    assert missing.returncode == 2
    assert "no entry 'gadget-timeout'" in missing.stderr


def test_the_index_is_cached_and_an_edited_entry_rebuilds_it(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path)
    cache = tmp_path / "cache"
    package = _package_copy(tmp_path)
    log = tmp_path / "train.log"
    log.write_text(f"{JAM_LINE}\n", encoding="utf-8")
    first = _failpedia(cache, "--root", str(root), "diagnose", "--json", str(log), package=package)
    assert _found(first) == ["widget-jam"]
    compiled = sorted((cache / "failpedia" / "index").iterdir())
    assert len(compiled) == 1
    assert (compiled[0] / "signatures.json").is_file()
    checked = sorted((cache / "failpedia" / "entries").iterdir())
    assert len(checked) == 3  # one cached check per entry file
    # The second call reads the cached index: nothing is compiled or checked again.
    stamp = (compiled[0] / "signatures.json").stat().st_mtime_ns
    again = _failpedia(cache, "--root", str(root), "diagnose", "--json", str(log), package=package)
    assert _found(again) == ["widget-jam"]
    assert sorted((cache / "failpedia" / "index").iterdir()) == compiled
    assert (compiled[0] / "signatures.json").stat().st_mtime_ns == stamp
    # An edited entry: its pattern no longer matches the log; only that entry is checked.
    jam = root / "entries" / "widgets" / "widget-jam" / "entry.yaml"
    text = jam.read_text(encoding="utf-8")
    jam.write_text(text.replace(r"jammed in slot \d+", r"jammed in tray \d+"), encoding="utf-8")
    edited = _failpedia(cache, "--root", str(root), "diagnose", "--json", str(log), package=package)
    assert _found(edited) == []
    assert len(list((cache / "failpedia" / "index").iterdir())) == 2
    assert len(list((cache / "failpedia" / "entries").iterdir())) == 4


def test_a_corrupt_cache_is_rebuilt_and_a_bad_pattern_is_named(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path)
    cache = tmp_path / "cache"
    log = tmp_path / "train.log"
    log.write_text(f"{JAM_LINE}\n", encoding="utf-8")
    assert _found(_failpedia(cache, "--root", str(root), "diagnose", "--json", str(log)))
    # The index alone (its meta file intact), then every cached file.
    for pattern in ("index/*/signatures.json", "*/**/*"):
        for path in (cache / "failpedia").glob(pattern):
            if path.is_file():
                path.write_bytes(b"\x80not what was written")
        rebuilt = _failpedia(cache, "--root", str(root), "diagnose", "--json", str(log))
        assert _found(rebuilt) == ["widget-jam"]
        assert rebuilt.stderr == ""
    jam = root / "entries" / "widgets" / "widget-jam" / "entry.yaml"
    text = jam.read_text(encoding="utf-8")
    jam.write_text(text.replace(r"slot \d+'", r"slot (\d+'"), encoding="utf-8")
    refused = _failpedia(cache, "--root", str(root), "validate")
    assert refused.returncode == 1
    bad = _failpedia(cache, "--root", str(root), "diagnose", "--json", str(log))
    assert bad.returncode == 1, bad.stderr
    assert "warning: 1 entry with problems was left out" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.slow
def test_a_manifest_of_the_wrong_shape_is_only_a_miss(tmp_path: Path) -> None:
    """The stat manifest is JSON the cache wrote; one of another shape (an older format,
    a hand edit) makes the key be computed again, with no word and no traceback."""
    root = copy_fixture(tmp_path)
    cache = tmp_path / "cache"
    log = tmp_path / "train.log"
    log.write_text(f"{JAM_LINE}\n", encoding="utf-8")
    assert _found(_failpedia(cache, "--root", str(root), "diagnose", "--json", str(log)))
    [manifest] = (cache / "failpedia" / "stat").iterdir()
    kept = json.loads(manifest.read_text(encoding="utf-8"))
    folder = next(iter(kept["folders"]))
    shapes = [
        {**kept, "folders": {folder: [kept["folders"][folder][0], [1, 2]]}},
        {**kept, "folders": {folder: [kept["folders"][folder][0], "entry.yaml"]}},
        {**kept, "stats": [7] * len(kept["stats"])},
        {**kept, "digests": kept["digests"][1:]},
        {**kept, "key": 12},
        [kept],
    ]
    for shape in shapes:
        manifest.write_text(json.dumps(shape), encoding="utf-8")
        again = _failpedia(cache, "--root", str(root), "diagnose", "--json", str(log))
        assert _found(again) == ["widget-jam"]
        assert again.stderr == ""


@pytest.mark.slow
def test_an_edited_mkdocs_yml_is_read_again(tmp_path: Path) -> None:
    """What mkdocs.yml says is kept in the cache under its size and time: an edit that
    moves the entries folder is followed on the next call, even one made long ago."""
    root = copy_fixture(tmp_path)
    cache = tmp_path / "cache"
    log = tmp_path / "train.log"
    log.write_text(f"{JAM_LINE}\n", encoding="utf-8")
    config = root / "mkdocs.yml"
    config.write_text("site_name: Mini\nplugins:\n  - failpedia\n", encoding="utf-8")
    hour_ago = config.stat().st_mtime - 3600
    os.utime(config, (hour_ago, hour_ago))
    assert _found(_failpedia(cache, "--root", str(root), "diagnose", "--json", str(log)))
    assert list((cache / "failpedia" / "settings").iterdir())  # kept: it is not recent
    (root / "entries").rename(root / "other")
    (root / "entries").mkdir()  # an empty catalog where the old settings point
    config.write_text(
        "site_name: Mini\nplugins:\n  - failpedia:\n      entries_dir: other\n", encoding="utf-8"
    )
    os.utime(config, (hour_ago + 60, hour_ago + 60))
    moved = _failpedia(cache, "--root", str(root), "diagnose", "--json", str(log))
    assert _found(moved) == ["widget-jam"]
