"""Convert a parsed YAML document into the model's classes, recording every problem.

Checks each value against the model: types, unknown and missing fields, string formats,
list bounds, control characters, web addresses (``web_url``) and what Markdown text may
hold (``markdown_check``: no raw HTML, links only to the web and the site, no images from
elsewhere). Nothing here knows about folders or other entries; ``validate`` does the
checks that need them.
"""

from __future__ import annotations

import datetime
import difflib
import re
import typing
from typing import Any

from failpedia.catalog.entry_files import SourceFile
from failpedia.catalog.markdown_check import markdown_problems
from failpedia.catalog.model import PLACEHOLDER
from failpedia.catalog.model_fields import is_model, model_fields, unwrap_optional
from failpedia.catalog.problems import ProblemList
from failpedia.catalog.web_url import web_url_problem
from failpedia.catalog.yaml_source import FieldPath, format_field_path

INVALID = object()
_CONTROL_CHARACTER = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_TYPE_NAMES = {
    str: "text",
    int: "an integer",
    bool: "true or false",
    list: "a list",
    dict: "a mapping",
}


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
        if tp is bool:
            if not isinstance(value, bool):
                self.problem(path, f"expected true or false, got {self.type_name(value)}")
                return INVALID
            return value
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
            # YAML reads 1.10 as a number and 2026-12-07 as a date.
            quoted = (int, float, bool, datetime.date)
            quote = " (put it in quotes)" if isinstance(value, quoted) else ""
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
        if metadata.get("web_url"):
            reason = web_url_problem(value)
            if reason is not None:
                self.problem(path, f"{value!r} is not one well-formed http(s) address: {reason}")
                return INVALID
            return value
        pattern = metadata.get("pattern")
        if pattern and not re.fullmatch(pattern, value):
            self.problem(path, f"{value!r} does not match the required format {pattern}")
            return INVALID
        limit = metadata.get("max_length")
        if limit and len(value) > limit:
            self.problem(path, f"is {len(value)} characters long; the limit is {limit}")
        if not metadata.get("verbatim"):
            for message in markdown_problems(value):
                self.problem(path, message)
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
