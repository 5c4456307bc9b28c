"""The launcher: the one process between the runner and a reproducer.

The runner never starts a reproducer itself. It starts this program with the
reproducer's clean environment from the start (inside the sandbox when there is one),
and this program starts the reproducer. So no ancestor the reproducer can see holds the
runner's environment (with ``--detach``, used without a sandbox, it first leaves the
runner's process tree, so the runner is not among those ancestors at all).

It becomes a child subreaper: every descendant of the reproducer, even one that
double-forked, called ``setsid`` and closed its descriptors, stays its descendant. It
stops them all (SIGTERM, a grace period, SIGKILL) when the runner closes the lifeline
descriptor (time limit, interrupted) or dies, and after the reproducer exits, so nothing
outlives the run. In the sandbox's PID namespace (``--pid-namespace``) it signals every
process of the namespace at once. ``--max-processes`` sets RLIMIT_NPROC, which the
sandbox's user namespace makes a limit per run, and ``--max-data-bytes`` RLIMIT_DATA,
the memory one process of the reproducer may allocate. With ``--user UID:GID`` (a runner
working as root) the reproducer's process drops to that user, supplementary groups and
capabilities included, before it starts the script; the launcher keeps what it needs to
stop them.

Nothing the reproducer does can speak for it. The launcher is not dumpable, so a
reproducer running as the same user cannot open its descriptors through ``/proc`` (to
write a status of its own) or trace it, and the status and lifeline descriptors are
closed in the reproducer. Standard input is passed on: the runner may hand the
reproducer's interpreter its program there, where no command line shows it.

It reports on the status descriptor, one line each: ``started <pid>``, then
``exit <code>`` or ``signal <number>`` for the reproducer, and ``stopped <SIGTERM|SIGKILL>``
when it had to stop what was running.

It runs as ``python -I -S -c <this file>``, where the package may not be importable: it
uses the standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import resource
import select
import signal
import sys
import time

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
POLL_SECONDS = 0.02
KILL_ROUNDS_SECONDS = 5.0  # SIGKILL rounds end here (a process stuck in the kernel)


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="failpedia-launcher")
    parser.add_argument("--status", type=int, required=True)
    parser.add_argument("--lifeline", type=int, required=True)
    parser.add_argument("--grace", type=float, default=3.0)
    parser.add_argument("--leftover-grace", type=float, default=1.0)
    parser.add_argument("--detach", action="store_true")
    parser.add_argument("--pid-namespace", action="store_true")
    parser.add_argument("--max-processes", type=int, default=0)
    parser.add_argument("--max-data-bytes", type=int, default=0)
    parser.add_argument("--user", type=_ids, default=None, metavar="UID:GID")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    if options.command[:1] == ["--"]:
        options.command = options.command[1:]
    if not options.command:
        parser.error("no command to run")
    return options


def _ids(text: str) -> tuple[int, int]:
    uid, _, gid = text.partition(":")
    if not (uid.isdigit() and gid.isdigit()):
        raise argparse.ArgumentTypeError(f"expected UID:GID, got {text!r}")
    return int(uid), int(gid)


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _become_subreaper() -> None:
    _prctl(PR_SET_CHILD_SUBREAPER, 1)


def _become_unreadable() -> None:
    """Not dumpable: /proc/<pid>/fd, mem and ptrace are closed to same-user processes."""
    _prctl(PR_SET_DUMPABLE, 0)


def _limit_data(limit: int) -> None:
    """RLIMIT_DATA at ``limit``, or at the hard limit already set where that is lower."""
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def _drop_to(user: tuple[int, int]) -> None:
    """Become ``user`` for good: groups first (it needs the capability the uid change
    takes away), then gid and uid, real, effective and saved alike."""
    uid, gid = user
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def _descendants() -> list[int]:
    """Every descendant of this process, from ``/proc/<pid>/task/*/children``."""
    found: list[int] = []
    pending = [os.getpid()]
    while pending:
        pid = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as file:
                    children = [int(item) for item in file.read().split()]
            except (OSError, ValueError):
                continue
            for child in children:
                if child not in found:
                    found.append(child)
                    pending.append(child)
    return found


class Launcher:
    """Runs one reproducer and keeps its whole process tree in hand."""

    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.child = 0
        self.child_status: int | None = None
        self.no_children = False

    def report(self, line: str) -> None:
        with contextlib.suppress(OSError):
            os.write(self.options.status, (line + "\n").encode())

    def reap(self) -> None:
        """Collect every exited child; note the reproducer's status when it comes."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.no_children = True
                return
            if pid == 0:
                return
            if pid == self.child and self.child_status is None:
                self.child_status = status
                if os.WIFSIGNALED(status):
                    self.report(f"signal {os.WTERMSIG(status)}")
                else:
                    self.report(f"exit {os.waitstatus_to_exitcode(status)}")

    def signal_all(self, signum: int) -> None:
        if self.options.pid_namespace:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(-1, signum)  # every process of the namespace but init and this one
            return
        targets = set(_descendants())  # empty where there is no /proc
        if self.child_status is None:
            targets.add(self.child)
        for pid in targets:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signum)

    def stop_all(self, grace: float) -> str | None:
        """SIGTERM everything left, up to ``grace`` seconds, then SIGKILL; the last signal
        sent, or None when nothing was left."""
        self.reap()
        if self.no_children:
            return None
        self.signal_all(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            self.reap()
            if self.no_children:
                return "SIGTERM"
            time.sleep(POLL_SECONDS)
        deadline = time.monotonic() + KILL_ROUNDS_SECONDS
        while not self.no_children and time.monotonic() < deadline:
            self.signal_all(signal.SIGKILL)  # again: a process may have forked meanwhile
            time.sleep(POLL_SECONDS)
            self.reap()
        return "SIGKILL"

    def start(self) -> None:
        self.child = os.fork()
        if self.child == 0:
            try:
                signal.set_wakeup_fd(-1)
                for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                    signal.signal(signum, signal.SIG_DFL)
                if self.options.max_data_bytes > 0:
                    _limit_data(self.options.max_data_bytes)
                if self.options.user is not None:
                    _drop_to(self.options.user)
                os.execv(self.options.command[0], self.options.command)
            except (OSError, ValueError) as error:
                message = f"failpedia launcher: cannot run {self.options.command[0]}: {error}\n"
                os.write(2, message.encode(errors="replace"))
            os._exit(127)

    def watch(self, wakeup_fd: int) -> str | None:
        """Wait for the reproducer to exit, or for the lifeline to close; stop the rest."""
        lifeline = self.options.lifeline
        while self.child_status is None:
            readable, _, _ = select.select([lifeline, wakeup_fd], [], [], 1.0)
            if wakeup_fd in readable:
                with contextlib.suppress(BlockingIOError):
                    os.read(wakeup_fd, 4096)
            self.reap()
            if lifeline in readable:
                try:
                    closed = os.read(lifeline, 4096) == b""
                except OSError:
                    closed = True
                if closed:
                    return self.stop_all(self.options.grace)
        self.stop_all(self.options.leftover_grace)
        return None


def main(argv: list[str]) -> int:
    options = _parse(argv)
    for descriptor in (options.status, options.lifeline):
        os.set_inheritable(descriptor, False)
    _become_unreadable()
    if options.detach:
        if os.fork() != 0:
            os._exit(0)
        os.setsid()
    _become_subreaper()
    if options.max_processes > 0:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NPROC, (options.max_processes,) * 2)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: None)  # only the lifeline stops a run
    signal.signal(signal.SIGCHLD, lambda *_: None)
    wakeup_read, wakeup_write = os.pipe()
    os.set_blocking(wakeup_read, False)
    os.set_blocking(wakeup_write, False)
    signal.set_wakeup_fd(wakeup_write)
    launcher = Launcher(options)
    launcher.report(f"started {os.getpid()}")
    launcher.start()
    stopped_with = launcher.watch(wakeup_read)
    if stopped_with is not None:
        launcher.report(f"stopped {stopped_with}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
