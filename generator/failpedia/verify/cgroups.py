"""A pids cgroup per contained run, where the kernel would not apply RLIMIT_NPROC.

The launcher sets RLIMIT_NPROC inside the sandbox's user namespace, which limits the
processes of one run for every user but root: the kernel exempts uid 0 from that limit.
A runner working as root (a CI container) limits a run with a pids cgroup instead, where
it can create one: under its own cgroup in a cgroup v1 ``pids`` hierarchy, or in cgroup
v2 where its cgroup already enables the ``pids`` controller for children. The run joins
the group before bubblewrap starts, so every process of the run counts, and whatever is
still in the group when the run ends is killed before the group is removed.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

PREFIX = "failpedia-verify-"
REMOVE_SECONDS = 2.0  # how long killed processes may take to leave a group being removed

_numbers = itertools.count(1)


def _own_cgroups() -> dict[str, str]:
    """Controller (or ``""`` for cgroup v2) -> this process's cgroup path."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines():
            number, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                found.setdefault(controller if number != "0" else "", path)
    return found


def _mount_points() -> list[tuple[str, str, list[str]]]:
    """(mount point, filesystem type, super options) of every cgroup mount."""
    mounts = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines():
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) > 4 and len(tail) > 2 and tail[0] in ("cgroup", "cgroup2"):
                mounts.append((fields[4], tail[0], tail[2].split(",")))
    return mounts


def _candidates() -> list[Path]:
    own = _own_cgroups()
    places = []
    for mount, kind, options in _mount_points():
        if kind == "cgroup" and "pids" in options and "pids" in own:
            places.append(Path(mount) / own["pids"].lstrip("/"))
        elif kind == "cgroup2" and "" in own:
            folder = Path(mount) / own[""].lstrip("/")
            with contextlib.suppress(OSError):
                if "pids" in (folder / "cgroup.subtree_control").read_text().split():
                    places.append(folder)
    return places


@functools.cache
def pids_parent() -> Path | None:
    """Where this process can create pids cgroups for its runs, or None."""
    for place in _candidates():
        try:
            with _group(place, 1):
                pass
        except OSError:
            continue
        _remove_stale(place)
        return place
    return None


@contextlib.contextmanager
def _group(parent: Path, limit: int) -> Iterator[Path]:
    group = parent / f"{PREFIX}{os.getpid()}-{next(_numbers)}"
    group.mkdir()
    try:
        (group / "pids.max").write_text(str(limit), encoding="ascii")
        yield group
    finally:
        _empty_and_remove(group)


@contextlib.contextmanager
def pids_group(parent: Path, limit: int) -> Iterator[Path]:
    """A new cgroup of at most ``limit`` tasks; yields the file a process joins it by
    (writing ``0`` into it joins the writer). Removed, emptied first, on exit."""
    with _group(parent, limit) as group:
        yield group / "cgroup.procs"


def _empty_and_remove(group: Path) -> None:
    deadline = time.monotonic() + REMOVE_SECONDS
    while True:
        with contextlib.suppress(OSError, ValueError):
            for pid in (group / "cgroup.procs").read_text(encoding="ascii").split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)


def _remove_stale(parent: Path) -> None:
    """Remove groups a runner that was killed left behind (its pid is gone)."""
    with contextlib.suppress(OSError):
        for group in parent.iterdir():
            owner = group.name.removeprefix(PREFIX).split("-")[0]
            if group.name.startswith(PREFIX) and owner.isdigit() and not _alive(int(owner)):
                _empty_and_remove(group)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
