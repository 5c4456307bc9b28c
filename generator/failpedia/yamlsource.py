"""Parse a YAML document into plain values while remembering where each value came from.

The validator reports ``path:line: field.path: message``; PyYAML's ``safe_load`` throws the
positions away, so this module composes the node graph (C parser when available) and
builds the values itself, recording the line of every mapping key and sequence item.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml missing
    _Loader = yaml.SafeLoader

FieldPath = tuple[str | int, ...]


def format_field_path(path: FieldPath) -> str:
    """``('signatures', 0, 'pattern')`` -> ``signatures[0].pattern``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


@dataclass
class YamlDocument:
    """A parsed document: its value and the 1-based line of every field path in it."""

    value: Any
    lines: dict[FieldPath, int] = field(default_factory=dict)
    duplicate_keys: list[tuple[FieldPath, int]] = field(default_factory=list)

    def line_of(self, path: FieldPath) -> int:
        """Line of ``path``, or of its nearest ancestor that has one."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), 1)


class YamlSyntaxError(Exception):
    """The text is not YAML; carries the position the parser gave."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def parse_yaml(text: str) -> YamlDocument:
    """Parse one YAML document, keeping line numbers; raise YamlSyntaxError on bad YAML."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        document = YamlDocument(value=None)
        if node is not None:
            document.lines[()] = node.start_mark.line + 1
            document.value = _build(loader, node, (), document, set())
        return document
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else 1
        message = " ".join(filter(None, [error.context, error.problem])) or str(error)
        raise YamlSyntaxError(line, f"YAML syntax error: {message}") from None
    except yaml.YAMLError as error:
        raise YamlSyntaxError(1, f"YAML error: {error}") from None
    except YamlSyntaxError:
        raise
    except RecursionError:
        raise YamlSyntaxError(1, "YAML error: document nested too deeply") from None
    finally:
        loader.dispose()


def _build(
    loader: Any, node: yaml.Node, path: FieldPath, document: YamlDocument, seen: set[int]
) -> Any:
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
        # An alias makes the composer hand back a node it has already built; rebuilding it
        # each time lets a few lines expand exponentially ("billion laughs").
        if id(node) in seen:
            raise YamlSyntaxError(
                document.line_of(path), "YAML anchors and aliases are not supported in entries"
            )
        seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _build(loader, key_node, path, document, seen)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                key = str(key)
            child = (*path, key if isinstance(key, str) else str(key))
            line = key_node.start_mark.line + 1
            if key in result:
                document.duplicate_keys.append((child, line))
            document.lines[child] = line
            result[key] = _build(loader, value_node, child, document, seen)
        return result
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item_node in enumerate(node.value):
            child = (*path, index)
            document.lines[child] = item_node.start_mark.line + 1
            items.append(_build(loader, item_node, child, document, seen))
        return items
    return loader.construct_object(node, deep=True)
