"""Containment for reproducers: bubblewrap where it works, and what holds without it.

Reproducers are code from pull requests, run on CI and GPU runners. Where ``bwrap``
(bubblewrap) is installed and can create namespaces (probed once per process), each run
gets:

- its own PID, IPC, UTS and cgroup namespaces, and its own network namespace (loopback
  only) unless the entry declares ``reproducer.network: true``; it dies with the runner
  (``--die-with-parent``), and every process of the namespace dies when its launcher
  exits;
- an unprivileged user: a runner working as its own user runs it in a user namespace
  with no capabilities; a runner working as root (a CI container, a GPU runner) runs it
  as ``nobody`` for real, so that files only root may read (``/etc/shadow``, host keys)
  stay unreadable, which a user namespace mapped onto root would not give. The launcher
  alone keeps the capabilities it needs to switch to that user and to stop the run;
- a read-only view of the filesystem, with the runner's home folder, the checkout's
  ``.git``, ``/run`` and ``/var/run`` (the sockets of the container engine, the session
  bus, agents) and the user's runtime folder hidden; the Python installation and the
  entry's folder stay visible;
- a read-only ``/dev`` holding only the basic devices, and a private ``/tmp`` (holding
  its working folder, HOME and TMPDIR) and ``/dev/shm``, each a tmpfs of
  ``Limits.scratch_bytes``: nothing it writes reaches the machine, and it cannot fill
  the disk;
- at most ``Limits.processes`` tasks (RLIMIT_NPROC, counted for the run's user; for a
  runner working as root, a pids cgroup too where one can be created), and at most
  ``Limits.memory_bytes`` of data per process (RLIMIT_DATA: an allocation past it fails
  inside the reproducer, which ends with its own error, and the runner goes on);
- the ``/dev/nvidia*`` devices for ``cuda`` and ``multi-gpu`` entries.

Without bubblewrap ``failpedia verify`` refuses to run reproducers unless asked
explicitly (``--unsafe-uncontained``); such a run still gets a clean environment from the
start, a launcher that is not a child of the runner and stops every descendant, a memory
limit and a temporary working folder; ``Containment.summary`` says what is then not
enforced.
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
from dataclasses import dataclass, field
from pathlib import Path

from failpedia.verify import cgroups
from failpedia.verify.environment import clean_environment

MIB = 1 << 20
GIB = 1 << 30
PROBE_SECONDS = 60
# What a runner working as root runs reproducers as; nobody's ids on most systems.
NOBODY = "nobody"
NOBODY_ID = 65534
# The only capabilities left to the launcher when the runner works as root: to become
# the unprivileged user in the reproducer's process, and to signal its processes.
LAUNCHER_CAPABILITIES = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL")
# Hidden because they hold the host's unix sockets (the container engine, the session
# bus, ssh and gpg agents).
SOCKET_PLACES = (Path("/run"), Path("/var/run"))
# A tmpfs over the runner's home, made read-only once the paths under it are bound back.
HIDING_BYTES = MIB
# Joins the cgroup named by its first argument, then runs the rest.
JOIN_CGROUP = 'echo 0 > "$0" && exec "$@"'
# The launcher runs as ``python -I -S -c LAUNCHER_SOURCE``: by its text, since the package
# may not be importable where it runs.
LAUNCHER_SOURCE = Path(__file__).with_name("launcher.py").read_text(encoding="utf-8")
USERNS_HINT = (
    "user namespaces look disabled or restricted here; on Ubuntu 23.10 and later run "
    "`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (or give bwrap an "
    "AppArmor profile that allows them)"
)


def default_memory_bytes() -> int:
    """Half of this machine's memory, and at least 4 GiB: enough for any reproducer the
    catalog holds, while one that runs away cannot take the machine down."""
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 4 * GIB
    return max(4 * GIB, physical // 2)


@dataclass(frozen=True)
class Limits:
    """What one contained run may use."""

    scratch_bytes: int = 512 * MIB  # each of /tmp (the working folder) and /dev/shm
    processes: int = 4096  # tasks, threads included: torch starts one per core
    memory_bytes: int = field(default_factory=default_memory_bytes)  # data per process


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
    def run_as(self) -> tuple[int, int] | None:
        """The (uid, gid) reproducers are switched to, or None to keep the runner's own
        (in a user namespace): a runner working as root runs them as nobody."""
        return nobody_ids() if os.geteuid() == 0 else None

    @property
    def process_limit(self) -> str | None:
        """How the process limit is enforced, or None when it is not."""
        if self.pids_parent is not None:
            return f"RLIMIT_NPROC, and a pids cgroup per run under {self.pids_parent}"
        return "RLIMIT_NPROC for the run's user"

    def summary(self, limits: Limits = DEFAULT_LIMITS) -> str:
        """What ``failpedia verify`` says about containment before it runs anything."""
        if not self.available:
            return (
                f"containment unavailable: {self.problem}\n"
                "reproducers run uncontained, each from a launcher with a clean environment "
                "that stops every descendant it keeps, with a memory limit; not enforced: a "
                "read-only filesystem (they can write wherever your user can, the "
                "repository included), no network, a disk quota, a process limit, an "
                "unprivileged user, a private process tree (they can read other processes' "
                "environments through /proc and signal them, and as root end every process "
                "of the machine). Install bubblewrap (apt-get install bubblewrap) to "
                "contain them."
            )
        size = limits.scratch_bytes // MIB
        user = "as nobody" if self.run_as is not None else "in a user namespace"
        return (
            f"containment: bubblewrap ({self.bwrap}): read-only filesystem with your home, "
            f"the checkout's .git and /run hidden; read-only /dev; private /tmp (the working "
            f"folder) and /dev/shm of {size} MiB each; no network unless an entry declares "
            f"it; {user}, without capabilities; a private process tree that dies with the "
            f"run; at most {limits.processes} tasks ({self.process_limit}); "
            f"{limits.memory_bytes // MIB} MiB of data per process"
        )


def gpu_device_paths(dev: Path = Path("/dev")) -> list[Path]:
    """The NVIDIA device nodes (and ``nvidia-caps``) a CUDA reproducer needs."""
    try:
        return sorted(path for path in dev.iterdir() if path.name.startswith("nvidia"))
    except OSError:
        return []


@functools.cache
def nobody_ids() -> tuple[int, int]:
    """The ids of the unprivileged user ``nobody`` (65534 where it has no entry)."""
    try:
        entry = pwd.getpwnam(NOBODY)
    except KeyError:
        return NOBODY_ID, NOBODY_ID
    return entry.pw_uid, entry.pw_gid


def _socket_places() -> list[Path]:
    """Folders holding the host's unix sockets, to be hidden: ``/run``, ``/var/run``
    where it is a folder of its own, and the user's runtime folder."""
    found: list[Path] = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    for place in [*SOCKET_PLACES, *([Path(runtime)] if runtime else [])]:
        if place.is_absolute() and place.is_dir() and not place.is_symlink():
            resolved = place.resolve()
            if resolved != Path("/") and not any(_under(resolved, [kept]) for kept in found):
                found.append(resolved)
    return found


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


