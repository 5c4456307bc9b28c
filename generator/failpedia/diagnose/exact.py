"""The exact check of a candidate line: where a signature's canonical pattern matches.

A canonical pattern usually starts with a long run of literal text. ``ExactPattern`` finds
that run with ``str.find`` and matches only the rest with a compiled regex, right after
it. The result is the span ``re.search`` gives for the whole pattern, but compiling is
cheaper: Python's regex parser takes one literal character at a time, and the rest is
often short, or shared by many patterns (a ``[0-9]+`` tail), and then compiled once.
``failpedia diagnose`` compiles a pattern the first time its probe fires on a line, while
the log is still being scanned on the other cores.
"""

from __future__ import annotations

import re

_SPECIAL = set(".^$*+?{}[]()|\\")
_QUANTIFIERS = set("*+?{")


def split_literal_prefix(canonical: str) -> tuple[str, str]:
    """``(prefix, rest)``: the literal text the pattern starts with, and the pattern that
    must match right after it. The prefix is empty where the pattern has a top-level
    alternation, starts with a group or class, or its first character is quantified."""
    if _has_top_level_alternation(canonical):
        return "", canonical
    literal: list[str] = []
    position = 0
    while position < len(canonical):
        char = canonical[position]
        if char == "\\":
            escaped = canonical[position + 1 : position + 2]
            if not escaped or escaped.isalnum() or escaped == "_":
                break  # \d, \b, \t, ...: not a plain literal
            token, width = escaped, 2
        elif char in _SPECIAL:
            break
        else:
            token, width = char, 1
        if canonical[position + width : position + width + 1] in _QUANTIFIERS:
            break  # the quantifier applies to this character: it belongs to the rest
        literal.append(token)
        position += width
    return "".join(literal), canonical[position:]


def _has_top_level_alternation(pattern: str) -> bool:
    depth, position, in_class = 0, 0, False
    while position < len(pattern):
        char = pattern[position]
        if char == "\\":
            position += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[position + 1 : position + 2] == "^":
                position += 1
            if pattern[position + 1 : position + 2] == "]":  # a leading ] is a member
                position += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
        position += 1
    return False


class ExactPattern:
    """A canonical pattern, compiled for the exact check (``re.ASCII``, as everywhere)."""

    __slots__ = ("prefix", "rest")

    def __init__(self, canonical: str) -> None:
        self.prefix, rest = split_literal_prefix(canonical)
        self.rest = re.compile(rest, re.ASCII)

    def search(self, text: str) -> tuple[int, int] | None:
        """The span of the pattern's first match in ``text``, as ``re.search`` finds it."""
        if not self.prefix:
            match = self.rest.search(text)
            return match.span() if match else None
        start = text.find(self.prefix)
        while start != -1:
            match = self.rest.match(text, start + len(self.prefix))
            if match:
                return start, match.end()
            start = text.find(self.prefix, start + 1)
        return None
