"""``reproducer.private_requirements``: packages installed apart, each in its own folder
under the interpreter's prefix, listed by ``failpedia requirements --private``, and a skip
(a failure under ``--require-packages``) until they are there.

The proving run uses a virtual environment made for the test, so the folder it installs
into lies in the test's temporary folder and not under the machine's Python.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from verify_helpers import LINUX, RUNNER_FIXTURE, copy_project, verify

# Runs reproducers in subprocesses.
pytestmark = pytest.mark.slow

ENTRY = "uses-private-pkg"
PIN = "fakewidgets==1.0"
REPRO = '''"""Test fixture reproducer: imports a package installed apart, from its own folder."""

import importlib.util
import os
import sys

FIXED = "--fixed" in sys.argv[1:]
FOLDER = os.path.join(sys.prefix, "failpedia-private", "fakewidgets-1.0")
sys.path.insert(0, FOLDER)
if FIXED:
    # --- fix: start
    sys.path.remove(FOLDER)
    # --- fix: end

if importlib.util.find_spec("fakewidgets") is not None:
    import fakewidgets

    raise SystemExit(f"WidgetError: fakewidgets {fakewidgets.__version__} was imported")

# --- check: start
assert importlib.util.find_spec("fakewidgets") is None, "the folder is on the path by default"
print("check: fakewidgets is importable only from its own folder")
# --- check: end
'''


def project_with_private_entry(tmp_path: Path) -> Path:
    """The runner fixture with one entry more, declaring ``fakewidgets==1.0`` apart."""
    root = copy_project(tmp_path)
    template = RUNNER_FIXTURE / "entries" / "setups" / "needs-missing-pkg" / "entry.yaml"
    text = template.read_text(encoding="utf-8")
    text = text.replace("id: needs-missing-pkg", f"id: {ENTRY}")
    text = text.replace("Needs a package that is not installed", "Needs a package installed apart")
    text = text.replace("PackageError: nonexistent-pkg is missing", "WidgetError: fakewidgets")
    text = text.replace(
        "  requirements:\n    - nonexistent-pkg==1.0", f"  private_requirements:\n    - {PIN}"
    )
    assert PIN in text and "WidgetError" in text
    folder = root / "entries" / "setups" / ENTRY
    folder.mkdir()
    (folder / "entry.yaml").write_text(text, encoding="utf-8")
    (folder / "repro.py").write_text(REPRO, encoding="utf-8")
    return root


def failpedia(python: str, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-m", "failpedia.cli", "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_requirements_lists_private_pins_with_their_folders(tmp_path: Path) -> None:
    root = project_with_private_entry(tmp_path)
    listed = failpedia(sys.executable, root, "requirements", "--private")
    assert listed.returncode == 0, listed.stderr
    folder = Path(sys.prefix) / "failpedia-private" / "fakewidgets-1.0"
    assert listed.stdout.splitlines() == [f"{PIN} {folder}"]
    shared = failpedia(sys.executable, root, "requirements")
    assert PIN not in shared.stdout, "a private pin must not reach the shared `pip install`"


def test_a_missing_private_package_is_a_skip_that_require_packages_fails(tmp_path: Path) -> None:
    root = project_with_private_entry(tmp_path)
    assert not (Path(sys.prefix) / "failpedia-private" / "fakewidgets-1.0").exists()
    result = verify(root, ENTRY, "--json", "--no-record", "--require-packages")
    assert result.returncode == 1, result.stderr
    (found,) = json.loads(result.stdout)["results"]
    assert found["verdict"] == "skipped" and found["broken"] is None
    assert found["reason"].startswith(f"requires {PIN} installed apart in "), found["reason"]


@pytest.mark.skipif(not LINUX or shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_an_installed_private_package_is_proved_from_its_own_folder(tmp_path: Path) -> None:
    root = project_with_private_entry(tmp_path / "checkout")
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
        check=True,
    )
    python = str(venv / "bin" / "python")
    listed = failpedia(python, root, "requirements", "--private")
    (line,) = listed.stdout.splitlines()
    pin, folder_text = line.split(" ", 1)
    folder = Path(folder_text)
    assert pin == PIN and folder.is_relative_to(venv)
    # What `pip install --no-deps --target FOLDER fakewidgets==1.0` would leave there.
    (folder / "fakewidgets").mkdir(parents=True)
    (folder / "fakewidgets" / "__init__.py").write_text('__version__ = "1.0"\n')
    info = folder / "fakewidgets-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakewidgets\nVersion: 1.0\n")
    result = failpedia(python, root, "verify", ENTRY, "--json", "--no-record")
    assert result.returncode == 0, result.stderr
    (found,) = json.loads(result.stdout)["results"]
    assert found["verdict"] == "proved", found["reason"]
    assert "WidgetError: fakewidgets 1.0 was imported" in found["output_excerpt"]
