"""A checkout with a draft entry: the commands that only need the index keep working on
the valid entries, with one warning; the commands that check or publish stay strict."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from diagnose_helpers import CORPUS, diagnose_json, essence
from helpers import REPO_ROOT, copy_fixture, entry_file, run_cli

DRAFT = "data/some-failure"
LOG = CORPUS / "ddp-dataloader-oom.log"
WARNING = "warning: 1 entry with problems was left out; `failpedia validate` lists why"


def _copy_checkout(destination: Path) -> Path:
    """The package and the catalog as a contributor's checkout holds them."""
    root = destination / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(REPO_ROOT / "generator", root / "generator", ignore=ignore)
    # The committed entries only: a draft someone is writing in this checkout is not ours.
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "entries"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for name in filter(None, tracked):
        if (REPO_ROOT / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO_ROOT / name, root / name)
    shutil.copy(REPO_ROOT / "mkdocs.yml", root / "mkdocs.yml")
    return root


def _in_checkout(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``failpedia ARGS`` run from the checkout's own package (so from its entries)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(root / "generator"),
        "XDG_CACHE_HOME": str(root / "cache"),
    }
    return subprocess.run(
        [sys.executable, "-m", "failpedia.cli", "--root", str(root), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkout copy in which ``failpedia new`` has just scaffolded a draft."""
    root = _copy_checkout(tmp_path_factory.mktemp("drafts"))
    created = _in_checkout(root, "new", DRAFT)
    assert created.returncode == 0, created.stderr
    return root


@pytest.mark.slow
def test_diagnose_uses_the_valid_entries_and_warns_once(checkout: Path) -> None:
    result = _in_checkout(checkout, "diagnose", "--json", str(LOG))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [WARNING]
    expected = essence(diagnose_json(str(LOG)))  # the same catalog without the draft
    assert essence(json.loads(result.stdout)) == expected


@pytest.mark.slow
def test_diagnose_keeps_its_exit_codes(checkout: Path, tmp_path: Path) -> None:
    nothing = _in_checkout(checkout, "diagnose", str(CORPUS / "no-known-failure.log"))
    assert nothing.returncode == 1
    assert nothing.stderr.splitlines() == [WARNING]
    missing = _in_checkout(checkout, "diagnose", str(tmp_path / "nope.log"), str(LOG))
    assert missing.returncode == 2
    assert WARNING in missing.stderr.splitlines()
    assert "nope.log: no such file or folder" in missing.stderr
    assert "dataloader-worker-killed-by-signal" in missing.stdout


@pytest.mark.slow
def test_explain_uses_the_valid_entries_and_warns_once(checkout: Path) -> None:
    result = _in_checkout(checkout, "explain", "dataloader-worker-killed-by-signal")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [WARNING]
    assert "DataLoader worker (pid N) is killed by signal" in result.stdout


@pytest.mark.slow
def test_run_matches_with_the_valid_entries_and_warns_after_the_output(checkout: Path) -> None:
    """The command starts before the entries are compiled; the warning about the draft
    comes with the diagnosis, after everything the command printed, not in the middle."""
    line = LOG.read_text(encoding="utf-8")
    script = f"import sys; sys.stderr.write({line!r}); sys.exit(1)"
    result = _in_checkout(checkout, "run", "--", sys.executable, "-c", script)
    assert result.returncode == 1
    assert result.stderr.startswith(line)
    report = result.stderr[len(line) :]
    assert report.count(WARNING) == 1
    assert report.index(WARNING) < report.index("dataloader-worker-killed-by-signal")


def test_explaining_the_draft_says_it_has_problems(checkout: Path) -> None:
    result = _in_checkout(checkout, "explain", "some-failure")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        WARNING,
        "failpedia explain: entry 'some-failure' has problems; `failpedia validate` lists them",
    ]


@pytest.mark.parametrize(
    "command",
    [["validate"], ["index", "--out", "out"], ["requirements"], ["render", "--out", "out"]],
    ids=lambda command: command[0],
)
@pytest.mark.slow
def test_checking_and_publishing_commands_stay_strict(checkout: Path, command: list[str]) -> None:
    result = _in_checkout(checkout, *command)
    assert result.returncode == 1
    assert f"entries/{DRAFT}/entry.yaml:3: title: still the placeholder TODO" in result.stderr
    assert not (checkout / "out").exists()


@pytest.mark.slow
def test_verify_of_the_draft_or_of_everything_stays_strict(checkout: Path) -> None:
    for args in (["some-failure"], []):
        result = _in_checkout(checkout, "verify", "--no-record", *args)
        assert result.returncode == 1, args
        assert f"entries/{DRAFT}/entry.yaml:3: title: still the placeholder TODO" in result.stderr


@pytest.mark.slow
def test_verify_of_other_entries_warns_once_and_runs(checkout: Path) -> None:
    result = _in_checkout(checkout, "verify", "--no-record", "optimizer-empty-parameter-list")
    assert result.stderr.splitlines()[0] == WARNING, result.stderr
    assert "proved" in result.stdout, result.stderr


def test_an_entries_folder_given_with_a_draft_works_the_same(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path)
    assert run_cli(root, "new", "widgets/widget-draft").returncode == 0
    log = tmp_path / "train.log"
    log.write_text("step 1\nBarError: widget 7 jammed in slot 4\n", encoding="utf-8")
    result = run_cli(root, "diagnose", "--entries", str(root / "entries"), str(log))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [WARNING]
    assert "widget-jam" in result.stdout


def test_with_no_valid_entry_left_there_is_no_index(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path)
    for entry in ("widgets/widget-limit", "widgets/widget-jam", "gadgets/gadget-timeout"):
        shutil.rmtree(entry_file(root, entry).parent)
    assert run_cli(root, "new", "widgets/widget-draft").returncode == 0
    log = tmp_path / "train.log"
    log.write_text("BarError: widget 7 jammed in slot 4\n", encoding="utf-8")
    result = run_cli(root, "diagnose", "--entries", str(root / "entries"), str(log))
    assert result.returncode == 2
    assert "entries/widgets/widget-draft/entry.yaml:3: title: still the placeholder" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr
