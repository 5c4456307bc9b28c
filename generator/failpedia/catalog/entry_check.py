"""Check one entry file on its own: parse it, convert it against the model, and run the
checks that need only its folder, its reproducer and the category registry (id and
category against the folders, the fix region, signature patterns against the dialect
and their own text). ``validate`` adds the checks across entries.

What one file's check reads besides the file itself (its reproducer) is recorded, so a
cached result can tell when it no longer holds (``entry_cache``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from failpedia.catalog.catalog import CatalogEntry
from failpedia.catalog.convert import convert_document
from failpedia.catalog.entry_files import SourceFile, read_yaml_file
from failpedia.catalog.model import SCHEMA_MODELINE, Entry
from failpedia.catalog.problems import Problem, ProblemList
from failpedia.catalog.regions import FixRegionError, extract_fix_region
from failpedia.catalog.yaml_source import FieldPath, format_field_path
from failpedia.signatures.dialect import PatternError, compile_pattern


def digest(data: bytes | None) -> str:
    """A short content digest; ``"missing"`` for a file that could not be read."""
    return "missing" if data is None else hashlib.blake2b(data, digest_size=16).hexdigest()


def file_digest(path: Path) -> str:
    try:
        return digest(path.read_bytes())
    except OSError:
        return digest(None)


@dataclass(frozen=True)
class CheckedFile:
    """What checking one entry file on its own found.

    ``item`` is the converted entry, kept even when a later check failed (a draft's page
    shows what it can); ``passed`` says whether every check passed. ``inputs`` are the
    other files the check read, with their digests when it read them.
    """

    item: CatalogEntry | None
    source: SourceFile | None
    problems: tuple[Problem, ...]
    passed: bool
    inputs: tuple[tuple[Path, str], ...]


def check_entry_file(
    path: Path, data: bytes | None, root: Path | None, category_ids: frozenset[str]
) -> CheckedFile:
    """Parse, convert and check ``path`` (whose bytes are ``data`` when already read)."""
    problems = ProblemList()
    source = read_yaml_file(path, root, problems, data)
    if source is None:
        return CheckedFile(None, None, tuple(problems), False, ())
    entry = convert_document(source, Entry, problems)
    if entry is None:
        return CheckedFile(None, source, tuple(problems), False, ())
    item = CatalogEntry(entry, path, source.display)
    script_path = item.folder / entry.reproducer.script
    script: bytes | OSError | None = None
    try:
        script = script_path.read_bytes() if script_path.is_file() else None
    except OSError as error:
        script = error
    script_digest = digest(script if isinstance(script, bytes) else None)
    item.source_key = digest(source.text.encode("utf-8")) + script_digest
    passed = _check_entry(item, source, script, category_ids, problems)
    return CheckedFile(item, source, tuple(problems), passed, ((script_path, script_digest),))


def _check_entry(
    item: CatalogEntry,
    source: SourceFile,
    script: bytes | OSError | None,
    category_ids: frozenset[str],
    problems: ProblemList,
) -> bool:
    """Checks that need the file's location or compile its patterns; True if all pass."""
    before = len(problems)
    entry = item.entry
    line = source.document.line_of

    def problem(path: FieldPath, message: str) -> None:
        problems.add(source.display, line(path), format_field_path(path), message)

    if not source.text.startswith(SCHEMA_MODELINE):
        problems.add(
            source.display,
            1,
            "",
            f"the first line must be `{SCHEMA_MODELINE}`, so that editors check the file",
        )
    if entry.id != item.folder.name:
        problem(("id",), f"{entry.id!r} must equal the folder name {item.folder.name!r}")
    if entry.category != item.folder.parent.name:
        problem(
            ("category",),
            f"{entry.category!r} must equal the category folder {item.folder.parent.name!r}",
        )
    if category_ids and entry.category not in category_ids:
        known = ", ".join(sorted(category_ids))
        problem(("category",), f"unknown category {entry.category!r}; known: {known}")
    script_name = entry.reproducer.script
    if script is None:
        problem(("reproducer", "script"), f"{script_name} not found in the entry folder")
    elif isinstance(script, OSError):
        problem(("reproducer", "script"), f"{script_name}: {script}")
    else:
        try:
            # Universal newlines, as reading it as text would give.
            text = script.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
            item.fix_code = extract_fix_region(text)
        except (FixRegionError, UnicodeDecodeError) as error:
            problem(("reproducer", "script"), f"{script_name}: {error}")
        first_code = entry.fix[0].code if entry.fix else None
        if item.fix_code and first_code and first_code.strip() != item.fix_code.strip():
            problem(
                ("fix", 0, "code"),
                f"differs from the fix region of {script_name}; the page shows "
                "the region (the code that was proved), so make them equal or leave it out",
            )
    for index, signature in enumerate(entry.signatures):
        path: FieldPath = ("signatures", index, "pattern")
        try:
            compiled = compile_pattern(signature.pattern)
        except PatternError as error:
            problem(path, str(error))
            continue
        if not any(compiled.search(text_line) for text_line in signature.text.splitlines()):
            problem(path, "does not match any line of its own signature text")
        item.patterns.append(compiled)
    for index, related in enumerate(entry.related):
        if related.id == entry.id:
            problem(("related", index, "id"), "an entry cannot be related to itself")
    return len(problems) == before
