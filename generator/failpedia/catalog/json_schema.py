"""Generate the JSON Schema that editors use to complete and check entry files.

The committed file (``entries/entry.schema.json``) is written by ``failpedia schema`` and a
test regenerates it to catch drift between it and the model.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import typing
from pathlib import Path
from typing import Any

from failpedia.catalog.model import CategoryRegistry, Entry
from failpedia.catalog.model_fields import is_model, model_fields, unwrap_optional
from failpedia.catalog.retired import RetiredRegistry

SCHEMA_FILENAMES: dict[str, type] = {
    "entry.schema.json": Entry,
    "categories.schema.json": CategoryRegistry,
    "retired.schema.json": RetiredRegistry,
}


def json_schema(root: type) -> dict[str, Any]:
    """JSON Schema (draft 2020-12) for a model class, nested classes under ``$defs``."""
    definitions: dict[str, Any] = {}
    body = _object_schema(root, definitions)
    definitions.pop(root.__name__, None)
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Failpedia {root.__name__.lower()}",
        **body,
    }
    if definitions:
        schema["$defs"] = dict(sorted(definitions.items()))
    return schema


def _object_schema(cls: type, definitions: dict[str, Any]) -> dict[str, Any]:
    properties = {}
    required = []
    for info in model_fields(cls):
        prop = _type_schema(info.type, info.metadata, definitions)
        prop = {"description": info.metadata["description"], **prop}
        if not info.required and info.default not in (None, []):
            prop["default"] = info.default
        properties[info.name] = prop
        if info.required:
            required.append(info.name)
    schema: dict[str, Any] = {
        "type": "object",
        "description": (cls.__doc__ or "").strip() or cls.__name__,
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def _type_schema(tp: Any, metadata: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    inner, optional = unwrap_optional(tp)
    if optional:
        return {"anyOf": [_type_schema(inner, metadata, definitions), {"type": "null"}]}
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return {"enum": list(typing.get_args(tp))}
    if origin is list:
        (item_type,) = typing.get_args(tp)
        schema: dict[str, Any] = {
            "type": "array",
            "items": _type_schema(item_type, metadata, definitions),
        }
        if metadata.get("min_items"):
            schema["minItems"] = metadata["min_items"]
        return schema
    if is_model(tp):
        if tp.__name__ not in definitions:
            definitions[tp.__name__] = {}
            definitions[tp.__name__] = _object_schema(tp, definitions)
        return {"$ref": f"#/$defs/{tp.__name__}"}
    if tp is str:
        schema = {"type": "string", "minLength": 1}
        if metadata.get("pattern"):
            schema["pattern"] = metadata["pattern"]
        if metadata.get("max_length"):
            schema["maxLength"] = metadata["max_length"]
        return schema
    if tp is int:
        schema = {"type": "integer"}
        if metadata.get("minimum") is not None:
            schema["minimum"] = metadata["minimum"]
        if metadata.get("maximum") is not None:
            schema["maximum"] = metadata["maximum"]
        return schema
    if tp is bool:
        return {"type": "boolean"}
    raise TypeError(f"no JSON Schema mapping for {tp!r}")  # a model change, not bad input


def schema_text(root: type) -> str:
    return json.dumps(json_schema(root), indent=2, ensure_ascii=False) + "\n"


def write_schemas(entries_dir: Path) -> list[Path]:
    """Write every published schema into the entries folder; return the files written.

    Each file is written beside its place and renamed over it, so whatever a pull request
    left there (a link to a file elsewhere, a FIFO) is replaced, never written through.
    """
    written = []
    for filename, root in SCHEMA_FILENAMES.items():
        path = entries_dir / filename
        descriptor, temporary = tempfile.mkstemp(dir=entries_dir, prefix=f".{filename}.")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(schema_text(root))
            os.chmod(temporary, 0o644)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        written.append(path)
    return written
