"""Run a command with its output passed through as it comes, and read on the way.

Each output stream of the command goes to a pseudo-terminal where ours is a terminal (the
command still sees one: it keeps its colours, progress bars, line buffering and the
window's size) and to a pipe otherwise. Bytes are written on the moment they are read,
unchanged, and only then handed to ``on_output``: nothing is held back, nothing is
added. Our side of a pseudo-terminal does no output processing (``OPOST`` off), so the
bytes arrive as the command wrote them and our own terminal processes them once.

The command runs in a process group of its own. SIGINT, SIGTERM and SIGHUP sent to us
are passed to that whole group (torchrun and its workers, a DataLoader's workers), and so
are SIGUSR1, SIGUSR2 and SIGALRM, which schedulers (Slurm's ``--signal``) send to ask for a
checkpoint before they stop or requeue a job: by default each would end us. Where
our standard input is the terminal we are in the foreground of, the command's group is
put in the foreground for the run, so it reads the keyboard (``pdb``) and gets Ctrl-C
once, straight from the terminal; when it is stopped (Ctrl-Z), we take the terminal
back and stop too, and hand it over again when continued in the foreground.

Once the command has exited, what its leftover children still write is passed on until
they close the streams or fall silent (``DRAIN_SECONDS``, at most ``DRAIN_LIMIT_SECONDS``).
"""

from __future__ import annotations

import errno
import fcntl
import os
import pty
import selectors
import signal
import subprocess
import termios
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Any

READ_SIZE = 1 << 20  # what one pump passes on at most: the pipe's capacity, as enlarged
PIPE_BYTES = 1 << 20  # the capacity asked for the command's pipes (Linux's default limit)
POLL_SECONDS = 0.1  # how often the command's state is checked while it is silent
RESIZE_SECONDS = 0.5  # how often the window's size is copied while the command has it
DRAIN_SECONDS = 0.5
DRAIN_LIMIT_SECONDS = 5.0
FORWARDED_SIGNALS = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGALRM,
)
STREAM_FDS = (1, 2)  # what the command's stream number i is written to, here

OnOutput = Callable[[int, bytes], None]


class Outcome:
    """How the command ended: its exit status as a shell reports it (128 + n for death by
    signal n), and the last byte passed through on each stream (b"" if none)."""

    __slots__ = ("exit_status", "last_bytes", "last_stream")

    def __init__(self) -> None:
        self.exit_status = 0
        self.last_bytes = [b"", b""]
        self.last_stream: int | None = None


class _Stream:
    """Where one of the command's streams is read (``reader``) and written (``target``)."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.target = STREAM_FDS[number]
        self.is_terminal = os.isatty(self.target)
        if self.is_terminal:
            self.reader, self.writer = pty.openpty()
            _mirror_terminal(self.target, self.writer)
        else:
            self.reader, self.writer = os.pipe()
            _enlarge_pipe(self.writer)
        os.set_blocking(self.reader, False)


def _enlarge_pipe(pipe: int) -> None:
    """A command that prints in bursts fills a 64 KiB pipe in a moment and waits for us
    each time; with room for a megabyte it writes on while we pass on what it wrote, in
    fewer, larger reads. Where the system refuses (a lower limit), the pipe stays as it is."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is not None:
        with suppress(OSError):
            fcntl.fcntl(pipe, set_size, PIPE_BYTES)


def _mirror_terminal(source: int, follower: int) -> None:
    """Give the new terminal our terminal's settings and size, without output processing."""
    try:
        attributes = termios.tcgetattr(source)
        attributes[1] &= ~termios.OPOST
        termios.tcsetattr(follower, termios.TCSANOW, attributes)
    except termios.error:
        pass
    _copy_window_size(source, follower)


def _copy_window_size(source: int, follower: int) -> None:
    try:
        size = fcntl.ioctl(source, termios.TIOCGWINSZ, b"\0" * 8)
        fcntl.ioctl(follower, termios.TIOCSWINSZ, size)
    except OSError:
        pass


