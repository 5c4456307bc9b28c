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

Nothing here may hurt the run: should the child fail, feeding stops, the output still
passes through, and ``error`` says why at the end. The spool is capped (``--spool-cap``,
1 GiB, and never more than a tenth of the free space where it is): output past the cap,
while the matcher is that far behind, is passed through but not matched from there on
(matching on after a gap would number lines wrongly), and ``warnings`` says how much. A
spool that cannot be written (a full disk) is emptied and removed at once, its matcher
ends with what it read, and ``warnings`` says so.

A spool folder holds ``owner.lock``, locked (``flock``) by ``failpedia run`` and its
matcher for as long as either lives; the lock goes with the last of them, however they
end. A ``failpedia run`` that starts removes the spools beside its own that nobody locks:
those of runs killed outright with their matcher (SIGKILL to the process group, the
out-of-memory killer).
"""

from __future__ import annotations

import fcntl
import io
import os
import pickle
import select
import shutil
import signal
import struct
import tempfile
import time
from collections import deque
from collections.abc import Callable
from contextlib import redirect_stderr, suppress
from pathlib import Path

from failpedia.diagnose.findings import Diagnosis
from failpedia.diagnose.live import LiveDiagnosis
from failpedia.signatures.index_format import IndexUnavailable

SEGMENT_BYTES = 16 << 20
MIN_SEGMENT_BYTES = 1 << 20  # under a cap this small, the first segment holds it all
DEFAULT_CAP = 1 << 30
FREE_SHARE = 10  # the spool takes at most 1/FREE_SHARE of the free space where it is
SPOOL_PREFIX = "failpedia-run-"
OWNER_LOCK = "owner.lock"
HEADER = struct.Struct("<BI")  # what a record holds: its stream number, then its length
NEXT_SEGMENT = 255  # the record that closes a full segment: read on in the next file
END = 254  # the record after the last output: nothing more will come
READ_BYTES = 1 << 20
MATCHER_NICENESS = 10
IDLE_SECONDS = 0.005  # how long the child waits for more output when it has caught up


def _segment(folder: Path, number: int) -> Path:
    return folder / f"{number:08d}.spool"


def _free_share(folder: Path) -> int | None:
    """A tenth of the free space on the folder's filesystem; None where unknown."""
    try:
        info = os.statvfs(folder)
    except OSError:
        return None
    return info.f_bavail * info.f_frsize // FREE_SHARE


