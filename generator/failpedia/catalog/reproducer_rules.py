"""The proof contract a reproducer's source must meet, checked before anything runs.

A proof shows that the fix makes the difference and that the fixed program still does its
job. So: the fix region holds every place where the script's behaviour depends on
``--fixed`` (what a reader copies is what made the difference); a check region asserts
the fixed result against a reference and never looks at the flag; and every module the
script imports is the standard library, torch, a file beside it, or a declared
requirement (a missing package must not pass for a stale entry).
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field

from failpedia.catalog.regions import CHECK, FIX, Region, RegionError, find_region, mark_check_end

FLAG = "--fixed"
FLAG_DEFINITION = 'FIXED = "--fixed" in sys.argv[1:]'
# Importable without a declaration: the standard library and torch itself.
ALWAYS_IMPORTABLE = frozenset(sys.stdlib_module_names) | {"torch", "__future__"}
# Distributions whose import name is not their normalised name.
IMPORT_NAMES: dict[str, tuple[str, ...]] = {
    "pyyaml": ("yaml",),
    "pillow": ("PIL",),
    "scikit-learn": ("sklearn",),
    "opencv-python": ("cv2",),
    "opencv-python-headless": ("cv2",),
    "beautifulsoup4": ("bs4",),
    "protobuf": ("google",),
    "nvidia-ml-py": ("pynvml",),
    "python-dateutil": ("dateutil",),
    "setuptools": ("setuptools", "pkg_resources", "distutils"),
    "attrs": ("attr", "attrs"),
}
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class ScriptProblem:
    """A broken rule, at a line of the reproducer (0 when it concerns the whole file)."""

    line: int
    message: str


@dataclass
class ScriptReview:
    """What the rules found, and the two regions the page shows."""

    problems: list[ScriptProblem] = field(default_factory=list)
    fix_code: str | None = None
    check_code: str | None = None

    def add(self, line: int, message: str) -> None:
        self.problems.append(ScriptProblem(line, message))


def import_names(requirement: str) -> tuple[str, ...]:
    """The top-level modules a ``name==version`` requirement provides."""
    match = _REQUIREMENT_NAME.match(requirement)
    if match is None:
        return ()
    name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
    return IMPORT_NAMES.get(name, (name.replace("-", "_"),))


def review_script(
    source: str, requirements: list[str], sibling_modules: frozenset[str] = frozenset()
) -> ScriptReview:
    """Check a reproducer's source against the proof contract, collecting every problem."""
    review = ScriptReview()
    regions: dict[str, Region] = {}
    for name in (FIX, CHECK):
        try:
            regions[name] = find_region(source, name)
        except RegionError as error:
            review.add(0, str(error))
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        review.add(error.lineno or 0, f"not valid Python: {error.msg}")
        return review
    if FIX in regions:
        review.fix_code = regions[FIX].code
    flags = _flag_names(tree, review)
    if FIX in regions:
        _check_flag_uses(tree, flags, regions[FIX], review)
    if CHECK in regions:
        review.check_code = regions[CHECK].code
        _check_check_region(source, tree, flags, regions[CHECK], review)
    allowed = ALWAYS_IMPORTABLE | sibling_modules
    allowed |= {name for requirement in requirements for name in import_names(requirement)}
    _check_imports(tree, allowed, review)
    review.problems.sort(key=lambda problem: problem.line)
    return review


def _flag_names(tree: ast.Module, review: ScriptReview) -> set[str]:
    """The names bound to ``"--fixed" in sys.argv...``; the literal appears nowhere else."""
    names: set[str] = set()
    definitions: set[int] = set()
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and _mentions_flag_literal(statement.value):
            names.update(t.id for t in statement.targets if isinstance(t, ast.Name))
            definitions.update(id(node) for node in ast.walk(statement))
    for node in ast.walk(tree):
        if _is_flag_literal(node) and id(node) not in definitions:
            review.add(
                node.lineno,  # type: ignore[attr-defined]
                f'"{FLAG}" outside the flag\'s definition: define `{FLAG_DEFINITION}` once '
                "at top level and use FIXED only in the fix region",
            )
    if not names:
        review.add(0, f"no fixed-mode flag: define `{FLAG_DEFINITION}` at top level")
    return names


