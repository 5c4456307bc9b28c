"""Check one entry file on its own: read it (``read_bounded``), parse it, convert it
against the model, and run the checks that need only its folder, its reproducer, the
category registry and the names the site reserves (id and category against the folders
and the reserved names, the reproducer against the proof contract, signature patterns
against the dialect and their own text, signature texts without machine paths, release
ranges against their own signature (``release_rules``) and the wordings that replace them
(``release_history``), the evidence of an entry documented from reports).
``validate`` adds the checks across entries.

What one file's check reads besides the file itself (its reproducer) is recorded, so a
cached result can tell when it no longer holds (``entry_cache``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from failpedia.catalog.bounded_read import RefusedFile, read_bounded
from failpedia.catalog.catalog import CatalogEntry
from failpedia.catalog.convert import convert_document
from failpedia.catalog.entry_files import MAX_FILE_BYTES, SourceFile, read_yaml_file
from failpedia.catalog.evidence_rules import check_proof_source
from failpedia.catalog.model import SCHEMA_MODELINE, Entry
from failpedia.catalog.problems import Problem, ProblemList
from failpedia.catalog.regions import CHECK, FIX, RegionError, find_region
from failpedia.catalog.release_history import check_release_history
from failpedia.catalog.release_rules import check_release_ranges
from failpedia.catalog.reproducer_rules import review_script
from failpedia.catalog.signature_rules import (
    check_sightings,
    check_signature_texts,
    thread_address,
)
from failpedia.catalog.yaml_source import FieldPath, format_field_path
from failpedia.signatures.dialect import PatternError, compile_pattern
from failpedia.signatures.line_rules import LINE_CAP


def digest(data: bytes | None) -> str:
    """A short content digest; ``"missing"`` for a file that could not be read."""
    return "missing" if data is None else hashlib.blake2b(data, digest_size=16).hexdigest()


def read_checked(path: Path, within: Path) -> bytes | RefusedFile:
    """The bytes of a file an entry brings, read as every check reads it, or why not."""
    try:
        return read_bounded(path, within=within, limit=MAX_FILE_BYTES)
    except RefusedFile as refused:
        return refused


def outcome_digest(outcome: bytes | RefusedFile) -> str:
    """What reading a file gave: its content's digest, or the reason it was refused."""
    if isinstance(outcome, RefusedFile):
        return "refused: " + outcome.message
    return digest(outcome)


def reserved_problem(value: str, reserved: dict[str, str]) -> str | None:
    """The problem with an id the site already uses for something else, if it does."""
    if value not in reserved:
        return None
    return f"{value!r} is reserved: the site already uses that name for {reserved[value]}"


@dataclass(frozen=True)
class EntryChecks:
    """What checking one entry needs to know about the others and the site (hashable: it
    is part of the key of a cached check)."""

    entries_dir: Path
    category_ids: frozenset[str]
    reserved: tuple[tuple[str, str], ...]  # names ids must not take, and what uses them
    # False for the quick check the commands that only read the index run in a checkout:
    # the reproducer's regions are read, its proof contract is left to ``validate``.
    review_reproducer: bool = True

    @property
    def reserved_names(self) -> dict[str, str]:
        return dict(self.reserved)


@dataclass(frozen=True)
class CheckedFile:
    """What checking one entry file on its own found.

    ``item`` is the converted entry, kept even when a later check failed (a draft's page
    shows what it can); ``passed`` says whether every check passed. ``inputs`` are the
    other files the check read, with the digest of what reading them gave.
    """

    item: CatalogEntry | None
    source: SourceFile | None
    problems: tuple[Problem, ...]
    passed: bool
    inputs: tuple[tuple[Path, str], ...]


def check_entry_file(
    path: Path, data: bytes | None, root: Path | None, checks: EntryChecks
) -> CheckedFile:
    """Parse, convert and check ``path`` (whose bytes are ``data`` when already read with
    ``read_bounded``; when None it is read here, and a refusal is the problem)."""
    problems = ProblemList()
    source = read_yaml_file(path, root, problems, within=checks.entries_dir, data=data)
    if source is None:
        return CheckedFile(None, None, tuple(problems), False, ())
    entry = convert_document(source, Entry, problems)
    if entry is None:
        return CheckedFile(None, source, tuple(problems), False, ())
    item = CatalogEntry(entry, path, source.display)
    if entry.reproducer is None:
        item.source_key = digest(source.text.encode("utf-8"))
        passed = _check_entry(item, source, None, checks, problems)
        return CheckedFile(item, source, tuple(problems), passed, ())
    script_path = item.folder / entry.reproducer.script
    script = read_checked(script_path, checks.entries_dir)
    script_digest = outcome_digest(script)
    item.source_key = digest(source.text.encode("utf-8")) + script_digest
    passed = _check_entry(item, source, script, checks, problems)
    return CheckedFile(item, source, tuple(problems), passed, ((script_path, script_digest),))