def _bind_back(visible: Iterable[Path], hidden: list[Path]) -> list[tuple[Path, Path]]:
    """(destination, source) of the ``--ro-bind`` mounts that show the ``visible`` paths
    lying under a hidden place, at the path a reproducer uses and at the path it
    resolves to."""
    binds: dict[Path, Path] = {}  # destination -> source
    for path in visible:
        literal = Path(os.path.abspath(path))
        real = literal.resolve()
        if real.exists() and (_under(literal, hidden) or _under(real, hidden)):
            binds.setdefault(literal, real)
            binds.setdefault(real, real)
    kept: list[tuple[Path, Path]] = []
    for destination, source in sorted(binds.items(), key=lambda item: len(item[0].parts)):
        if any(
            destination.is_relative_to(outer) and source == origin / destination.relative_to(outer)
            for outer, origin in kept
        ):
            continue  # already shown by the bind of a folder above it
        kept.append((destination, source))
    return kept


def _bind_arguments(binds: list[tuple[Path, Path]], hidden: list[Path]) -> list[str]:
    """The ``--ro-bind`` arguments for ``binds``, each after the folders that lead to it
    on a hiding tmpfs, made readable by every user (bubblewrap would make them 0700,
    closed to a run as nobody)."""
    args: list[str] = []
    made: set[Path] = set()
    for number, (destination, source) in enumerate(binds):
        for folder in reversed(destination.parents):
            on_tmpfs = any(folder != place and _under(folder, [place]) for place in hidden)
            inside_bind = _under(folder, [shown for shown, _ in binds[:number]])
            if on_tmpfs and folder not in made and not inside_bind:
                args += ["--perms", "0755", "--dir", str(folder)]
                made.add(folder)
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
    """The bubblewrap command line that runs a reproducer contained (up to ``--``).

    As root, bubblewrap makes no user namespace (one mapped onto root would let the
    reproducer read what only root may) and keeps only ``LAUNCHER_CAPABILITIES``, which
    the launcher drops when it starts the reproducer as nobody."""
    args = [bwrap, "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if os.geteuid() == 0:
        for capability in LAUNCHER_CAPABILITIES:
            args += ["--cap-add", capability]
    else:
        args.append("--unshare-user")
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        args.append("--unshare-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    scratch = str(limits.scratch_bytes)
    for scratch_place in ("/tmp", "/dev/shm"):
        args += ["--perms", "1777", "--size", scratch, "--tmpfs", scratch_place]
    sockets = _socket_places()
    homes = [home for home in _homes() if not _under(home, sockets)]
    for place in [*sockets, *homes]:
        args += ["--size", str(HIDING_BYTES), "--tmpfs", str(place)]
    hidden = [Path("/tmp"), *sockets, *homes]
    visible = list(visible)
    binds = _bind_back(visible, hidden)
    args += _bind_arguments(binds, hidden)
    shown = [destination for destination, _ in binds]
    for git in dict.fromkeys(_checkout_git(path.resolve()) for path in visible):
        if git is not None and (not _under(git, hidden) or _under(git, shown)):
            if git.is_dir():
                args += ["--tmpfs", str(git), "--remount-ro", str(git)]
            else:
                args += ["--ro-bind", "/dev/null", str(git)]
    for place in [*sockets, *homes]:
        args += ["--remount-ro", str(place)]
    # Anyone may write the working folder: the run's own user, whichever it is, and
    # nobody else lives in this private /tmp.
    args += ["--perms", "0777", "--dir", workdir, "--chdir", workdir]
    if gpu:
        for device in gpu_device_paths():
            args += ["--dev-bind", str(device), str(device)]
    args += ["--remount-ro", "/dev"]
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
    status_read, status_write = os.pipe()
    lifeline_read, lifeline_write = os.pipe()
    command += ["--", *_probe_launcher(python, status_write, lifeline_read)]
    command += ["--", python, "-I", "-S", "-c", "pass"]
    try:
        done = subprocess.run(
            command,
            env=clean_environment(workdir),
            cwd="/",
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_SECONDS,
            check=False,
            pass_fds=(status_write, lifeline_read),
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return Containment(bwrap, f"{bwrap} could not be run: {error}")
    finally:
        for descriptor in (status_write, lifeline_read, lifeline_write):
            os.close(descriptor)
        with os.fdopen(status_read, "rb") as status_file:
            status = status_file.read().decode("ascii", errors="replace").split()
    if done.returncode != 0 or "exit" not in status:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        message = lines[-1] if lines else f"exited {done.returncode}"
        lowered = message.lower()
        if any(word in lowered for word in ("uid map", "namespace", "permission denied")):
            message += f" ({USERNS_HINT})"
        return Containment(bwrap, f"{bwrap} cannot create a sandbox here: {message}")
    if status[status.index("exit") + 1 :][:1] != ["0"]:
        user = "nobody" if os.geteuid() == 0 else "the sandbox's user"
        return Containment(
            bwrap,
            f"{python} cannot run in the sandbox as {user} ({' '.join(status)}): the "
            "interpreter and its packages must be readable by that user",
        )
    parent = cgroups.pids_parent() if os.geteuid() == 0 else None
    return Containment(bwrap, None, parent)


def _probe_launcher(python: str, status: int, lifeline: int) -> list[str]:
    """The launcher as a contained run uses it, as the same user."""
    command = [python, "-I", "-S", "-c", LAUNCHER_SOURCE, "--status", str(status)]
    command += ["--lifeline", str(lifeline), "--pid-namespace", "--leftover-grace", "0"]
    if os.geteuid() == 0:
        command += ["--user", "{}:{}".format(*nobody_ids())]
    return command


@dataclass
class Place:
    """Where and how one run starts: the command prefix, its folders, its environment."""

    prefix: list[str]  # put before the launcher's command
    cwd: str
    workdir: str  # the working folder, as the reproducer sees it
    contained: bool
    run_as: tuple[int, int] | None = None  # the user the launcher switches the run to

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
        yield Place([*command, "--"], "/", workdir, contained=True, run_as=containment.run_as)
