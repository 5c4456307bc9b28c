"""Each part of the package declares what it owns and what it may import, in its own file
(a subpackage's ``__init__.py``, a top-level module itself): the docstring's first
paragraph says what it owns, and ``MAY_IMPORT`` names the parts it may import:

    MAY_IMPORT = ("catalog", "signatures", "verify.results")

``"verify.results"`` allows one module of a part, ``"*"`` every part, ``()`` none of ours.
A subpackage must declare both; a top-level module without ``MAY_IMPORT`` imports nothing
of ours. The layering test (``tests/architecture/test_layout.py``) and the table in
CONTRIBUTING.md both read these declarations, with ``ast``: nothing is imported, so
``__init__`` files stay free for ``diagnose``'s start-up.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from failpedia.docgen.markdown import cell, code, table

DECLARATION = "MAY_IMPORT"
EVERY_PART = "*"
# The package itself (``failpedia/__init__.py``) is the part named ``__init__``.
PACKAGE_PART = "__init__"


class DeclarationError(ValueError):
    """A part whose declaration is missing or unreadable: ``path:line: field: message``."""


@dataclass(frozen=True)
class Part:
    """One part of the package and what it declares."""

    name: str
    path: Path
    line: int
    is_package: bool
    owns: str
    may_import: tuple[str, ...]


def read_parts(package: Path) -> tuple[Part, ...]:
    """Every part of ``package`` (its subpackages, top-level modules and itself), with the
    declarations checked: each name in ``MAY_IMPORT`` is a part or a module of one."""
    files = [(PACKAGE_PART, package / "__init__.py", False)]
    for path in sorted(package.iterdir()):
        if (path / "__init__.py").is_file():
            files.append((path.name, path / "__init__.py", True))
        elif path.suffix == ".py" and path.name != "__init__.py":
            files.append((path.stem, path, False))
    parts = [_read(name, path, is_package, package) for name, path, is_package in files]
    names = {part.name for part in parts}
    for part in parts:
        for allowed in part.may_import:
            if allowed != EVERY_PART and not _exists(package, allowed, names):
                raise DeclarationError(
                    f"{_shown(part.path, package)}:{part.line}: {DECLARATION}: {allowed!r} is "
                    "no part of the package, nor a module of one"
                )
    return tuple(parts)


def allowed_imports(parts: tuple[Part, ...]) -> dict[str, set[str]]:
    """What each part may import, ``"*"`` spelled out as every other part."""
    names = {part.name for part in parts}
    return {
        part.name: (names - {part.name}) if EVERY_PART in part.may_import else set(part.may_import)
        for part in parts
    }


def layering_table(parts: tuple[Part, ...]) -> str:
    """The Markdown table of subpackages, lowest layer first: what each owns and may import."""
    packages = [part for part in parts if part.is_package]
    return table(
        ("subpackage", "owns", "may import"),
        (
            (code(f"{part.name}/"), _owns(part.owns), _imports_text(part, parts))
            for part in sorted(packages, key=lambda part: (_depth(part, parts), part.name))
        ),
    )


def _read(name: str, path: Path, is_package: bool, package: Path) -> Part:
    shown = _shown(path, package)
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError) as error:
        raise DeclarationError(f"{shown}:1: cannot read it: {error}") from None
    docstring = ast.get_docstring(tree) or ""
    owns = docstring.split("\n\n")[0].strip()
    if is_package and not owns:
        raise DeclarationError(
            f"{shown}:1: docstring: say what the part owns, in the docstring's first paragraph"
        )
    declared = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(target, ast.Name) and target.id == DECLARATION
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
    ]
    if not declared:
        if is_package:
            raise DeclarationError(
                f"{shown}:1: {DECLARATION}: declare the parts it may import, e.g. "
                f'{DECLARATION} = ("signatures",), or () for none of ours'
            )
        return Part(name, path, 1, is_package, owns, ())
    node = declared[-1]
    value = node.value
    names = (
        tuple(item.value for item in value.elts if isinstance(item, ast.Constant))
        if isinstance(value, ast.Tuple)
        else None
    )
    if names is None or not isinstance(value, ast.Tuple) or len(names) != len(value.elts):
        raise DeclarationError(
            f"{shown}:{node.lineno}: {DECLARATION}: write a tuple of names in quotes, "
            'e.g. ("catalog", "signatures")'
        )
    if not all(isinstance(item, str) for item in names):
        raise DeclarationError(f"{shown}:{node.lineno}: {DECLARATION}: each name is text")
    return Part(name, path, node.lineno, is_package, owns, tuple(str(item) for item in names))


def _exists(package: Path, dotted: str, names: set[str]) -> bool:
    head, _, rest = dotted.partition(".")
    if not rest:
        return head in names
    return package.joinpath(head, *rest.split(".")).with_suffix(".py").is_file()


def _depth(part: Part, parts: tuple[Part, ...]) -> tuple[int, int]:
    """A part that may import every other comes last; below it, one layer above the
    highest it imports."""
    if EVERY_PART in part.may_import:
        return (1, 0)
    by_name = {item.name: item for item in parts}
    seen: set[str] = set()

    def height(item: Part) -> int:
        if item.name in seen or EVERY_PART in item.may_import:
            return 0
        seen.add(item.name)
        below = [by_name[name.split(".")[0]] for name in item.may_import]
        result = 1 + max((height(other) for other in below), default=-1)
        seen.discard(item.name)
        return result

    return (0, height(part))


def _imports_text(part: Part, parts: tuple[Part, ...]) -> str:
    if EVERY_PART in part.may_import:
        return "everything"
    if not part.may_import:
        return "nothing of ours"
    packages = {item.name for item in parts if item.is_package}
    shown = []
    for name in part.may_import:
        head, _, rest = name.partition(".")
        if rest:
            shown.append(f"`{head}/`'s `{rest}` only")
        else:
            shown.append(f"`{name}/`" if name in packages else f"`{name}`")
    return ", ".join(shown)


def _owns(text: str) -> str:
    """A docstring paragraph as one table cell: reST literals as code spans."""
    joined = " ".join(line.strip() for line in text.splitlines()).removesuffix(".")
    if joined[1:2].islower():  # "The model, ..." reads "the model, ..." in a cell
        joined = joined[0].lower() + joined[1:]
    return cell(re.sub(r"``(.+?)``", r"`\1`", joined))


def _shown(path: Path, package: Path) -> str:
    try:
        return str(path.relative_to(package.parent.parent))
    except ValueError:
        return str(path)