def _check_entry(
    item: CatalogEntry,
    source: SourceFile,
    script: bytes | RefusedFile | None,
    checks: EntryChecks,
    problems: ProblemList,
) -> bool:
    """Checks that need the file's location or compile its patterns; True if all pass."""
    category_ids = checks.category_ids
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
    taken = reserved_problem(entry.id, checks.reserved_names)
    if taken is not None:
        problem(("id",), taken)
    if entry.category != item.folder.parent.name:
        problem(
            ("category",),
            f"{entry.category!r} must equal the category folder {item.folder.parent.name!r}",
        )
    if category_ids and entry.category not in category_ids:
        known = ", ".join(sorted(category_ids))
        problem(("category",), f"unknown category {entry.category!r}; known: {known}")
    script_name = entry.reproducer.script if entry.reproducer else ""
    if script is None:
        pass  # no reproducer: ``check_proof_source`` says what the entry needs instead
    elif isinstance(script, RefusedFile):
        if script.missing:
            problem(("reproducer", "script"), f"{script_name} not found in the entry folder")
        else:
            problem(("reproducer", "script"), f"{script_name}: {script.message}")
    elif checks.review_reproducer:
        _check_script(item, script, problem)
    else:
        _read_regions(item, script)
    origins = {thread_address(reference.url) for reference in entry.references}
    if entry.evidence is not None:
        origins |= {thread_address(report.url) for report in entry.evidence.reports}
    check_release_history(entry, problem)
    for index, signature in enumerate(entry.signatures):
        check_release_ranges(signature, index, problem)
        path: FieldPath = ("signatures", index, "pattern")
        try:
            compiled = compile_pattern(signature.pattern)
        except PatternError as error:
            problem(path, str(error))
            continue
        # Matched as a log line is: on its first LINE_CAP characters.
        text_lines = signature.text.splitlines()
        if not any(compiled.search(text_line[:LINE_CAP]) for text_line in text_lines):
            capped = any(len(text_line) > LINE_CAP for text_line in text_lines)
            problem(
                path,
                "does not match any line of its own signature text"
                + (
                    f" (within the first {LINE_CAP} characters of a line, as logs are matched)"
                    if capped
                    else ""
                ),
            )
        item.patterns.append(compiled)
        check_sightings(signature, index, compiled, origins, problem)
    for index, related in enumerate(entry.related):
        if related.id == entry.id:
            problem(("related", index, "id"), "an entry cannot be related to itself")
    check_proof_source(item, problem)
    check_signature_texts(item, source, problems)
    return len(problems) == before


def _read_regions(item: CatalogEntry, code: bytes) -> None:
    """The reproducer's fix and check regions, without reviewing the script."""
    try:
        text = code.decode("utf-8")
        item.fix_code = find_region(text, FIX).code
        item.check_code = find_region(text, CHECK).code
    except (UnicodeDecodeError, RegionError):
        pass  # ``validate`` says why


def _check_script(
    item: CatalogEntry, code: bytes, problem: Callable[[FieldPath, str], None]
) -> None:
    """The reproducer against the proof contract (``reproducer_rules``); keeps its regions."""
    entry = item.entry
    assert entry.reproducer is not None  # called only for an entry with a reproducer
    script = entry.reproducer.script
    try:
        text = code.decode("utf-8")
    except UnicodeDecodeError as error:
        problem(("reproducer", "script"), f"{script}: not UTF-8 ({error.reason})")
        return
    siblings = frozenset(path.stem for path in item.folder.glob("*.py"))
    declared = [*entry.reproducer.requirements, *entry.reproducer.private_requirements]
    review = review_script(text, declared, siblings)
    item.fix_code, item.check_code = review.fix_code, review.check_code
    for found in review.problems:
        where = f"{script}:{found.line}" if found.line else script
        problem(("reproducer", "script"), f"{where}: {found.message}")
    first_code = entry.fix[0].code if entry.fix else None
    if item.fix_code and first_code and first_code.strip() != item.fix_code.strip():
        problem(
            ("fix", 0, "code"),
            f"differs from the fix region of {script}; the page shows the region (the code "
            "that was proved), so make them equal or leave it out",
        )
