"""The table of an entry's fields, from the model (``catalog.model``): each field's path,
whether it is required, what type of value it takes and what it holds (the model's own
description), nested sections' fields under their section (``signatures[].text``)."""

from __future__ import annotations

import typing
from typing import Any

from failpedia.catalog.model_fields import is_model, model_fields, unwrap_optional
from failpedia.docgen.markdown import cell, code, table


def field_table(model: type) -> str:
    """The Markdown table of every field of ``model`` and of the sections it holds."""
    return table(("field", "required", "value", "what it holds"), _rows(model, ""))


def _rows(model: type, prefix: str) -> list[tuple[str, str, str, str]]:
    rows = []
    for info in model_fields(model):
        path = f"{prefix}{info.name}"
        inner, _ = unwrap_optional(info.type)
        required = "required" if info.required else _optional(info.default)
        value = _value(inner, info.metadata)
        rows.append((code(path), required, cell(value), cell(info.metadata["description"])))
        if typing.get_origin(inner) is list and is_model(typing.get_args(inner)[0]):
            rows.extend(_rows(typing.get_args(inner)[0], f"{path}[]."))
        elif is_model(inner):
            rows.extend(_rows(inner, f"{path}."))
    return rows


def _optional(default: Any) -> str:
    if default in (None, []):
        return "optional"
    shown = str(default).lower() if isinstance(default, bool) else default
    return f"optional (default {code(str(shown))})"


def _value(tp: Any, metadata: dict[str, Any]) -> str:
    """What a value of type ``tp`` looks like, in the words CONTRIBUTING.md uses."""
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{choice}`" for choice in typing.get_args(tp))
    if origin is list:
        (item,) = typing.get_args(tp)
        least = metadata.get("min_items") or 0
        bound = {0: "", 1: ", at least one"}.get(least, f", at least {least}")
        if is_model(item):
            return f"list of sections{bound}"
        return f"list{bound}, each {_value(item, metadata)}"
    if is_model(tp):
        return "section"
    if tp is bool:
        return "`true` or `false`"
    if tp is int:
        low, high = metadata.get("minimum"), metadata.get("maximum")
        return f"whole number, {low} to {high}" if low is not None else "whole number"
    if tp is str:
        if metadata.get("web_url"):
            return "`http(s)://` address"
        if metadata.get("pattern"):
            return f"text matching {code(metadata['pattern'])}"
        if metadata.get("verbatim"):
            return "text, shown verbatim"
        limit = metadata.get("max_length")
        return f"Markdown, at most {limit} characters" if limit else "Markdown"
    raise TypeError(f"no words for the type {tp!r}")  # a model change, not bad input
