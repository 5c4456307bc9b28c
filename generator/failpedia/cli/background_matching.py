"""Match a command's output in a process of its own, so passing it through never waits.

``failpedia run`` hands every chunk it passes through to ``BackgroundDiagnosis.feed``,
which appends it to a spool: numbered files of at most ``SEGMENT_BYTES`` in a private
temporary folder (``--spool``). A child process, forked before the command starts, opens
the index (compiling a checkout's entries takes a second or more: the command does not
wait for it), then reads the spool in order, feeds the ``LiveDiagnosis`` and deletes each
file once it has read it; at the end it catches up and sends the diagnosis back through a
pipe, with what opening the index printed (warnings about entries left out), which the
parent prints with the diagnosis rather than in the middle of the command's output. A
burst of output (a command printing a gigabyte at once) therefore waits on disk, not in
memory, while the command runs at the speed of the pipe, and a steady training log is
matched as it comes. Memory stays flat on both sides; the disk holds at most what the
matcher is behind, and nothing more once the matcher has stopped early.

Nothing here may hurt the run: should the spool or the child fail, feeding stops, the
output still passes through, and ``error`` says why at the end.
"""

from __future__ import annotations

import io
import os
import pickle
import select
import shutil
import signal
import struct
import tempfile
import time
from collections.abc import Callable
from contextlib import redirect_stderr, suppress
from pathlib import Path

from failpedia.diagnose.findings import Diagnosis
from failpedia.diagnose.live import LiveDiagnosis
from failpedia.signatures.index_format import IndexUnavailable

SEGMENT_BYTES = 16 << 20
HEADER = struct.Struct("<BI")  # what a record holds: its stream number, then its length
NEXT_SEGMENT = 255  # the record that closes a full segment: read on in the next file
END = 254  # the record after the last output: nothing more will come
READ_BYTES = 1 << 20
MATCHER_NICENESS = 10
IDLE_SECONDS = 0.005  # how long the child waits for more output when it has caught up


def _segment(folder: Path, number: int) -> Path:
    return folder / f"{number:08d}.spool"


