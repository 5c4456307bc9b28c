"""Read a file that a pull request may have brought: only a regular file, only inside the
folder it belongs to, and only up to a size limit.

A link to ``/dev/zero`` would be read without end, a FIFO would block the reader, a link
to ``~/.ssh/id_rsa`` would be published; so the path is resolved and checked with
``stat`` before anything is opened, opened without blocking or following a last link,
checked again, and read with a bounded read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_CHUNK = 1 << 20
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY


class RefusedFile(Exception):
    """A file that was not read; the message says why, to follow the file's path."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.missing = missing  # nothing is there at all (not even a broken link)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_bounded(path: Path, *, within: Path, limit: int) -> bytes:
    """The bytes of ``path``, a regular file inside the folder ``within`` (after following
    links) of at most ``limit`` bytes; RefusedFile otherwise."""
    try:
        real = path.resolve(strict=True)
    except FileNotFoundError:
        if path.is_symlink():
            raise RefusedFile("is a link to nothing") from None
        raise RefusedFile("cannot read file: no such file", missing=True) from None
    except (OSError, RuntimeError) as error:  # a link loop, a folder without permission
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise RefusedFile(f"cannot read file: {reason}") from None
    folder = within.resolve()
    if not real.is_relative_to(folder):
        raise RefusedFile(
            f"is a link to {real}, outside {folder.name}/; only files inside it are read"
        )
    try:
        status = os.stat(real)
        if not stat.S_ISREG(status.st_mode):
            raise RefusedFile(f"is {_kind(status.st_mode)}, not a regular file")
        if status.st_size > limit:
            raise RefusedFile(f"file is larger than {limit:,} bytes")
        descriptor = os.open(real, _OPEN_FLAGS)
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                raise RefusedFile("changed while it was read")
            chunks = []
            left = limit + 1
            while left > 0:
                chunk = os.read(descriptor, min(left, _CHUNK))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
        finally:
            os.close(descriptor)
    except OSError as error:
        raise RefusedFile(f"cannot read file: {error.strerror or error}") from None
    data = b"".join(chunks)
    if len(data) > limit:
        raise RefusedFile(f"file is larger than {limit:,} bytes")
    return data
