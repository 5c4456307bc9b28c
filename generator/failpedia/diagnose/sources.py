"""Where log bytes come from: files, gzip files, standard input, per-rank log folders.

A folder is read recursively in name order (torchrun's ``--log-dir`` keeps one folder per
local rank: ``<run>/attempt_0/3/stderr.log``); a file's rank comes from such a folder or
from a name like ``rank3.log``, and a rank prefix on a line overrides it. Gzip is
recognised by its magic bytes, whatever the file is called. Files in a folder that look
binary are skipped, each named (``skipped``); a file or folder inside a folder given that
cannot be read is a problem, as a named one is.

A damaged gzip file (cut short by an interrupted copy or a node that died writing it, a
changed byte, other bytes after it) is read up to the damage, every byte of text before
it handed over, and only then is the damage raised (``GzipDamage``), naming where and
what it is: ``GzipReader`` decodes the members itself rather than through ``gzip``, whose
reads lose what they decompressed when they fail.
"""

from __future__ import annotations

import io
import os
import re
import stat
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, cast

from failpedia.signatures import line_rules

GZIP_MAGIC = b"\x1f\x8b"
SNIFF_BYTES = 8192
RANK_IN_NAME = re.compile(line_rules.RANK_IN_NAME, re.IGNORECASE | re.ASCII)
RAW_PIECE = 64 << 10  # compressed bytes read at a time
MAX_OUTPUT = 256 << 10  # text one decoding step yields at most
RECOVER_PIECE = 4096  # compressed bytes decoded again at a time, to find the damage
TRAILER = struct.Struct("<II")  # a gzip member's CRC-32 and size (mod 2**32)
FEXTRA, FNAME, FCOMMENT, FHCRC = 4, 8, 16, 2

_new_decoder: Callable[..., Any]
_crc32: Callable[[bytes, int], int]
# What decoding damaged deflate data raises (ISA-L's own error is not a zlib.error).
_DECODE_ERRORS: tuple[type[BaseException], ...]
try:  # ISA-L decompresses three times faster than zlib
    from isal import isal_zlib

    _new_decoder, _crc32 = isal_zlib.decompressobj, isal_zlib.crc32
    # isal types its error as an instance; it is the exception class.
    _DECODE_ERRORS = (zlib.error, cast(type, isal_zlib.error))
except ImportError:  # pragma: no cover - isal ships wheels for the common platforms
    _new_decoder, _crc32 = zlib.decompressobj, zlib.crc32
    _DECODE_ERRORS = (zlib.error,)


class GzipDamage(Exception):
    """Where and how a gzip file is damaged; raised once the text before it was read."""


# What reading a damaged gzip file raises.
DECOMPRESS_ERRORS: tuple[type[BaseException], ...] = (GzipDamage, *_DECODE_ERRORS)


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


def _header_length(data: bytes) -> int | None:
    """The length of the gzip member header at the start of ``data``; None when ``data``
    ends inside it. Raises ``ValueError`` when it is no gzip header."""
    if data[:2] != GZIP_MAGIC[: len(data[:2])]:
        raise ValueError("are not gzip data")
    if len(data) < 10:
        return None
    if data[2] != 8:
        raise ValueError(f"are a gzip header with compression method {data[2]}, not deflate")
    flags, position = data[3], 10
    if flags & FEXTRA:
        if len(data) < position + 2:
            return None
        position += 2 + int.from_bytes(data[position : position + 2], "little")
    for flag in (FNAME, FCOMMENT):
        if flags & flag:
            end = data.find(b"\0", position)
            if end < 0:
                return None
            position = end + 1
    if flags & FHCRC:
        position += 2
    return position if len(data) >= position else None


