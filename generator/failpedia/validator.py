"""Turn parsed entry files into a checked Catalog, collecting every problem in one pass.

Checks each file against the model (types, unknown and missing fields, formats, raw HTML),
then the catalog as a whole: ids against folders, categories against the registry,
related links, signature patterns against the portable dialect and their own text, and
signatures claimed by two entries.
"""

from __future__ import annotations

import difflib
import gc
import re
import typing
from pathlib import Path
from typing import Any

from .catalog import Catalog, CatalogEntry
from .fields import is_model, model_fields, unwrap_optional
from .fixregion import FixRegionError, extract_fix_region
from .loader import (
    CATEGORIES_FILENAME,
    SourceFile,
    find_entry_files,
    find_misplaced_entry_files,
    read_yaml_file,
)
from .model import INVERSE_RELATION, Category, CategoryRegistry, Entry
from .patterns import PatternError, compile_pattern
from .problems import ProblemList, display_path
from .scaffold import PLACEHOLDER, SCHEMA_MODELINE
from .yamlsource import FieldPath, format_field_path

INVALID = object()
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`+")
_RAW_HTML = re.compile(r"<(?:/?[A-Za-z][A-Za-z0-9-]*(?:[\s/>]|$)|!--|\?|!\[CDATA\[)")
_CONTROL_CHARACTER = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_TYPE_NAMES = {str: "text", int: "an integer", list: "a list", dict: "a mapping"}


def _without_fenced_blocks(text: str) -> str:
    """Drop fenced code blocks, line by line (linear time, unclosed fences run to the end)."""
    kept = []
    fence = ""
    for line in text.split("\n"):
        match = _FENCE_LINE.match(line)
        if fence:
            closes = match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
            if closes and not line.strip().strip(fence[0]):
                fence = ""
            continue
        if match:
            fence = match.group(1)
            continue
        kept.append(line)
    return "\n".join(kept)


def _without_code_spans(text: str) -> str:
    """Drop inline code spans: a backtick run up to the next run of the same length."""
    runs = [(match.start(), match.end()) for match in _BACKTICKS.finditer(text)]
    next_same: dict[int, int] = {}
    following: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        if length in following:
            next_same[index] = following[length]
        following[length] = index
    pieces = []
    position = 0
    index = 0
    while index < len(runs):
        closing = next_same.get(index)
        if closing is None:
            index += 1
            continue
        pieces.append(text[position : runs[index][0]])
        position = runs[closing][1]
        index = closing + 1
    pieces.append(text[position:])
    return "".join(pieces)


def find_raw_html(text: str) -> str | None:
    """The first raw HTML tag in Markdown text, outside code spans and fenced blocks."""
    stripped = _without_code_spans(_without_fenced_blocks(text))
    match = _RAW_HTML.search(stripped)
    if match is None:
        return None
    return stripped[match.start() : match.start() + 20].split("\n")[0]


class _Converter:
    """Converts one document's values into model instances, recording problems."""

    def __init__(self, source: SourceFile, problems: ProblemList) -> None:
        self.source = source
        self.problems = problems
        self.failed = False

    def problem(self, path: FieldPath, message: str) -> None:
        self.failed = True
        line = self.source.document.line_of(path)
        self.problems.add(self.source.display, line, format_field_path(path), message)

    def convert(self, value: Any, tp: Any, metadata: dict[str, Any], path: FieldPath) -> Any:
        inner, optional = unwrap_optional(tp)
        if value is None:
            if optional:
                return None
            self.problem(path, f"is empty; expected {self.describe(inner)}")
            return INVALID
        tp = inner
        origin = typing.get_origin(tp)
        if origin is typing.Literal:
            choices = typing.get_args(tp)
            if self.is_placeholder(value, metadata, path):
                return INVALID
            if value not in choices:
                listed = ", ".join(repr(choice) for choice in choices)
                self.problem(path, f"must be one of {listed}, not {value!r}")
                return INVALID
            return value
        if origin is list:
            if not isinstance(value, list):
                self.problem(path, f"expected a list, got {self.type_name(value)}")
                return INVALID
            minimum = metadata.get("min_items") or 0
            if len(value) < minimum:
                self.problem(path, f"needs at least {minimum} item{'s' * (minimum > 1)}")
            (item_type,) = typing.get_args(tp)
            items = [
                self.convert(item, item_type, metadata, (*path, index))
                for index, item in enumerate(value)
            ]
            return [item for item in items if item is not INVALID]
        if is_model(tp):
            return self.convert_model(value, tp, path)
        if tp is str:
            return self.convert_text(value, metadata, path)
        if tp is int:
            return self.convert_int(value, metadata, path)
        raise TypeError(f"unsupported model type {tp!r}")  # a model change, not bad input

    def convert_model(self, value: Any, cls: type, path: FieldPath) -> Any:
        if not isinstance(value, dict):
            self.problem(path, f"expected a mapping of fields, got {self.type_name(value)}")
            return INVALID
        fields = {info.name: info for info in model_fields(cls)}
        for key in value:
            if key not in fields:
                hint = difflib.get_close_matches(str(key), list(fields), n=1)
                suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
                allowed = ", ".join(fields)
                self.problem((*path, str(key)), f"unknown field{suggestion}; allowed: {allowed}")
        arguments = {}
        for name, info in fields.items():
            if name not in value:
                if info.required:
                    description = info.metadata["description"]
                    self.problem((*path, name), f"missing required field: {description}")
                continue
            converted = self.convert(value[name], info.type, info.metadata, (*path, name))
            if converted is not INVALID:
                arguments[name] = converted
        if any(info.required and name not in arguments for name, info in fields.items()):
            return INVALID
        return cls(**arguments)

    def convert_text(self, value: Any, metadata: dict[str, Any], path: FieldPath) -> Any:
        if not isinstance(value, str):
            quote = " (put it in quotes)" if isinstance(value, (int, float, bool)) else ""
            self.problem(path, f"expected text, got {self.type_name(value)}{quote}")
            return INVALID
        if not value.strip():
            self.problem(path, "must not be empty")
            return INVALID
        if self.is_placeholder(value.strip(), metadata, path):
            return INVALID
        control = _CONTROL_CHARACTER.search(value)
        if control:
            self.problem(
                path,
                f"contains the control character {control.group()!r} (terminal colour codes?); "
                "remove it: logs are matched after colour codes are stripped",
            )
            return INVALID
        pattern = metadata.get("pattern")
        if pattern and not re.fullmatch(pattern, value):
            self.problem(path, f"{value!r} does not match the required format {pattern}")
            return INVALID
        limit = metadata.get("max_length")
        if limit and len(value) > limit:
            self.problem(path, f"is {len(value)} characters long; the limit is {limit}")
        if not metadata.get("verbatim"):
            tag = find_raw_html(value)
            if tag is not None:
                self.problem(
                    path,
                    f"raw HTML is not allowed ({tag!r}); use Markdown, or put code in backticks",
                )
        return value

    def is_placeholder(self, value: Any, metadata: dict[str, Any], path: FieldPath) -> bool:
        """A scaffold's TODO left in place: name the field and what it needs."""
        if value != PLACEHOLDER:
            return False
        self.problem(path, f"still the placeholder {PLACEHOLDER}: {metadata['description']}")
        return True

    def convert_int(self, value: Any, metadata: dict[str, Any], path: FieldPath) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(path, f"expected an integer, got {self.type_name(value)}")
            return INVALID
        low, high = metadata.get("minimum"), metadata.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            self.problem(path, f"must be between {low} and {high}, not {value}")
            return INVALID
        return value

    def check_duplicate_keys(self) -> None:
        for path, line in self.source.document.duplicate_keys:
            self.failed = True
            self.problems.add(
                self.source.display, line, format_field_path(path), "field is given twice"
            )

    @staticmethod
    def type_name(value: Any) -> str:
        if value is None:
            return "nothing"
        if isinstance(value, bool):
            return "true/false"
        if isinstance(value, (int, float)):
            return "a number"
        for kind, name in _TYPE_NAMES.items():
            if isinstance(value, kind):
                return name
        return type(value).__name__

    def describe(self, tp: Any) -> str:
        if typing.get_origin(tp) is list:
            return "a list"
        if is_model(tp):
            return "a mapping of fields"
        if typing.get_origin(tp) is typing.Literal:
            return "one of " + ", ".join(repr(choice) for choice in typing.get_args(tp))
        return _TYPE_NAMES.get(tp, "a value")


def convert_document(source: SourceFile, cls: type, problems: ProblemList) -> Any | None:
    """Convert a parsed file into ``cls``; None (with problems recorded) if anything is wrong."""
    converter = _Converter(source, problems)
    converter.check_duplicate_keys()
    result = converter.convert_model(source.document.value, cls, ())
    if converter.failed or result is INVALID:
        return None
    return result


def load_categories(entries_dir: Path, root: Path | None, problems: ProblemList) -> list[Category]:
    path = entries_dir / CATEGORIES_FILENAME
    if not path.is_file():
        problems.add(display_path(path, root), 0, "", "category registry is missing")
        return []
    source = read_yaml_file(path, root, problems)
    if source is None:
        return []
    registry = convert_document(source, CategoryRegistry, problems)
    if registry is None:
        return []
    seen: set[str] = set()
    for index, category in enumerate(registry.categories):
        if category.id in seen:
            line = source.document.line_of(("categories", index, "id"))
            problems.add(
                source.display, line, f"categories[{index}].id", f"duplicate id {category.id!r}"
            )
        seen.add(category.id)
    return registry.categories


def load_catalog(entries_dir: Path, root: Path | None = None) -> tuple[Catalog, ProblemList]:
    """Load and check every entry; the catalog holds only entries without problems."""
    # Thousands of parsed documents stay alive until the catalog is built; the cyclic
    # garbage collector would otherwise rescan them again and again while they pile up.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load_catalog(entries_dir.resolve(), root.resolve() if root else None)
    finally:
        if gc_was_enabled:
            gc.enable()


def _load_catalog(entries_dir: Path, root: Path | None) -> tuple[Catalog, ProblemList]:
    problems = ProblemList()
    if not entries_dir.is_dir():
        problems.add(display_path(entries_dir, root), 0, "", "entries folder does not exist")
        return Catalog([], []), problems
    categories = load_categories(entries_dir, root, problems)
    category_ids = {category.id for category in categories}
    for path in find_misplaced_entry_files(entries_dir):
        problems.add(
            display_path(path, root), 0, "",
            "entry files belong at entries/<category>/<id>/entry.yaml",
        )

    loaded: list[tuple[CatalogEntry, SourceFile]] = []
    known_ids: dict[str, str] = {}
    for path in find_entry_files(entries_dir):
        source = read_yaml_file(path, root, problems)
        folder_id = path.parent.name
        duplicate_of = known_ids.get(folder_id)
        if duplicate_of is not None:
            line = source.document.line_of(("id",)) if source else 0
            problems.add(
                display_path(path, root), line, "id",
                f"duplicate id {folder_id!r}: also used by {duplicate_of}",
            )
        else:
            known_ids[folder_id] = display_path(path, root)
        if source is None:
            continue
        entry = convert_document(source, Entry, problems)
        if entry is None:
            continue
        item = CatalogEntry(entry, path, source.display)
        if _check_entry(item, source, category_ids, problems) and duplicate_of is None:
            loaded.append((item, source))

    _check_links(loaded, known_ids, problems)
    _check_shared_signatures(loaded, problems)
    failed = {problem.path for problem in problems}
    catalog = Catalog(categories, [item for item, _ in loaded if item.display_path not in failed])
    return catalog, problems


def _check_entry(
    item: CatalogEntry, source: SourceFile, category_ids: set[str], problems: ProblemList
) -> bool:
    """Checks that need the file's location or compile its patterns; True if all pass."""
    before = len(problems)
    entry = item.entry
    line = source.document.line_of

    def problem(path: FieldPath, message: str) -> None:
        problems.add(source.display, line(path), format_field_path(path), message)

    if not source.text.startswith(SCHEMA_MODELINE):
        problems.add(
            source.display, 1, "",
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
    script_path = item.folder / entry.reproducer.script
    if not script_path.is_file():
        script = entry.reproducer.script
        problem(("reproducer", "script"), f"{script} not found in the entry folder")
    else:
        try:
            item.fix_code = extract_fix_region(script_path.read_text(encoding="utf-8"))
        except (FixRegionError, OSError, UnicodeDecodeError) as error:
            problem(("reproducer", "script"), f"{entry.reproducer.script}: {error}")
        first_code = entry.fix[0].code if entry.fix else None
        if item.fix_code and first_code and first_code.strip() != item.fix_code.strip():
            problem(
                ("fix", 0, "code"),
                f"differs from the fix region of {entry.reproducer.script}; the page shows "
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


def _check_links(
    loaded: list[tuple[CatalogEntry, SourceFile]], known_ids: dict[str, str], problems: ProblemList
) -> None:
    stated: dict[tuple[str, str], str] = {}
    for item, _ in loaded:
        for related in item.entry.related:
            stated[(item.entry.id, related.id)] = related.relation
    for item, source in loaded:
        for index, related in enumerate(item.entry.related):
            path: FieldPath = ("related", index, "id")
            where = (source.display, source.document.line_of(path), format_field_path(path))
            if related.id not in known_ids:
                hint = difflib.get_close_matches(related.id, list(known_ids), n=1)
                suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
                problems.add(*where, f"no entry with id {related.id!r}{suggestion}")
                continue
            back = stated.get((related.id, item.entry.id))
            if back is None:
                continue
            if INVERSE_RELATION[related.relation] != back:
                problems.add(
                    *where,
                    f"says {related.relation!r} but {related.id} says {back!r} back; "
                    f"expected {INVERSE_RELATION[related.relation]!r}",
                )


def _check_shared_signatures(
    loaded: list[tuple[CatalogEntry, SourceFile]], problems: ProblemList
) -> None:
    """A signature belongs to one entry: the same text or pattern twice is ambiguous."""
    owners: dict[tuple[str, str], str] = {}
    for item, source in loaded:
        for index, signature in enumerate(item.entry.signatures):
            keys = [("text", signature.text.strip())]
            if index < len(item.patterns):
                keys.append(("pattern", item.patterns[index].canonical))
            for field_name, key in keys:
                owner = owners.setdefault((field_name, key), item.entry.id)
                if owner != item.entry.id:
                    path: FieldPath = ("signatures", index, field_name)
                    problems.add(
                        source.display,
                        source.document.line_of(path),
                        format_field_path(path),
                        f"the same signature {field_name} is already in entry {owner!r}",
                    )
