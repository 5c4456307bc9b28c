"""Marked regions of the project's Markdown documents, each written by ``failpedia docs``
between its two markers (as Ruff's ``generate_all`` writes its documentation):

    <!-- begin: failpedia docs commands -->
    ...
    <!-- end: failpedia docs commands -->

Writing replaces only what lies between the markers; checking names each region whose
text differs from what would be written, and the file and line where it starts.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_MARKER = re.compile(r"^<!-- (begin|end): failpedia docs (?P<name>[a-z][a-z -]*[a-z]) -->$")


@dataclass(frozen=True)
class Region:
    """One generated region: the document it lives in, its name, what it is written from,
    and its text."""

    document: str
    name: str
    source: str
    text: str


def begin_marker(name: str) -> str:
    return f"<!-- begin: failpedia docs {name} -->"


def end_marker(name: str) -> str:
    return f"<!-- end: failpedia docs {name} -->"


class RegionError(ValueError):
    """A document whose markers cannot be read: ``path:line: message``."""


@dataclass(frozen=True)
class Outcome:
    """What writing or checking one document found."""

    document: str
    stale: tuple[str, ...]  # ``path:line: message`` for each region out of date
    written: bool


def update(root: Path, regions: Iterable[Region], *, check: bool) -> list[Outcome]:
    """Check (``check``) or rewrite every document's regions; raise ``RegionError`` for a
    document that is missing, lacks a region's markers or holds one it should not."""
    by_document: dict[str, list[Region]] = {}
    for region in regions:
        by_document.setdefault(region.document, []).append(region)
    # Every document is read and checked before any is written: a bad marker in one leaves
    # all of them as they were.
    planned = []
    for document, wanted in by_document.items():
        path = root / document
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise RegionError(f"{document}: cannot read it: {error}") from None
        new_text, stale = _replace(document, text, wanted)
        planned.append((path, document, new_text != text, new_text, stale))
    outcomes = []
    for path, document, changed, new_text, stale in planned:
        if changed and not check:
            _write(path, new_text)
        outcomes.append(Outcome(document, tuple(stale), changed and not check))
    return outcomes


def _replace(document: str, text: str, regions: list[Region]) -> tuple[str, list[str]]:
    lines = text.splitlines(keepends=True)
    spans = _spans(document, lines)
    wanted = {region.name: region for region in regions}
    for name, (begin, _) in spans.items():
        if name not in wanted:
            raise RegionError(
                f"{document}:{begin + 1}: no region is called {name!r}; "
                f"`failpedia docs` writes {', '.join(sorted(wanted))}"
            )
    stale = []
    # From the last region up, so the line numbers of those above stay as they were.
    for region in sorted(regions, key=lambda region: -spans.get(region.name, (-1, -1))[0]):
        if region.name not in spans:
            raise RegionError(
                f"{document}: has no region {region.name!r} ({region.source}); put "
                f"{begin_marker(region.name)} and {end_marker(region.name)} on lines of "
                "their own where it belongs, then run `failpedia docs`"
            )
        begin, end = spans[region.name]
        body = ["\n", *region.text.splitlines(keepends=True), "\n"]
        if lines[begin + 1 : end] != body:
            stale.append(
                f"{document}:{begin + 1}: the region {region.name!r} is out of date with "
                f"{region.source}; run `failpedia docs` to rewrite it"
            )
            lines[begin + 1 : end] = body
    return "".join(lines), sorted(stale, key=_line_number)


def _spans(document: str, lines: list[str]) -> dict[str, tuple[int, int]]:
    """Each region's begin and end marker lines (0-based)."""
    spans: dict[str, tuple[int, int]] = {}
    open_name: str | None = None
    open_line = 0
    for number, line in enumerate(lines):
        match = _MARKER.match(line.strip())
        if not match:
            if "failpedia docs" in line and line.lstrip().startswith("<!--"):
                raise RegionError(
                    f"{document}:{number + 1}: a marker reads "
                    f"{begin_marker('NAME')} or {end_marker('NAME')}"
                )
            continue
        kind, name = match.group(1), match.group("name")
        if kind == "begin":
            if open_name is not None:
                raise RegionError(
                    f"{document}:{number + 1}: {name!r} begins inside {open_name!r} "
                    f"(line {open_line + 1}); end that region first"
                )
            if name in spans:
                raise RegionError(f"{document}:{number + 1}: a second region {name!r}")
            open_name, open_line = name, number
        elif name != open_name:
            raise RegionError(f"{document}:{number + 1}: {name!r} ends, but never began here")
        else:
            spans[name] = (open_line, number)
            open_name = None
    if open_name is not None:
        raise RegionError(
            f"{document}:{open_line + 1}: {open_name!r} never ends; add {end_marker(open_name)}"
        )
    return spans


def _line_number(message: str) -> int:
    return int(message.split(":")[1])


def _write(path: Path, text: str) -> None:
    """Write beside the file and rename over it: a document is never half-written."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, path.stat().st_mode & 0o777)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
