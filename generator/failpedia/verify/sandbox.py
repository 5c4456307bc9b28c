"""Containment for reproducers: bubblewrap where it works, and what holds without it.

Reproducers are code from pull requests, run on CI and GPU runners. Where ``bwrap``
(bubblewrap) is installed and can create namespaces (probed once per process), each run
gets:

- its own user, PID, IPC, UTS and cgroup namespaces, and its own network namespace
  (loopback only) unless the entry declares ``reproducer.network: true``; no
  capabilities; it dies with the runner (``--die-with-parent``), and every process of
  the namespace dies when its launcher exits;
- a read-only view of the filesystem, with the runner's home folder and the checkout's
  ``.git`` hidden (the Python installation and the entry's folder stay visible);
- a private ``/tmp`` holding its working folder (HOME and TMPDIR), and a private
  ``/dev/shm``, each a tmpfs of ``Limits.scratch_bytes``: nothing it writes reaches the
  machine, and it cannot fill the disk;
- at most ``Limits.processes`` tasks (RLIMIT_NPROC in its user namespace; for a runner
  working as root, whom the kernel exempts, a pids cgroup where one can be created);
- the ``/dev/nvidia*`` devices for ``cuda`` and ``multi-gpu`` entries.

Without bubblewrap a run still gets a clean environment from the start, a launcher that
is not a child of the runner and stops every descendant, and a temporary working folder;
``Containment.summary`` says what is then not enforced.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from failpedia.verify import cgroups
from failpedia.verify.environment import clean_environment

MIB = 1 << 20
PROBE_SECONDS = 60
# A tmpfs over the runner's home, made read-only once the paths under it are bound back.
HIDING_BYTES = MIB
# Joins the cgroup named by its first argument, then runs the rest.
JOIN_CGROUP = 'echo 0 > "$0" && exec "$@"'
USERNS_HINT = (
    "user namespaces look disabled or restricted here; on Ubuntu 23.10 and later run "
    "`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (or give bwrap an "
    "AppArmor profile that allows them)"
)


@dataclass(frozen=True)
class Limits:
    """What one contained run may use."""

    scratch_bytes: int = 512 * MIB  # each of /tmp (the working folder) and /dev/shm
    processes: int = 4096  # tasks, threads included: torch starts one per core


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Containment:
    """Whether reproducers run in bubblewrap here, and how their processes are limited."""

    bwrap: str | None
    problem: str | None  # why bubblewrap cannot be used; None when it can
    pids_parent: Path | None = None  # where per-run pids cgroups go (a runner as root)

    @property
    def available(self) -> bool:
        return self.bwrap is not None and self.problem is None

    @property
    def process_limit(self) -> str | None:
        """How the process limit is enforced, or None when it is not."""
        if os.geteuid() != 0:
            return "RLIMIT_NPROC in the run's user namespace"
        if self.pids_parent is not None:
            return f"a pids cgroup per run under {self.pids_parent}"
        return None

    def summary(self, limits: Limits = DEFAULT_LIMITS) -> str:
        """What ``failpedia verify`` says about containment before it runs anything."""
        if not self.available:
            return (
                f"containment unavailable: {self.problem}\n"
                "reproducers run uncontained, each from a launcher with a clean environment "
                "that stops every descendant it keeps; not enforced: a read-only filesystem "
                "(they can write wherever your user can, the repository included), no "
                "network, a disk quota, a process limit, a private process tree (they can "
                "read other processes' environments through /proc and signal them). Install "
                "bubblewrap (apt-get install bubblewrap) to contain them; "
                "--require-containment refuses to run without it."
            )
        limit = self.process_limit
        processes = (
            f"at most {limits.processes} tasks ({limit})"
            if limit is not None
            else "process limit: not enforced (the kernel exempts root from RLIMIT_NPROC and "
            "no pids cgroup could be created here)"
        )
        size = limits.scratch_bytes // MIB
        return (
            f"containment: bubblewrap ({self.bwrap}): read-only filesystem with your home and "
            f"the checkout's .git hidden; private /tmp (the working folder) and /dev/shm of "
            f"{size} MiB each; no network unless an entry declares it; a private process "
            f"tree that dies with the run; {processes}"
        )


def gpu_device_paths(dev: Path = Path("/dev")) -> list[Path]:
    """The NVIDIA device nodes (and ``nvidia-caps``) a CUDA reproducer needs."""
    try:
        return sorted(path for path in dev.iterdir() if path.name.startswith("nvidia"))
    except OSError:
        return []


def _homes() -> list[Path]:
    """The runner's home folders (``$HOME`` and its user's), hidden from reproducers."""
    found: list[Path] = []
    candidates = [os.environ.get("HOME")]
    with contextlib.suppress(KeyError):
        candidates.append(pwd.getpwuid(os.getuid()).pw_dir)
    for candidate in candidates:
        if not candidate:
            continue
        home = Path(candidate).resolve()
        hideable = home.is_dir() and home != Path("/") and not _under(home, [Path("/tmp")])
        if hideable and home not in found:
            found.append(home)
    return found


def _under(path: Path, places: Iterable[Path]) -> bool:
    return any(path == place or path.is_relative_to(place) for place in places)


def _python_paths(python: str) -> list[Path]:
    """What the reproducer's interpreter needs to start and import its packages."""
    paths = {Path(python).parent, Path(python).resolve().parent, Path(python).parent.parent}
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
            paths.add(Path(prefix))
        paths.update(Path(entry) for entry in sys.path if entry and os.path.isdir(entry))
    return sorted({path.resolve() for path in paths if path.is_dir()} | paths)


