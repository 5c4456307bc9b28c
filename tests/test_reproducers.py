"""Every CPU reproducer honours the contract: broken mode prints a signature, fixed mode
exits 0 and prints none."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from failpedia.catalog import CatalogEntry
from failpedia.validator import load_catalog
from sitebuild import REPO

CATALOG, _ = load_catalog(REPO / "entries", REPO)
CPU_ENTRIES = [item for item in CATALOG.entries if item.entry.reproducer.device == "cpu"]


def _run(item: CatalogEntry, workdir: Path, *args: str) -> tuple[int, list[str]]:
    script = item.folder / item.entry.reproducer.script
    env = {key: value for key, value in os.environ.items() if not key.startswith("TORCH")}
    env.update(PYTHONNOUSERSITE="1", PYTHONHASHSEED="0")
    result = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        timeout=item.entry.reproducer.timeout,
    )
    return result.returncode, result.stdout.splitlines()


def _matches(item: CatalogEntry, lines: list[str]) -> list[str]:
    return [line for line in lines if any(pattern.search(line) for pattern in item.patterns)]


@pytest.mark.parametrize("item", CPU_ENTRIES, ids=[item.entry.id for item in CPU_ENTRIES])
def test_reproducer_fails_broken_and_passes_fixed(item: CatalogEntry, tmp_path: Path) -> None:
    _, broken = _run(item, tmp_path)
    assert _matches(item, broken), "broken mode printed no signature:\n" + "\n".join(broken[-30:])
    code, fixed = _run(item, tmp_path, "--fixed")
    assert code == 0, f"fixed mode exited {code}:\n" + "\n".join(fixed[-30:])
    assert not _matches(item, fixed), "fixed mode printed a signature"
