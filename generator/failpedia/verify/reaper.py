"""The runner's last resort against processes an uncontained run leaves behind.

Without a sandbox, the launcher (``launcher``) keeps every descendant of a reproducer
and stops them all, unless the reproducer kills the launcher first. Then what is left is
found here: the launcher's process group, descendants seen while walking
``/proc/<pid>/task/*/children`` during the run, and processes still holding the output
pipe; they are stopped with SIGTERM, a grace period and SIGKILL. (In the sandbox nothing
is needed: its PID namespace dies with the run.)
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

_IS_LINUX = sys.platform.startswith("linux")


def _proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, process group, start time) of a live process, from ``/proc/<pid>/stat``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            data = file.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return fields[0].decode(), int(fields[2]), int(fields[19])
    except (IndexError, ValueError):
        return None


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as file:
                found.extend(int(item) for item in file.read().split())
        except (OSError, ValueError):
            continue
    return found


class ProcessTree:
    """The processes a reproducer started, remembered so none outlives it.

    Every pid is stored with its start time, so a pid reused by an unrelated process
    after the original died is never signalled.
    """

    def __init__(self, pid: int, pipe_inode: int | None) -> None:
        self.pid = pid
        self.pgid = pid  # the launcher calls setsid: it leads its own group
        self.pipe_inode = pipe_inode
        self.known: dict[int, int] = {}

    def _remember(self, pid: int) -> None:
        if pid in self.known or pid == os.getpid():
            return
        stat = _proc_stat(pid)
        if stat is not None and stat[0] != "Z":
            self.known[pid] = stat[2]

    def scan(self) -> None:
        """Record the reproducer's current descendants (Linux only)."""
        if not _IS_LINUX:
            return
        pending = [self.pid]
        seen = {self.pid}
        while pending:
            for child in _children(pending.pop()):
                if child not in seen:
                    seen.add(child)
                    self._remember(child)
                    pending.append(child)

    def scan_pipe_holders(self) -> None:
        """Record processes holding the write end of the output pipe (Linux only).

        A descendant that left the group with ``setsid`` after its parent exited can no
        longer be found from the tree, but still holds the inherited stdout. Direct
        children of the runner are launchers between fork and exec (other runs' among
        them), never what is left of this run.
        """
        if not _IS_LINUX or self.pipe_inode is None:
            return
        target = f"pipe:[{self.pipe_inode}]"
        me = os.getpid()
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == me:
                continue
            pid = int(name)
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") != target:
                        continue
                    with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as file:
                        flags = next(
                            int(line.split()[1], 8) for line in file if line.startswith("flags:")
                        )
                except (OSError, StopIteration, ValueError, IndexError):
                    continue
                if flags & os.O_ACCMODE != os.O_RDONLY and _parent(pid) != me:
                    self._remember(pid)
                    break

    def group_members(self) -> list[int]:
        """Live (non-zombie) processes of the reproducer's process group (Linux only)."""
        members = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                stat = _proc_stat(int(name))
                if stat is not None and stat[1] == self.pgid and stat[0] != "Z":
                    members.append(int(name))
        return members

    def _alive_known(self) -> list[int]:
        alive = []
        for pid, started in self.known.items():
            stat = _proc_stat(pid)
            if stat is not None and stat[2] == started and stat[0] != "Z":
                alive.append(pid)
        return alive

    def _group_alive(self) -> bool:
        if _IS_LINUX:
            return bool(self.group_members())
        try:
            os.killpg(self.pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def anything_alive(self) -> bool:
        return self._group_alive() or bool(self._alive_known())

    def signal_all(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, signum)
        for pid in self._alive_known():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signum)

    def stop(self, grace: float) -> str | None:
        """Stop everything found: SIGTERM, up to ``grace`` seconds, then SIGKILL.

        Returns the name of the last signal sent, or None when nothing was left.
        """
        self.scan()
        self.scan_pipe_holders()
        if not self.anything_alive():
            return None
        self.signal_all(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if not self.anything_alive():
                return "SIGTERM"
            time.sleep(0.05)
        self.signal_all(signal.SIGKILL)
        deadline = time.monotonic() + max(grace, 1.0)
        while self.anything_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        return "SIGKILL"


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            data = file.read()
        return int(data[data.rfind(b")") + 2 :].split()[1])
    except (OSError, IndexError, ValueError):
        return None
