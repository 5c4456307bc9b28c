"""Find the project a command works on, and its settings.

``--root`` names it; without it, the current folder where it holds a project (its
``mkdocs.yml`` and entries folder), else the checkout this package runs from (an editable
install), else none: an installed wheel then reads the index it ships. The entries
folder is always the settings' (``mkdocs.yml``'s ``entries_dir``), never a fixed name.
"""

from __future__ import annotations

from pathlib import Path

from failpedia.settings import CONFIG_FILE, ProjectSettings, read_settings

PACKAGE_DIR = Path(__file__).resolve().parents[1]


def project_at(folder: Path) -> ProjectSettings | None:
    """The settings of the project in ``folder``, where it holds one (a ``mkdocs.yml``
    and the entries folder it names); None otherwise."""
    if not (folder / CONFIG_FILE).is_file():
        return None
    settings = read_settings(folder)
    return settings if settings.entries_dir.is_dir() else None


def package_checkout() -> ProjectSettings | None:
    """The project of the checkout this package runs from (editable installs), or None
    (a wheel's package lies in site-packages, with no project around it)."""
    return project_at(PACKAGE_DIR.parents[1])


def find_project(root: str | Path | None) -> ProjectSettings | None:
    """The settings of the project named by ``root`` (``--root``); without it, of the
    current folder's project, else of the package's checkout, else None."""
    if root is not None:
        return read_settings(Path(root).resolve())
    return project_at(Path.cwd().resolve()) or package_checkout()


def project_or_here(root: str | Path | None) -> ProjectSettings:
    """The settings of the project a catalog command works on: as ``find_project``, and
    where there is none, the current folder's (whose missing entries folder is then the
    problem reported)."""
    return find_project(root) or read_settings(Path.cwd().resolve())
