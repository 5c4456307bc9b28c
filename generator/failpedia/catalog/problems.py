"""Problems found in entries, reported as ``path:line: field.path: message``.

Every stage (loading, validating, rendering) collects problems instead of raising, so an
author sees all of them in one pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with one file, located as precisely as the input allows."""

    path: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        if self.field:
            return f"{where}: {self.field}: {self.message}"
        return f"{where}: {self.message}"


def display_path(path: Path, root: Path | None = None) -> str:
    """Show a path relative to the project root when it lies inside it."""
    if root is not None:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            pass
    return path.as_posix()


def _one_line(text: str) -> str:
    return text.replace("\r", "\\r").replace("\n", "\\n")


class ProblemList(list[Problem]):
    """Problems collected while processing one or more files."""

    def add(self, path: str, line: int, field: str, message: str) -> None:
        """Record a problem; line breaks are escaped so each problem stays on one line."""
        self.append(Problem(path, line, _one_line(field), _one_line(message)))

    def report(self) -> str:
        return "\n".join(str(problem) for problem in sorted(self))