class BackgroundDiagnosis:
    """The parent's side: the spool it writes and the child that reads it."""

    def __init__(self, make_live: Callable[[], LiveDiagnosis], spool: Path | None = None) -> None:
        self.error: str | None = None
        self.notes = ""  # what the child printed while it opened the index
        self._number = self._written = 0
        self._fd = self._result = self._child = -1
        self._folder: Path | None = None
        try:
            self._start(make_live, spool)
        except OSError as error:
            self.abandon()
            self.error = f"matching could not start: {error.strerror or error}"

    def _start(self, make_live: Callable[[], LiveDiagnosis], spool: Path | None) -> None:
        folder = self._folder = Path(tempfile.mkdtemp(prefix="failpedia-run-", dir=spool))
        self._fd = os.open(_segment(folder, 0), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        result_reader, result_writer = os.pipe()
        parent = os.getpid()
        self._child = os.fork()
        if self._child == 0:  # the matcher: never returns
            os.close(result_reader)
            os.close(self._fd)
            code = 1
            try:
                code = _match(make_live, folder, result_writer, parent)
            finally:
                os._exit(code)
        os.close(result_writer)
        self._result = result_reader

    def feed(self, stream: int, data: bytes) -> None:
        """Append a chunk of stream ``stream`` to the spool (never waiting for the child)."""
        folder = self._folder
        if self.error is not None or folder is None or self._fd < 0 or not data:
            return
        try:
            self._append(stream, data)
            if self._written >= SEGMENT_BYTES:
                if self._answered_early():
                    return
                # The next file exists before the record that sends the child there.
                path = _segment(folder, self._number + 1)
                following = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                self._append(NEXT_SEGMENT, b"")
                os.close(self._fd)
                self._fd, self._number, self._written = following, self._number + 1, 0
        except OSError as error:
            self._fail(f"the output could not be spooled for matching: {error.strerror or error}")

    def _answered_early(self) -> bool:
        """Whether the child has answered (or died) before the output ended: it could not
        open the index or stopped matching. The spool stops there, so that nothing grows on
        disk that nobody reads; ``finish`` takes the answer."""
        ready, _, _ = select.select([self._result], [], [], 0)
        if not ready:
            return False
        with suppress(OSError):
            os.close(self._fd)
        self._fd = -1
        self.close()
        return True

    def _append(self, stream: int, data: bytes) -> None:
        parts = [HEADER.pack(stream, len(data)), data]
        size = sum(len(part) for part in parts)
        written = os.writev(self._fd, parts)
        if written < size:  # a short write to a file: write the rest as it is
            rest = b"".join(parts)[written:]
            while rest:
                rest = rest[os.write(self._fd, rest) :]
        self._written += size

    def finish(self) -> Diagnosis | None:
        """The command has ended: let the child catch up, and take its diagnosis."""
        if self._child < 0:  # it never started
            return None
        if self.error is None and self._fd >= 0:
            try:
                self._append(END, b"")
            except OSError as error:
                self._fail(f"the output could not be spooled for matching: {error}")
        if self._fd >= 0:
            with suppress(OSError):
                os.close(self._fd)
        self._fd = -1
        chunks = []
        while chunk := os.read(self._result, READ_BYTES):
            chunks.append(chunk)
        os.close(self._result)
        status = _reap(self._child)
        self._result = self._child = -1
        self.close()
        if self.error is not None:
            return None
        try:
            kind, value, self.notes = pickle.loads(b"".join(chunks))
        except Exception:  # noqa: BLE001 - the child died before it could answer
            code = os.waitstatus_to_exitcode(status)
            self.error = f"the matching process ended without a diagnosis (status {code})"
            return None
        if kind == "error":
            self.error = str(value)
            return None
        return value if isinstance(value, Diagnosis) else None

    def _fail(self, message: str) -> None:
        """Stop matching: the output keeps passing through."""
        self.error = message
        self._kill()

    def _kill(self) -> None:
        if self._child > 0:
            with suppress(OSError):
                os.kill(self._child, signal.SIGKILL)

    def abandon(self) -> None:
        """The command never ran or we are stopping: end the child, remove the spool."""
        if self._child > 0:
            self._kill()
            _reap(self._child)
            self._child = -1
        for fd in (self._fd, self._result):
            if fd >= 0:
                with suppress(OSError):
                    os.close(fd)
        self._fd = self._result = -1
        self.close()

    def close(self) -> None:
        """Remove the spool, whatever is left of it."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def _reap(pid: int) -> int:
    """Wait for the child; its wait status (0 if something else reaped it already).
    Interrupted waits and reads are retried by Python itself (PEP 475)."""
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def _match(make_live: Callable[[], LiveDiagnosis], folder: Path, result: int, parent: int) -> int:
    """The child: open the index, read the spool in order into a ``LiveDiagnosis``;
    write back what it found."""
    # Signals are for the command and for ``failpedia run``, which passes them on; the
    # matcher finishes the diagnosis whatever happens to the command.
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGTSTP):
        signal.signal(number, signal.SIG_IGN)
    # Background work: where CPUs are short, the command and the pass-through go first.
    with suppress(OSError):
        os.nice(MATCHER_NICENESS)
    notes = io.StringIO()
    answer: tuple[str, object, str]
    try:
        with redirect_stderr(notes):
            live = make_live()
        answer = ("diagnosis", _read_spool(live, folder, parent), notes.getvalue())
    except IndexUnavailable as error:
        answer = ("error", str(error), notes.getvalue())
    except Exception as error:  # noqa: BLE001 - reported by the parent, never a traceback
        answer = ("error", f"{type(error).__name__}: {error}", notes.getvalue())
    if answer[1] is None:
        return 0  # the parent is gone: nobody to answer
    data = pickle.dumps(answer)
    while data:
        data = data[os.write(result, data) :]
    return 0


def _read_spool(live: LiveDiagnosis, folder: Path, parent: int) -> Diagnosis | None:
    """Feed every record of the spool to ``live`` in order, without copying the output
    (records are handed over as views of what was read); the diagnosis at the end."""
    number = 0
    path = _segment(folder, number)
    source = open(path, "rb", buffering=0)  # noqa: SIM115 - closed as each segment ends
    pending = b""  # the start of a record the last read cut off
    try:
        while True:
            chunk = source.read(READ_BYTES)
            if not chunk:
                if os.getppid() != parent:  # killed outright: clean up after it
                    shutil.rmtree(folder, ignore_errors=True)
                    return None
                time.sleep(IDLE_SECONDS)
                continue
            data = pending + chunk if pending else chunk
            offset = 0
            with memoryview(data) as view:
                while len(data) - offset >= HEADER.size:
                    stream, size = HEADER.unpack_from(data, offset)
                    end = offset + HEADER.size + size
                    if end > len(data):
                        break
                    if stream == END:
                        return live.finish()
                    if stream == NEXT_SEGMENT:  # nothing follows it in this file
                        source.close()
                        path.unlink()
                        number += 1
                        path = _segment(folder, number)
                        source = open(path, "rb", buffering=0)  # noqa: SIM115
                        offset = len(data)
                        break
                    live.feed(stream, view[offset + HEADER.size : end])
                    offset = end
            pending = data[offset:]
    finally:
        source.close()