def _is_flag_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == FLAG


def _mentions_flag_literal(node: ast.AST) -> bool:
    return any(_is_flag_literal(child) for child in ast.walk(node))


def _check_flag_uses(tree: ast.Module, flags: set[str], fix: Region, review: ScriptReview) -> None:
    """Every use of the flag lies in the fix region, or is the one ``if FIXED:`` guard
    whose whole body is the region."""
    guards: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id in flags
            and not node.orelse
            and node.lineno < fix.start_line
            and all(fix.holds(child.lineno) for child in node.body)
            and all(fix.holds(child.end_lineno or child.lineno) for child in node.body)
        ):
            guards.add(id(node.test))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id in flags):
            continue
        if isinstance(node.ctx, ast.Store) or id(node) in guards or fix.holds(node.lineno):
            continue
        review.add(
            node.lineno,
            f"{node.id} is used outside the fix region: every difference between the modes "
            "must lie in the region (or be its one `if FIXED:` guard, without else), so "
            "the code a reader copies is the code that made the difference",
        )


def _check_check_region(
    source: str, tree: ast.Module, flags: set[str], check: Region, review: ScriptReview
) -> None:
    inside = [
        node
        for node in ast.walk(tree)
        if hasattr(node, "lineno") and check.start_line < node.lineno < check.end_line
    ]
    asserts = any(
        isinstance(node, ast.Assert)
        or (isinstance(node, ast.Call) and "assert" in _called_name(node).lower())
        for node in inside
    )
    if not asserts:
        review.add(
            check.start_line,
            "the check region asserts nothing: compare the fixed result with a reference "
            "(`assert ...`, `torch.testing.assert_close(...)`)",
        )
    for node in inside:
        mentions_flag = (isinstance(node, ast.Name) and node.id in flags) or _is_flag_literal(node)
        if mentions_flag or _is_sys_argv(node):
            review.add(
                node.lineno,
                "the check region must not depend on the mode: it checks the result the "
                "same way whichever mode ran",
            )
    lines = source.split("\n")[check.start_line : check.end_line - 1]
    for number, text in enumerate(lines, start=check.start_line + 1):
        if text.strip() and not text.startswith(check.indent) and not _continues(number, tree):
            review.add(
                number,
                "the check region's lines must be indented at least as much as its first "
                "line (the runner confirms the check ran to its end at that indentation)",
            )
    try:
        compile(mark_check_end(source, "pass"), "repro.py", "exec", dont_inherit=True)
    except SyntaxError as error:
        review.add(
            check.end_line,
            "the check region does not end where a statement can follow at its first "
            f"line's indentation ({error.msg})",
        )


def _continues(line: int, tree: ast.Module) -> bool:
    """Whether ``line`` is inside a multi-line statement started on an earlier line
    (a string or bracket continuation, which may be indented as it likes)."""
    return any(
        isinstance(node, ast.stmt)
        and not isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try))
        and not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
        and node.lineno < line <= (node.end_lineno or node.lineno)
        for node in ast.walk(tree)
    )


def _called_name(call: ast.Call) -> str:
    function = call.func
    if isinstance(function, ast.Attribute):
        return function.attr
    if isinstance(function, ast.Name):
        return function.id
    return ""


def _is_sys_argv(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "argv"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def _check_imports(tree: ast.Module, allowed: frozenset[str], review: ScriptReview) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        else:
            continue
        for module in modules:
            top = module.split(".")[0]
            if top not in allowed:
                review.add(
                    node.lineno,
                    f"imports {top!r}, which is neither the standard library nor torch: "
                    "declare its package in reproducer.requirements as name==version",
                )