def _foreground_terminal() -> int | None:
    """Our standard input, if it is a terminal whose foreground process group is ours."""
    try:
        if os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp():
            return 0
    except OSError:
        pass
    return None


@contextmanager
def _terminal_signals_blocked() -> Iterator[None]:
    """Change a terminal's foreground group from any group (SIGTTOU would stop us)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _give_terminal(terminal: int, group: int) -> None:
    with _terminal_signals_blocked(), suppress(OSError):
        os.tcsetpgrp(terminal, group)


class _Run:
    """One run of the command: started here, driven by ``loop``."""

    def __init__(self, command: list[str], on_output: OnOutput, child_mask: set[int]) -> None:
        self.on_output = on_output
        self.outcome = Outcome()
        self.streams = [_Stream(0), _Stream(1)]
        self.terminal = _foreground_terminal()
        self.selector = selectors.DefaultSelector()
        terminal = self.terminal

        def in_the_child() -> None:
            # Between fork and exec (no thread of ours runs yet): a group of its own, the
            # terminal where we had it, and the signals we hold back let through again.
            os.setpgid(0, 0)
            if terminal is not None:
                _give_terminal(terminal, os.getpgrp())
            signal.pthread_sigmask(signal.SIG_SETMASK, child_mask)

        try:
            self.child = subprocess.Popen(
                command,
                stdout=self.streams[0].writer,
                stderr=self.streams[1].writer,
                preexec_fn=in_the_child,
                close_fds=True,
            )
        except BaseException:
            for stream in self.streams:
                os.close(stream.reader)
            if terminal is not None:  # the child may have taken it before exec failed
                _give_terminal(terminal, os.getpgrp())
            raise
        finally:
            for stream in self.streams:
                if stream.writer >= 0:
                    os.close(stream.writer)
                    stream.writer = -1
        self.group = self.child.pid
        with suppress(OSError):  # also here: the child may not have run setpgid yet
            os.setpgid(self.child.pid, self.group)
        if terminal is not None:
            _give_terminal(terminal, self.group)
        for stream in self.streams:
            self.selector.register(stream.reader, selectors.EVENT_READ, stream)
        self.status: int | None = None

    def forward(self, number: int, frame: FrameType | None = None) -> None:
        """Pass a signal sent to us on to the command's whole process group."""
        with suppress(OSError):  # the group is gone
            os.killpg(self.group, number)

    def resize(self, number: int = 0, frame: FrameType | None = None) -> None:
        for stream in self.streams:
            if stream.is_terminal and stream.reader >= 0:
                _copy_window_size(stream.target, stream.reader)

    def loop(self) -> Outcome:
        drain_until = drain_limit = next_resize = 0.0
        while self.selector.get_map():
            events = self.selector.select(POLL_SECONDS)
            for key, _ in events:
                self.pump(key.data)
            if self.terminal is not None and time.monotonic() >= next_resize:
                # The command's group has the terminal, so SIGWINCH goes to it, not to us.
                self.resize()
                next_resize = time.monotonic() + RESIZE_SECONDS
            if self.status is None:
                self.poll()
                if self.status is not None:
                    drain_limit = time.monotonic() + DRAIN_LIMIT_SECONDS
                    drain_until = time.monotonic() + DRAIN_SECONDS
            elif events:
                drain_until = min(time.monotonic() + DRAIN_SECONDS, drain_limit)
            if self.status is not None and time.monotonic() >= drain_until:
                break
        for stream in self.streams:
            self.close(stream)
        while self.status is None:
            self.poll(block=True)
        self.outcome.exit_status = self.status
        return self.outcome

    def pump(self, stream: _Stream) -> None:
        """Read what is there (several reads: a terminal hands out 4 KiB at a time), write
        it on, then hand it over to be read."""
        parts: list[bytes] = []
        size = 0
        ended = False
        while size < READ_SIZE:
            try:
                chunk = os.read(stream.reader, READ_SIZE - size)
            except BlockingIOError:
                break
            except OSError as error:
                if error.errno != errno.EIO:  # EIO: every writer closed the terminal
                    raise
                chunk = b""
            if not chunk:
                ended = True
                break
            parts.append(chunk)
            size += len(chunk)
        if parts:
            data = b"".join(parts)
            if self.write(stream, data):
                self.outcome.last_bytes[stream.number] = data[-1:]
                self.outcome.last_stream = stream.number
                self.on_output(stream.number, data)
            else:
                ended = True
        if ended:
            self.close(stream)

    def write(self, stream: _Stream, data: bytes) -> bool:
        """Write all of ``data`` on; False once our side is gone (a closed pipe)."""
        view = memoryview(data)
        while view:
            try:
                written = os.write(stream.target, view)
            except BlockingIOError:  # a target someone else made non-blocking
                time.sleep(0.001)
                continue
            except OSError as error:
                if error.errno in (errno.EPIPE, errno.EIO):
                    # Our reader left (`| head`, a closed terminal): stop reading, so the
                    # command's next write fails as it would have without us.
                    return False
                raise
            view = view[written:]
        return True

    def close(self, stream: _Stream) -> None:
        if stream.reader >= 0:
            self.selector.unregister(stream.reader)
            os.close(stream.reader)
            stream.reader = -1

    def poll(self, block: bool = False) -> None:
        """Note the command's exit; when it was stopped from the terminal, stop too."""
        flags = (0 if block else os.WNOHANG) | os.WUNTRACED
        try:
            pid, status = os.waitpid(self.child.pid, flags)
        except ChildProcessError:  # reaped elsewhere: nothing more to learn
            self.status = self.status if self.status is not None else 0
            return
        if pid == 0:
            return
        if os.WIFSTOPPED(status):
            self.stopped()
            return
        code = os.waitstatus_to_exitcode(status)
        self.status = 128 - code if code < 0 else code
        self.child.returncode = code

    def stopped(self) -> None:
        """The command's group stopped (Ctrl-Z): take the terminal back and stop as its
        job; once continued, hand the terminal over again if in the foreground."""
        terminal = self.terminal
        if terminal is None:
            return
        _give_terminal(terminal, os.getpgrp())
        os.kill(os.getpid(), signal.SIGSTOP)
        # Continued: in the foreground (fg) or not (bg).
        try:
            foreground = os.tcgetpgrp(terminal) == os.getpgrp()
        except OSError:
            foreground = False
        if foreground:
            _give_terminal(terminal, self.group)
        self.forward(signal.SIGCONT)

    def restore_terminal(self) -> None:
        if self.terminal is not None:
            _give_terminal(self.terminal, os.getpgrp())


def run_passing_through(command: list[str], on_output: OnOutput) -> Outcome:
    """Run ``command`` to its end, passing its output through and to ``on_output``
    (stream 0 is stdout, 1 stderr). Raises ``OSError`` when it cannot be started.

    The signals we pass on are held back from the moment before the command starts until
    they can be passed on: none is lost in between, and none stops us first."""
    held: set[int] = {*FORWARDED_SIGNALS, signal.SIGWINCH}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    previous: dict[int, Any] = {}
    try:
        run = _Run(command, on_output, mask)
        for number in FORWARDED_SIGNALS:
            previous[number] = signal.signal(number, run.forward)
        previous[signal.SIGWINCH] = signal.signal(signal.SIGWINCH, run.resize)
        # Writing to the terminal while the command has it must not stop us (TOSTOP).
        previous[signal.SIGTTOU] = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        try:
            run.resize()  # the window may have changed while the command started
            return run.loop()
        finally:
            run.restore_terminal()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for held_signal, handler in previous.items():
            signal.signal(held_signal, handler)
