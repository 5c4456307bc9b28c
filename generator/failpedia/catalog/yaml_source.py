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


MAX_DEPTH = 200


def _check_depth(text: str) -> None:
    """Refuse very deep nesting before composing: libyaml's composer recurses in C and
    overflows the stack (a crash, not an exception) at tens of thousands of levels.

    Flow brackets and ``- `` are the only cheap ways to nest deeply (block mappings need
    ever wider indentation), so files with few of them skip the event scan.
    """
    if text.count("[") + text.count("{") + text.count("- ") <= MAX_DEPTH:
        return
    depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else 0
                raise YamlSyntaxError(line, f"YAML nested more than {MAX_DEPTH} levels deep")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _error_line(error: yaml.MarkedYAMLError, text: str) -> int:
    """The most useful line for a parser error: where an unclosed construct began when the
    parser only noticed at the end of the file, else where it noticed."""
    last_line = text.count("\n") + 1
    mark = error.problem_mark
    if mark is None or (error.context_mark is not None and mark.index >= len(text)):
        mark = error.context_mark or mark
    line = mark.line + 1 if mark is not None else 1
    return min(line, last_line)


def parse_yaml(text: str) -> YamlDocument:
    """Parse one YAML document, keeping line numbers; raise YamlSyntaxError on bad YAML."""
    loader = _Loader(text)
    try:
        _check_depth(text)
        node = loader.get_single_node()
        document = YamlDocument(value=None)
        if node is not None:
            document.lines[()] = node.start_mark.line + 1
            document.value = _build(loader, node, (), document, set())
        return document
    except yaml.MarkedYAMLError as error:
        message = " ".join(filter(None, [error.context, error.problem])) or str(error)
        raise YamlSyntaxError(_error_line(error, text), f"YAML syntax error: {message}") from None
    except yaml.reader.ReaderError as error:
        line = text[: error.position].count("\n") + 1
        character = error.character if isinstance(error.character, str) else chr(error.character)
        raise YamlSyntaxError(
            line, f"YAML syntax error: the character {character!r} is not allowed in YAML"
        ) from None
    except yaml.YAMLError as error:
        raise YamlSyntaxError(1, f"YAML error: {' '.join(str(error).split())}") from None
    except YamlSyntaxError:
        raise
    except RecursionError:
        raise YamlSyntaxError(1, "YAML error: document nested too deeply") from None
    finally:
        loader.dispose()


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _build(
    loader: Any, node: yaml.Node, path: FieldPath, document: YamlDocument, seen: set[int]
) -> Any:
    # An alias makes the composer hand back a node it has already built; rebuilding it each
    # time lets a few lines expand exponentially ("billion laughs"), and one long text used
    # a hundred thousand times costs as much to check.
    if id(node) in seen:
        raise YamlSyntaxError(
            document.line_of(path), "YAML anchors and aliases are not supported in entries"
        )
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        # Merge keys are refused before PyYAML expands them: its flatten_mapping copies every
        # merged mapping into each one that merges it, exponentially when merges nest, and
        # entries never need them.
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                raise YamlSyntaxError(
                    key_node.start_mark.line + 1,
                    "YAML merge keys (<<) are not supported in entries",
                )
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
    try:
        return loader.construct_object(node, deep=True)
    except yaml.YAMLError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError):
        # Explicit tags (`!!int abc`, `!!timestamp x`) reach constructors that raise plain
        # Python errors for values they cannot read.
        kind = str(node.tag).rsplit(":", 1)[-1]
        raise YamlSyntaxError(
            node.start_mark.line + 1, f"YAML value {node.value!r} is not a valid {kind}"
        ) from None
