"""Where Markdown text is code to the site's renderer: fenced blocks and code spans.

Entry checks let code show markup (`<b>` in backticks is printed, not run), and page
filters keep code whole when they flatten or cut text; both must read code as
Python-Markdown with pymdownx.superfences does. Where that reading is uncertain the text
counts as prose, which can only make a check refuse more:

- a fence is code only when it opens with ``` or ~~~ (and a language) on a line of its
  own, indented by spaces, and every line up to a closing fence of the same characters
  at the same indentation is blank or indented at least as far. Any other line that
  starts like a fence is *broken*: the renderer might open a fence there that runs into
  the next field of the page and turns that field's code into markup;
- a code span is code only when every backtick run of the text pairs up (an opening run
  with the next run of the same length) within its paragraph, and none follows a
  backslash. A paragraph ends at a blank line and before any line that might start
  another block (a heading, quote, list item, rule, table row, tag or link definition);
  the renderer pairs runs within a block, so one stray backtick could pair differently
  there and uncover what looked like code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A line the renderer may read as a fence: after indentation or quote marks, ``` or ~~~.
FENCE_LIKE = re.compile(r"^[ \t>]*(?:`{3,}|~{3,})")
_OPENING_FENCE = re.compile(r"^( *)(`{3,}|~{3,})[ \t]*(?:\.?[\w#.+-]+)?[ \t]*$")
_BACKTICK_RUN = re.compile(r"`+")


@dataclass
class CodeReading:
    """Which parts of a text are certainly code, and the first broken fence line."""

    text: str
    fenced: list[bool]  # per line: inside a fenced block, fence lines included
    spans: list[tuple[int, int]]  # code spans as offsets into the text, backticks included
    broken_fence: int | None  # 0-based line that starts like a fence but is none
    line_offsets: list[int]  # where each line starts

    def masked(self, *, spans: bool) -> str:
        """The text with fenced lines (and, if asked, code spans) blanked out; offsets and
        line breaks stay where they were."""
        pieces, position = [], 0
        blanks = [
            (self.line_offsets[number], self.line_offsets[number + 1] - 1)
            for number, fenced in enumerate(self.fenced)
            if fenced
        ]
        if spans:
            blanks = sorted(blanks + self.spans)
        for start, end in blanks:
            pieces += [self.text[position:start], _blank(self.text[start:end])]
            position = end
        pieces.append(self.text[position:])
        return "".join(pieces)


def _blank(text: str) -> str:
    """Spaces for every character but line breaks."""
    return re.sub(r"[^\n]", " ", text)


def _leading_spaces(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _read_fences(lines: list[str]) -> tuple[list[bool], int | None]:
    """One pass, as superfences reads: an open fence takes every line until it closes or a
    line is indented less; a fence left open, or any other fence-like line, is broken."""
    fenced = [False] * len(lines)
    broken: int | None = None
    opened: tuple[int, int, str] | None = None  # line, indentation, fence
    for number, line in enumerate(lines):
        if opened is not None:
            start, indent, fence = opened
            if not line.strip():
                continue
            if _leading_spaces(line) < indent:
                broken = start if broken is None else broken
                opened = None
                continue
            if _leading_spaces(line) == indent and line[indent:].rstrip(" \t") == fence:
                fenced[start : number + 1] = [True] * (number + 1 - start)
                opened = None
            continue
        if not FENCE_LIKE.match(line):
            continue
        match = _OPENING_FENCE.match(line)
        if match is None or number == 0:
            # The first line of a field follows a list marker on some pages: no fence there.
            broken = number if broken is None else broken
            continue
        opened = (number, len(match.group(1)), match.group(2))
    if opened is not None and broken is None:
        broken = opened[0]
    return fenced, broken


# Lines that may start a block of their own even inside a paragraph (or that begin with
# a character that does in some context): a code span is never read across them.
_BLOCK_START = re.compile(r"^\s*(?:[#>\[!*+\-_=|<~]|\d+[.)])")


def code_spans(text: str) -> list[tuple[int, int]] | None:
    """The code spans of one paragraph, backticks included, as offsets into ``text``;
    None when a backtick run pairs with nothing or follows a backslash.

    Linear: each run is paired with the next run of the same length, found from a table
    built right to left.
    """
    runs = [(match.start(), match.end()) for match in _BACKTICK_RUN.finditer(text)]
    if any(start and text[start - 1] == "\\" for start, _ in runs):
        return None
    next_same: dict[int, int] = {}
    following: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        if length in following:
            next_same[index] = following[length]
        following[length] = index
    spans = []
    index = 0
    while index < len(runs):
        closing = next_same.get(index)
        if closing is None:
            return None
        spans.append((runs[index][0], runs[closing][1]))
        index = closing + 1
    return spans


def _paragraphs(lines: list[str], fenced: list[bool]) -> list[tuple[int, int]]:
    """Runs of lines ``[first, last)`` that the renderer might read as one paragraph."""
    paragraphs = []
    first: int | None = None
    for number, line in enumerate(lines):
        if fenced[number] or not line.strip():
            if first is not None:
                paragraphs.append((first, number))
            first = None
            continue
        if first is not None and _BLOCK_START.match(line):
            paragraphs.append((first, number))
            first = None
        if first is None:
            first = number
    if first is not None:
        paragraphs.append((first, len(lines)))
    return paragraphs


def read_code(text: str) -> CodeReading:
    """Read the fenced blocks and code spans of a Markdown text."""
    lines = text.split("\n")
    fenced, broken = _read_fences(lines)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    spans: list[tuple[int, int]] = []
    if "`" in text:
        for first, last in _paragraphs(lines, fenced):
            paragraph = "\n".join(lines[first:last])
            found = code_spans(paragraph)
            if found is None:  # one uncertain paragraph makes every span uncertain
                spans = []
                break
            spans += [(offsets[first] + start, offsets[first] + end) for start, end in found]
    return CodeReading(text, fenced, spans, broken, offsets)