def _bind_back(visible: Iterable[Path], hidden: list[Path]) -> list[str]:
    """``--ro-bind`` arguments that show the ``visible`` paths lying under a hidden place,
    at the path a reproducer uses and at the path it resolves to."""
    binds: dict[Path, Path] = {}  # destination -> source
    for path in visible:
        literal = Path(os.path.abspath(path))
        real = literal.resolve()
        if real.exists() and (_under(literal, hidden) or _under(real, hidden)):
            binds.setdefault(literal, real)
            binds.setdefault(real, real)
    args: list[str] = []
    kept: list[tuple[Path, Path]] = []
    for destination, source in sorted(binds.items(), key=lambda item: len(item[0].parts)):
        if any(
            destination.is_relative_to(outer) and source == origin / destination.relative_to(outer)
            for outer, origin in kept
        ):
            continue  # already shown by the bind of a folder above it
        kept.append((destination, source))
        args += ["--ro-bind", str(source), str(destination)]
    return args


def _checkout_git(folder: Path) -> Path | None:
    for parent in [folder, *folder.parents]:
        candidate = parent / ".git"
        if candidate.exists():
            return candidate
    return None


def bwrap_arguments(
    bwrap: str,
    workdir: str,
    visible: Iterable[Path],
    *,
    network: bool,
    gpu: bool,
    limits: Limits,
) -> list[str]:
    """The bubblewrap command line that runs a reproducer contained (up to ``--``)."""
    args = [bwrap, "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    args += ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try"]
    if not network:
        args.append("--unshare-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    scratch = str(limits.scratch_bytes)
    args += ["--size", scratch, "--tmpfs", "/tmp", "--size", scratch, "--tmpfs", "/dev/shm"]
    homes = _homes()
    for home in homes:
        args += ["--size", str(HIDING_BYTES), "--tmpfs", str(home)]
    hidden = [Path("/tmp"), *homes]
    visible = list(visible)
    binds = _bind_back(visible, hidden)
    args += binds
    shown = [Path(destination) for destination in binds[2::3]]
    for git in dict.fromkeys(_checkout_git(path.resolve()) for path in visible):
        if git is not None and (not _under(git, hidden) or _under(git, shown)):
            if git.is_dir():
                args += ["--tmpfs", str(git), "--remount-ro", str(git)]
            else:
                args += ["--ro-bind", "/dev/null", str(git)]
    for home in homes:
        args += ["--remount-ro", str(home)]
    args += ["--dir", workdir, "--chdir", workdir]
    if gpu:
        for device in gpu_device_paths():
            args += ["--dev-bind", str(device), str(device)]
    return args


@functools.cache
def detect(python: str = sys.executable) -> Containment:
    """Whether bubblewrap can contain reproducers here: it runs ``python`` in a sandbox
    built as a real run's is, once per process and interpreter."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Containment(None, "bwrap (bubblewrap) is not installed")
    workdir = "/tmp/failpedia-verify-probe"
    command = bwrap_arguments(
        bwrap, workdir, _python_paths(python), network=False, gpu=False, limits=DEFAULT_LIMITS
    )
    try:
        done = subprocess.run(
            [*command, "--", python, "-I", "-S", "-c", "pass"],
            env=clean_environment(workdir),
            cwd="/",
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return Containment(bwrap, f"{bwrap} could not be run: {error}")
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        message = lines[-1] if lines else f"exited {done.returncode}"
        lowered = message.lower()
        if any(word in lowered for word in ("uid map", "namespace", "permission denied")):
            message += f" ({USERNS_HINT})"
        return Containment(bwrap, f"{bwrap} cannot create a sandbox here: {message}")
    parent = cgroups.pids_parent() if os.geteuid() == 0 else None
    return Containment(bwrap, None, parent)


@dataclass
class Place:
    """Where and how one run starts: the command prefix, its folders, its environment."""

    prefix: list[str]  # put before the launcher's command
    cwd: str
    workdir: str  # the working folder, as the reproducer sees it
    contained: bool

    @property
    def env(self) -> dict[str, str]:
        return clean_environment(self.workdir)


@contextlib.contextmanager
def prepared(
    containment: Containment,
    *,
    python: str,
    entry_folder: Path,
    network: bool,
    gpu: bool,
    limits: Limits,
) -> Iterator[Place]:
    """Everything a run needs around its launcher; removed again when the run is over."""
    if not containment.available or containment.bwrap is None:
        folder = tempfile.mkdtemp(prefix="failpedia-verify-")
        try:
            yield Place([], folder, folder, contained=False)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    workdir = f"/tmp/failpedia-verify-{secrets.token_hex(6)}"
    visible = [*_python_paths(python), entry_folder]
    command = bwrap_arguments(
        containment.bwrap, workdir, visible, network=network, gpu=gpu, limits=limits
    )
    with contextlib.ExitStack() as stack:
        if containment.pids_parent is not None:
            procs = stack.enter_context(
                cgroups.pids_group(containment.pids_parent, limits.processes)
            )
            command = ["/bin/sh", "-c", JOIN_CGROUP, str(procs), *command]
        yield Place([*command, "--"], "/", workdir, contained=True)
