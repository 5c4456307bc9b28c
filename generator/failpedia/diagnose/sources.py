"""Where log bytes come from: files, gzip files, standard input, per-rank log folders.

A folder is read recursively in name order (torchrun's ``--log-dir`` keeps one folder per
local rank: ``<run>/attempt_0/3/stderr.log``); a file's rank comes from such a folder or
from a name like ``rank3.log``, and a rank prefix on a line overrides it. Gzip is
recognised by its magic bytes, whatever the file is called. Files that look binary are
skipped; a file or folder inside a folder given that cannot be read is a problem, as a
named one is.
"""

from __future__ import annotations

import gzip
import os
import re
import stat
import sys
import zlib
from pathlib import Path
from types import ModuleType
from typing import BinaryIO, NamedTuple, cast

from failpedia.signatures import line_rules

GZIP_MAGIC = b"\x1f\x8b"
SNIFF_BYTES = 8192
RANK_IN_NAME = re.compile(line_rules.RANK_IN_NAME, re.IGNORECASE | re.ASCII)

_gzip_module: ModuleType
# What reading a damaged gzip file raises: a cut-off file, a bad header or checksum, a
# corrupt deflate stream (ISA-L's own error is not an OSError).
DECOMPRESS_ERRORS: tuple[type[BaseException], ...]
try:  # ISA-L's igzip decompresses three times faster than zlib
    from isal import igzip as _gzip_module
    from isal.isal_zlib import error as _isal_error

    # isal types its error as an instance; it is the exception class.
    DECOMPRESS_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error, cast(type, _isal_error))
except ImportError:  # pragma: no cover - isal ships wheels for the common platforms
    _gzip_module = gzip
    DECOMPRESS_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


class InputError(Exception):
    """An input that cannot be read; the message names it and says why."""


class LogInput(NamedTuple):
    """One log to read: its display name, the rank its location implies, how to open it."""

    name: str
    rank: str | None
    path: Path | None  # None for standard input

    @property
    def rereadable(self) -> bool:
        return self.path is not None


def rank_from_path(path: Path) -> str | None:
    match = RANK_IN_NAME.search(path.name)
    if match:
        return str(int(match.group(1)))
    parent = path.parent.name
    return str(int(parent)) if parent.isdigit() else None


def _looks_binary(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
    return not head.startswith(GZIP_MAGIC) and b"\0" in head


def _folder_files(folder: Path) -> list[tuple[Path, str | None]]:
    """The regular files below ``folder``, hidden ones left out, each with None, or with
    the problem that a folder that cannot be listed or a link that leads nowhere is, as a
    named file would be; in name order. Links to folders are not followed."""
    found: list[tuple[Path, str | None]] = []

    def unlistable(error: OSError) -> None:
        found.append((Path(error.filename), f"cannot read: {error.strerror}"))

    for parent, folders, names in os.walk(folder, onerror=unlistable):
        folders[:] = [name for name in folders if not name.startswith(".")]
        for name in names:
            if name.startswith("."):
                continue
            item = Path(parent, name)
            try:
                if stat.S_ISREG(item.stat().st_mode):  # through a link, too
                    found.append((item, None))
            except OSError as error:
                found.append((item, f"cannot read: {error.strerror}"))
    return sorted(found, key=lambda pair: pair[0])


def collect_inputs(arguments: list[str]) -> tuple[list[LogInput], list[str]]:
    """Expand the command line into inputs; problems are returned, not raised."""
    inputs: list[LogInput] = []
    problems: list[str] = []
    for argument in arguments or ["-"]:
        if argument == "-":
            inputs.append(LogInput("<stdin>", None, None))
            continue
        path = Path(argument)
        if path.is_dir():
            for item, problem in _folder_files(path):
                if problem is not None:
                    problems.append(f"{item}: {problem}")
                    continue
                try:
                    if _looks_binary(item):
                        continue
                except OSError as error:
                    problems.append(f"{item}: cannot read: {error.strerror}")
                    continue
                inputs.append(LogInput(str(item), rank_from_path(item), item))
        elif path.is_file():
            inputs.append(LogInput(str(path), rank_from_path(path), path))
        elif path.exists():
            problems.append(f"{argument}: not a regular file or folder")
        else:
            problems.append(f"{argument}: no such file or folder")
    return inputs, problems


def open_input(log: LogInput) -> BinaryIO:
    """A binary stream of the log's text, decompressed where it is gzip."""
    try:
        raw: BinaryIO = sys.stdin.buffer if log.path is None else log.path.open("rb")
    except OSError as error:
        raise InputError(f"{log.name}: cannot read: {error.strerror}") from None
    head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
    if head == GZIP_MAGIC:
        decompressed: BinaryIO = _gzip_module.GzipFile(fileobj=raw, mode="rb")
        return decompressed
    return raw
