"""Introspection of the model classes, shared by the validator and the JSON Schema writer."""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FieldInfo:
    name: str
    type: Any
    required: bool
    default: Any
    metadata: dict[str, Any]


@functools.cache
def model_fields(cls: type) -> tuple[FieldInfo, ...]:
    """The fields of a model class with resolved types, in declaration order."""
    hints = typing.get_type_hints(cls)
    result = []
    for item in dataclasses.fields(cls):
        required = (
            item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING
        )
        if item.default_factory is not dataclasses.MISSING:
            default: Any = item.default_factory()
        elif item.default is not dataclasses.MISSING:
            default = item.default
        else:
            default = None
        metadata = dict(item.metadata)
        result.append(FieldInfo(item.name, hints[item.name], required, default, metadata))
    return tuple(result)


def unwrap_optional(tp: Any) -> tuple[Any, bool]:
    """``X | None`` -> (X, True); anything else -> (tp, False)."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(tp) if arg is not type(None)]
        if len(args) == 1:
            return args[0], True
    return tp, False


def is_model(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)