def _hold_owner_lock(folder: Path) -> int:
    """Lock ``owner.lock`` in a new spool folder; the descriptor, or -1 where locks are not
    supported there. Locked before it has its name, so no one sees it unlocked."""
    fd = os.open(folder / ".owner", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return -1
    os.rename(folder / ".owner", folder / OWNER_LOCK)
    return fd


def remove_stale_spools(parent: Path) -> None:
    """Remove the spools in ``parent`` that no living ``failpedia run`` or matcher holds:
    ours only, and only those with an owner lock that can be taken."""
    try:
        items = list(os.scandir(parent))
    except OSError:
        return
    for item in items:
        if not item.name.startswith(SPOOL_PREFIX):
            continue
        with suppress(OSError):
            if not item.is_dir(follow_symlinks=False) or item.stat().st_uid != os.getuid():
                continue
            fd = os.open(Path(item.path, OWNER_LOCK), os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by a live run: refused
                _empty_and_remove(Path(item.path))
            finally:
                os.close(fd)


def _empty_and_remove(folder: Path) -> None:
    """Remove a spool folder, truncating its files first: a reader that still has one
    open would otherwise keep its space taken until it closes it."""
    with suppress(OSError):
        for item in os.scandir(folder):
            if item.name.endswith(".spool"):
                with suppress(OSError):
                    os.truncate(item.path, 0)
    shutil.rmtree(folder, ignore_errors=True)


class BackgroundDiagnosis:
    """The parent's side: the spool it writes and the child that reads it."""

    def __init__(
        self,
        make_live: Callable[[], LiveDiagnosis],
        spool: Path | None = None,
        cap: int = DEFAULT_CAP,
    ) -> None:
        self.error: str | None = None
        self.notes = ""  # what the child printed while it opened the index
        self.cap = cap
        self._cap_reason = "set by --spool-cap"
        self.unmatched = 0  # bytes passed through but not spooled, past the cap
        self.lost: str | None = None  # why the spool was removed before the output ended
        self._segment_bytes = SEGMENT_BYTES
        self._number = self._written = 0
        self._pending = 0  # output bytes spooled that the child may not have read yet
        self._closed_segments: deque[tuple[int, int]] = deque()  # (number, output bytes)
        self._segment_data = 0  # output bytes in the segment being written
        self._full = False  # the cap was reached: nothing more is spooled
        self._fd = self._result = self._child = self._lock = -1
        self._folder: Path | None = None
        remove_stale_spools(Path(spool) if spool is not None else Path(tempfile.gettempdir()))
        try:
            self._start(make_live, spool)
        except OSError as error:
            self.abandon()
            self.error = f"matching could not start: {error.strerror or error}"

    def _start(self, make_live: Callable[[], LiveDiagnosis], spool: Path | None) -> None:
        folder = self._folder = Path(tempfile.mkdtemp(prefix=SPOOL_PREFIX, dir=spool))
        self._lock = _hold_owner_lock(folder)
        share = _free_share(folder)
        if share is not None and share < self.cap:
            self.cap, self._cap_reason = share, "a tenth of the free space where it is"
        self._segment_bytes = min(SEGMENT_BYTES, max(MIN_SEGMENT_BYTES, self.cap // 4))
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
        if self._full:
            self.unmatched += len(data)
            return
        room = self._room(len(data))
        if room < len(data):  # the rest is passed through, and matching stops there
            self.unmatched += len(data) - room
            self._full = True
            data = data[:room]
            if not data:
                return
        try:
            self._append(stream, data)
            self._pending += len(data)
            self._segment_data += len(data)
            if self._written >= self._segment_bytes:
                if self._answered_early():
                    return
                # The next file exists before the record that sends the child there.
                path = _segment(folder, self._number + 1)
                following = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                self._append(NEXT_SEGMENT, b"")
                os.close(self._fd)
                self._closed_segments.append((self._number, self._segment_data))
                self._fd, self._number, self._written = following, self._number + 1, 0
                self._segment_data = 0
        except OSError as error:
            self._lose_spool(error)

    def _room(self, wanted: int) -> int:
        """How many more output bytes the spool takes under its cap: what the child has
        read is known once it has removed the segment (checked only near the cap)."""
        if self._pending + wanted > self.cap:
            while self._closed_segments:
                number, size = self._closed_segments[0]
                if self._folder is None or _segment(self._folder, number).exists():
                    break
                self._closed_segments.popleft()
                self._pending -= size
        return max(0, min(wanted, self.cap - self._pending))

    def _lose_spool(self, error: OSError) -> None:
        """The spool cannot be written (a full disk, a file-size limit): free its space now
        and stop spooling; the child sees its file vanish and answers with what it read."""
        self.lost = error.strerror or str(error)
        if self._fd >= 0:
            with suppress(OSError):
                os.ftruncate(self._fd, 0)
            with suppress(OSError):
                os.close(self._fd)
        self._fd = -1
        self.close()

    @property
    def warnings(self) -> list[str]:
        """What the diagnosis must say about output that was passed through unmatched."""
        notes = []
        if self.lost is not None:
            notes.append(
                f"the spool could not be written ({self.lost}): it was removed and the "
                "output from there on was passed through but not matched"
            )
        elif self.unmatched:
            notes.append(
                f"{self.unmatched:,} bytes of output past the spool's cap of {self.cap:,} "
                f"bytes ({self._cap_reason}) were passed through but not matched"
            )
        return notes

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
                self._lose_spool(error)
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
        """Remove the spool, whatever is left of it, and let go of its lock."""
        if self._folder is not None:
            _empty_and_remove(self._folder)
        if self._lock >= 0:
            with suppress(OSError):
                os.close(self._lock)
            self._lock = -1


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
    for number in (
        signal.SIGINT,
        signal.SIGTERM,
        signal.SIGHUP,
        signal.SIGTSTP,
        signal.SIGUSR1,
        signal.SIGUSR2,
        signal.SIGALRM,
    ):
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
    if answer[1] is None or os.getppid() != parent:
        shutil.rmtree(folder, ignore_errors=True)  # killed outright: clean up after it
        return 0
    data = pickle.dumps(answer)
    try:
        while data:
            data = data[os.write(result, data) :]
    except OSError:  # the parent died as we answered
        shutil.rmtree(folder, ignore_errors=True)
    return 0


def _open_segment(path: Path) -> io.FileIO | None:
    """The segment, or None where the parent has removed the spool (it could not write it)."""
    try:
        return open(path, "rb", buffering=0)  # closed as each segment ends
    except FileNotFoundError:
        return None


def _read_spool(live: LiveDiagnosis, folder: Path, parent: int) -> Diagnosis | None:
    """Feed every record of the spool to ``live`` in order, without copying the output
    (records are handed over as views of what was read); the diagnosis at the end, also
    when the parent removed the spool early (what was read is diagnosed)."""
    number = 0
    path = _segment(folder, number)
    source = _open_segment(path)
    if source is None:
        return live.finish() if os.getppid() == parent else None
    pending = b""  # the start of a record the last read cut off
    try:
        while True:
            chunk = source.read(READ_BYTES)
            if not chunk:
                if os.getppid() != parent:  # killed outright: clean up after it
                    shutil.rmtree(folder, ignore_errors=True)
                    return None
                if os.fstat(source.fileno()).st_nlink == 0:  # removed: nothing more comes
                    return live.finish()
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
                        with suppress(FileNotFoundError):
                            path.unlink()
                        number += 1
                        path = _segment(folder, number)
                        following = _open_segment(path)
                        if following is None:
                            return live.finish()
                        source = following
                        offset = len(data)
                        break
                    live.feed(stream, view[offset + HEADER.size : end])
                    offset = end
            pending = data[offset:]
    finally:
        source.close()
