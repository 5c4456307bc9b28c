"""The Markdown the generated regions are written in: code spans and table cells, so every
table escapes what it holds the same way."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence


def code(text: str) -> str:
    """``text`` as one code span, whatever backticks it holds."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def cell(text: str) -> str:
    """Text as one table cell: one line, its pipes escaped (code spans included, as GitHub
    reads tables)."""
    return " ".join(text.split()).replace("|", "\\|")


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A table of cells already written as Markdown (see ``cell``)."""
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return "\n".join(lines) + "\n"