class GzipReader(io.RawIOBase):
    """The text of a gzip file (one member or several, zero padding after them allowed),
    decoded in steps of at most ``MAX_OUTPUT`` bytes. Damage is raised as ``GzipDamage``
    after every byte of text before it was handed over: where a step fails, the member is
    decoded again with zlib, whose state can be copied, up to the very byte that fails
    (where the file can be read again; from standard input, the failed step is lost)."""

    def __init__(self, raw: BinaryIO) -> None:
        super().__init__()
        self._raw = raw
        self._input = b""  # compressed bytes read and not yet decoded
        self._offset = 0  # where ``_input`` starts in the file
        self._text = memoryview(b"")  # text not yet handed over
        self._decoder: Any = None  # the current member's, None between members
        self._more = False  # the last step was full: the decoder may hold more text
        self._member_start = self._member_text = self._crc = self._members = 0
        self._damage: str | None = None
        self._ended = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._text:
            if self._damage is not None:
                raise GzipDamage(self._damage)
            if self._ended:
                return 0
            self._step()
        size = min(len(buffer), len(self._text))
        buffer[:size] = self._text[:size]
        self._text = self._text[size:]
        return size

    def close(self) -> None:
        super().close()
        self._raw.close()

    def _fill(self, wanted: int) -> bool:
        """Read until ``wanted`` compressed bytes wait; False at the end of the file."""
        while len(self._input) < wanted:
            piece = self._raw.read(RAW_PIECE)
            if not piece:
                return False
            self._input += piece
        return True

    def _consume(self, size: int) -> None:
        self._input = self._input[size:]
        self._offset += size

    def _step(self) -> None:
        if self._decoder is None:
            self._start_member()
        elif self._input or self._more or self._fill(1):
            self._decode()
        else:
            self._damage = (
                f"the file ends at byte {self._offset:,} inside its compressed text (cut "
                "short, or damaged near its end); read up to there"
            )

    def _start_member(self) -> None:
        """Read the next member's header (after zero padding), or find the end."""
        if self._members:
            while True:
                if not self._input and not self._fill(1):
                    self._ended = True
                    return
                self._consume(len(self._input) - len(self._input.lstrip(b"\0")))
                if self._input:
                    break
        while True:
            try:
                length = _header_length(self._input)
            except ValueError as error:
                read = "; the text before them was read" if self._members else ""
                self._damage = f"damaged: bytes at byte {self._offset:,} {error}{read}"
                return
            if length is not None:
                break
            if not self._fill(len(self._input) + 1):
                self._damage = (
                    f"the file ends at byte {self._offset + len(self._input):,} inside a "
                    "gzip header (cut short); read up to there"
                )
                return
        self._consume(length)
        self._decoder = _new_decoder(wbits=-15)
        self._member_start, self._member_text, self._crc = self._offset, 0, 0
        self._members += 1

    def _decode(self) -> None:
        decoder = self._decoder
        try:
            text = decoder.decompress(self._input, MAX_OUTPUT)
        except _DECODE_ERRORS as error:
            self._recover(str(error))
            return
        rest = decoder.unused_data if decoder.eof else decoder.unconsumed_tail
        self._consume(len(self._input) - len(rest))
        self._more = len(text) == MAX_OUTPUT
        self._hand_over(text)
        if decoder.eof:
            self._end_member()

    def _hand_over(self, text: bytes) -> None:
        self._crc = _crc32(text, self._crc)
        self._member_text += len(text)
        self._text = memoryview(text)

    def _end_member(self) -> None:
        """Check the member's trailer: its checksum and size against the text read."""
        self._decoder, self._more = None, False
        if not self._fill(TRAILER.size):
            self._damage = (
                "cut short in its gzip trailer, after all of its text (which was read); "
                "its checksum could not be checked"
            )
            return
        crc, size = TRAILER.unpack_from(self._input)
        if (crc, size) != (self._crc, self._member_text & 0xFFFFFFFF):
            self._damage = (
                f"damaged: the checksum at byte {self._offset:,} does not match the text "
                "read, which the damage may have changed"
            )
            return
        self._consume(TRAILER.size)

    def _recover(self, reason: str) -> None:
        """A step failed: hand over the text up to the byte that fails, and name it."""
        text, where = self._text_before_damage()
        self._hand_over(text)
        self._damage = f"damaged at byte {where:,} ({reason}); read up to there"

    def _text_before_damage(self) -> tuple[bytes, int]:
        """The member's text past what was handed over, up to the byte where decoding fails,
        and that byte's place in the file; decoded again with zlib in pieces, the failing
        piece byte by byte from a copy of the state before it."""
        try:
            self._raw.seek(self._member_start)
        except (OSError, ValueError):
            return b"", self._offset
        decoder = zlib.decompressobj(wbits=-15)
        skip, produced, offset = self._member_text, 0, self._member_start
        kept: list[bytes] = []

        def keep(text: bytes) -> None:
            nonlocal produced
            start = max(0, skip - produced)
            produced += len(text)
            if start < len(text):
                kept.append(text[start:])

        while True:
            piece = self._raw.read(RECOVER_PIECE)
            if not piece:
                return b"".join(kept), offset
            saved = decoder.copy()
            try:
                keep(decoder.decompress(piece))
            except zlib.error:
                decoder = saved
                for index in range(len(piece)):
                    try:
                        keep(decoder.decompress(piece[index : index + 1]))
                    except zlib.error:
                        return b"".join(kept), offset + index
                return b"".join(kept), offset + len(piece)
            offset += len(piece)
            if decoder.eof or produced > skip + 4 * MAX_OUTPUT:  # zlib reads on: stop
                return b"".join(kept), offset


def _looks_binary(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
    return not head.startswith(GZIP_MAGIC) and b"\0" in head


def _folder_files(folder: Path) -> list[tuple[Path, str | None]]:
    """The regular files below ``folder``, hidden ones left out, each with None, or with
    the problem that a folder that cannot be listed or a link that leads nowhere is, as a
    named file would be; in name order. Links to folders are not followed. Walked with a
    stack, not recursion (``os.walk``'s), whose depth the folder would choose."""
    found: list[tuple[Path, str | None]] = []
    folders = [folder]
    while folders:
        parent = folders.pop()
        try:
            items = list(os.scandir(parent))
        except OSError as error:
            found.append((parent, f"cannot read: {error.strerror}"))
            continue
        for entry in items:
            if entry.name.startswith("."):
                continue
            item = Path(entry.path)
            try:
                is_folder = entry.is_dir()  # through a link, too: such links are not followed
            except OSError:
                is_folder = False
            if is_folder:
                if not entry.is_symlink():
                    folders.append(item)
                continue
            try:
                if stat.S_ISREG(item.stat().st_mode):  # through a link, too
                    found.append((item, None))
            except OSError as error:
                found.append((item, f"cannot read: {error.strerror}"))
    return sorted(found, key=lambda pair: pair[0])


BINARY = "binary (it holds NUL bytes), not a log"


def collect_inputs(
    arguments: list[str], skipped: list[str] | None = None
) -> tuple[list[LogInput], list[str]]:
    """Expand the command line into inputs; problems are returned, not raised. Files in a
    folder that look binary (a core dump, a checkpoint) are left out, each added to
    ``skipped`` as ``path: why``."""
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
                        if skipped is not None:
                            skipped.append(f"{item}: {BINARY}")
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
        return cast(BinaryIO, io.BufferedReader(GzipReader(raw)))
    return raw
