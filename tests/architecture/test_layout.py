"""The package's layout is its architecture: each subpackage imports only what it may,
modules stay small, and ``__init__`` files import nothing (``diagnose`` start-up)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from failpedia.docgen.layering import (
    DECLARATION,
    DeclarationError,
    allowed_imports,
    read_parts,
)

PACKAGE = Path(__file__).resolve().parents[2] / "generator" / "failpedia"

MAX_MODULE_LINES = 450
MAX_TOP_LEVEL_MODULES = 3


def _imports(path: Path) -> list[tuple[int, str]]:
    """``(line, dotted module)`` of every import of the package in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.level:
                raise AssertionError(f"{path}:{node.lineno}: relative import; use failpedia.*")
            if not node.module.startswith("failpedia"):
                continue
            folder = PACKAGE.parent.joinpath(*node.module.split("."))
            # ``from failpedia.verify import records`` imports the module records.
            names = (
                [f"{node.module}.{alias.name}" for alias in node.names]
                if folder.is_dir()
                else [node.module]
            )
            found.extend((node.lineno, name) for name in names)
        elif isinstance(node, ast.Import):
            found.extend(
                (node.lineno, alias.name)
                for alias in node.names
                if alias.name.startswith("failpedia.")
            )
    return found


def _part(relative: Path) -> str:
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def test_every_part_imports_only_what_it_may() -> None:
    """What each part may import of the package (itself always) is its own declaration
    (``MAY_IMPORT``), the one CONTRIBUTING.md's table is written from; a part without one
    fails here with its file and line."""
    try:
        allowed_by_part = allowed_imports(read_parts(PACKAGE))
    except DeclarationError as error:
        raise AssertionError(str(error)) from None
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        part = _part(path.relative_to(PACKAGE))
        for line, name in _imports(path):
            dotted = name.removeprefix("failpedia.")
            target = dotted.split(".")[0]
            if target == part or target == "_logbytes":
                continue
            allowed = allowed_by_part[part]
            if target in allowed or any(
                dotted == rule or dotted.startswith(rule + ".") for rule in allowed
            ):
                continue
            wrong.append(f"{path.relative_to(PACKAGE)}:{line}: {part} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_modules_are_small_and_the_top_level_holds_few() -> None:
    long = [
        f"{path.relative_to(PACKAGE)}: {count} lines"
        for path in PACKAGE.rglob("*.py")
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert not long, long
    top_level = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top_level) <= MAX_TOP_LEVEL_MODULES, top_level


def test_init_files_import_nothing_and_declare_what_their_part_may_import() -> None:
    """An ``__init__`` holds its docstring and its declaration (``read_parts`` refuses a
    subpackage without either), and imports nothing: ``diagnose``'s start-up pays for it."""
    for init in PACKAGE.rglob("__init__.py"):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        statements = [node for node in tree.body if not isinstance(node, ast.Expr)]
        assert not any(isinstance(node, ast.Import | ast.ImportFrom) for node in statements), init
        if init.parent != PACKAGE:
            assert all(isinstance(node, ast.Assign | ast.AnnAssign) for node in statements), (
                f"{init}: only the docstring and {DECLARATION}"
            )


def test_the_launcher_needs_only_the_standard_library() -> None:
    """The launcher runs as ``python -I -S -c <its source>`` inside the sandbox, where the
    package may not be importable."""
    tree = ast.parse((PACKAGE / "verify" / "launcher.py").read_text(encoding="utf-8"))
    modules = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    modules |= {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert modules <= set(sys.stdlib_module_names) | {"__future__"}, modules
