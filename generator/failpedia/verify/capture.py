"""A reproducer's output: read from its pipe into a bounded buffer, split into lines by
the shared log-line rules, matched against the entry's signatures, and excerpted.

Output is read by a thread into a bounded buffer (the first ``HEAD_BYTES`` and the last
``TAIL_BYTES``; the total is counted), so a reproducer printing 100 MB costs no memory.
Lines are read as ``failpedia diagnose`` and the log page read them
(``signatures.line_rules``): ANSI colour removed, cut at ``\\r``, prefixes removed, capped.
Credentials are scrubbed from the text first, by the one redaction policy
(``signatures.redaction``, which ``failpedia report`` and the log page apply too), so
neither the matched lines nor the excerpt can carry one into a record or onto a page, and
machine paths take the neutral form signature texts use (``signatures.machine_paths``).
"""

from __future__ import annotations

import os
import re
import selectors
import threading
import time
from collections.abc import Iterable

from failpedia.signatures.dialect import CompiledPattern
from failpedia.signatures.line_rules import split_line, strip_ansi
from failpedia.signatures.machine_paths import normalise_paths
from failpedia.signatures.redaction import redact
from failpedia.verify.check_bootstrap import PASSED_TEXT
from failpedia.verify.results import MatchedLine

HEAD_BYTES = 64 * 1024
TAIL_BYTES = 192 * 1024
READ_CHUNK = 64 * 1024
MAX_MATCHED_LINES = 20
EXCERPT_HEAD_BYTES = 2 * 1024
EXCERPT_TAIL_BYTES = 6 * 1024
EXCERPT_BYTES = EXCERPT_HEAD_BYTES + EXCERPT_TAIL_BYTES

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class BoundedOutput:
    """The first ``head_limit`` and last ``tail_limit`` bytes of a stream, and its size."""

    def __init__(self, head_limit: int = HEAD_BYTES, tail_limit: int = TAIL_BYTES) -> None:
        self.head_limit = head_limit
        self.tail_limit = tail_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.tail_starts_line = True  # the byte before the tail (if dropped) was a newline
        self.watched: bytes = b""  # a line to look for in the whole stream, kept or not
        self.seen = False
        self._recent = b""  # the last bytes, so a watched line split across chunks is seen

    def watch(self, line: str) -> None:
        """Look for ``line`` in everything added from now on (``seen``)."""
        self.watched = line.encode()

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.watched and not self.seen:
            window = self._recent + chunk
            self.seen = self.watched in window
            self._recent = window[-len(self.watched) :]
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        excess = len(self.tail) - self.tail_limit
        if excess > 0:
            self.tail_starts_line = bytes(self.tail[excess - 1 : excess]) in (b"\n", b"\r")
            del self.tail[:excess]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def lines(self) -> list[str]:
        """Captured line segments, read by the shared log-line rules.

        When the middle of the output was dropped, the line cut in two at the head's end
        and the tail's partial first line are kept as the fragments they are, except a
        tail fragment that does not start a line (``^`` would match it wrongly).
        """
        if not self.truncated:
            return split_lines(bytes(self.head + self.tail))
        tail = bytes(self.tail)
        if not self.tail_starts_line:
            breaks = [found for found in (tail.find(b"\n"), tail.find(b"\r")) if found >= 0]
            tail = tail[min(breaks) + 1 :] if breaks else b""
        return split_lines(bytes(self.head)) + split_lines(tail)

    def excerpt(self) -> str:
        """About ``EXCERPT_BYTES`` of the output, start and end, as text (a watched line
        without its run's token)."""
        text = excerpt(bytes(self.head), bytes(self.tail), self.total)
        if self.watched:
            text = text.replace(self.watched.decode(), PASSED_TEXT)
        return text


def clean_text(data: bytes) -> str:
    """Decode output, strip ANSI escapes, credentials and machine paths, turn ``\\r``
    breaks into ``\\n``."""
    text = strip_ansi(data.decode("utf-8", errors="replace"))
    return _LINE_BREAK.sub("\n", normalise_paths(redact(text)))


def split_lines(data: bytes) -> list[str]:
    """The text of every non-blank line segment, read by the shared log-line rules, with
    credentials scrubbed."""
    text = normalise_paths(redact(data.decode("utf-8", errors="replace")))
    return [segment.text for line in text.split("\n") for segment in split_line(line)]


def match_lines(lines: Iterable[str], patterns: list[CompiledPattern]) -> list[MatchedLine]:
    """The lines a pattern matches (at most ``MAX_MATCHED_LINES``), with the pattern index."""
    found: list[MatchedLine] = []
    for line in lines:
        for index, pattern in enumerate(patterns):
            if pattern.search(line):
                found.append(MatchedLine(line, index))
                break
        if len(found) >= MAX_MATCHED_LINES:
            break
    return found


def excerpt(head: bytes, tail: bytes = b"", total: int | None = None) -> str:
    """About ``EXCERPT_BYTES`` of output: its start and end, cut at line breaks.

    ``head`` and ``tail`` are the kept start and end of output ``total`` bytes long (the
    middle was dropped when they do not add up); output that fits is returned whole.
    """
    total = len(head) + len(tail) if total is None else total
    if total == len(head) + len(tail):
        head, tail = head + tail, b""
        if total <= EXCERPT_BYTES:
            return clean_text(head)
    shown_head = head[:EXCERPT_HEAD_BYTES]
    cut = shown_head.rfind(b"\n")
    if cut > 0:
        shown_head = shown_head[: cut + 1]
    rest = tail if tail else head[len(shown_head) :]
    shown_tail = rest[-EXCERPT_TAIL_BYTES:]
    cut = shown_tail.find(b"\n")
    if len(shown_tail) < len(rest) and 0 <= cut < len(shown_tail) - 1:
        shown_tail = shown_tail[cut + 1 :]
    omitted = total - len(shown_head) - len(shown_tail)
    marker = f"[... {omitted:,} bytes of output omitted ...]\n"
    text = clean_text(shown_head)
    return text + ("" if text.endswith("\n") else "\n") + marker + clean_text(shown_tail)


class OutputReader(threading.Thread):
    """Drains a pipe into a ``BoundedOutput`` until EOF or until told to stop."""

    def __init__(self, fd: int, output: BoundedOutput) -> None:
        super().__init__(daemon=True, name=f"failpedia-reader-{fd}")
        self.fd = fd
        self.output = output
        self.stop_at: float | None = None

    def run(self) -> None:
        with selectors.DefaultSelector() as selector:
            try:
                selector.register(self.fd, selectors.EVENT_READ)
            except (OSError, ValueError):
                return
            while self.stop_at is None or time.monotonic() < self.stop_at:
                try:
                    if not selector.select(0.1):
                        continue
                    chunk = os.read(self.fd, READ_CHUNK)
                except (OSError, ValueError):
                    return
                if not chunk:
                    return
                self.output.add(chunk)

    def finish(self, seconds: float) -> None:
        """Let output drain for at most ``seconds`` more, then stop reading."""
        self.stop_at = time.monotonic() + seconds
        self.join(seconds + 1.0)
