"""Run an entry's reproducer both ways and decide whether it proves the failure and its fix.

The reproducer contract: ``python repro.py`` prints a line matched by one of the entry's
signature patterns; ``python repro.py --fixed`` exits 0 and prints no such line.

Each mode runs in a fresh subprocess, in its own process group and its own temporary
working folder (removed afterwards), with a clean environment (``clean_environment``),
no stdin, stdout and stderr merged into one pipe, and the entry's time limit. Output is
read by a thread into a bounded buffer (the first ``HEAD_BYTES`` and the last
``TAIL_BYTES``; the total is counted), so a reproducer printing 100 MB costs no memory.

Processes are never left behind: on a time limit the whole tree is stopped (SIGTERM to
the process group, a grace period, SIGKILL), including descendants that left the group
with ``setsid``; they are found by walking ``/proc/<pid>/task/*/children`` while the
reproducer runs and by looking for processes still holding the output pipe. The same
cleanup runs after a reproducer exits normally, so a forked child cannot outlive it.

Verdicts:

- ``proved``: broken mode matched a signature; fixed mode exited 0 and matched none.
- ``not-reproduced``: broken mode matched no signature (also when it crashed, e.g.
  with SIGSEGV, without printing one).
- ``fix-failed``: fixed mode matched a signature, exited non-zero or was killed by a
  signal.
- ``timed-out``: either mode ran past the time limit.
- ``harness-error``: the runner could not run the reproducer (script missing, the
  interpreter could not be started).
- ``skipped``: not run, with a reason: the device it needs is unavailable, or a declared
  requirement ``name==version`` is not installed at that version. A skip never proves.

Fixed mode runs only once broken mode has reproduced the failure.

This module never imports torch: what the machine offers is determined once per run in
a subprocess (``fingerprint.gather``) and passed in as ``Capabilities``.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .catalog import CatalogEntry
from .patterns import CompiledPattern

PROVED = "proved"
NOT_REPRODUCED = "not-reproduced"
FIX_FAILED = "fix-failed"
TIMED_OUT = "timed-out"
HARNESS_ERROR = "harness-error"
SKIPPED = "skipped"
VERDICTS = (PROVED, NOT_REPRODUCED, FIX_FAILED, TIMED_OUT, HARNESS_ERROR, SKIPPED)
# Verdicts that leave a run successful; every other one fails it.
PASSING_VERDICTS = frozenset({PROVED, SKIPPED})

FIXED_FLAG = "--fixed"
HEAD_BYTES = 64 * 1024
TAIL_BYTES = 192 * 1024
READ_CHUNK = 64 * 1024
MAX_LINE_CHARS = 4096
MAX_MATCHED_LINES = 20
EXCERPT_HEAD_BYTES = 2 * 1024
EXCERPT_TAIL_BYTES = 6 * 1024
EXCERPT_BYTES = EXCERPT_HEAD_BYTES + EXCERPT_TAIL_BYTES
KILL_GRACE_SECONDS = 3.0  # between SIGTERM and SIGKILL when a reproducer runs too long
LEFTOVER_GRACE_SECONDS = 1.0  # the same, for processes left behind by one that exited
READER_JOIN_SECONDS = 2.0  # how long output may still drain once everything is killed
GPU_DEVICES = frozenset({"cuda", "multi-gpu"})

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-_])")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_IS_LINUX = sys.platform.startswith("linux")


# --------------------------------------------------------------------------- results


@dataclass
class MatchedLine:
    """A captured line that a signature pattern matched."""

    line: str
    signature: int  # index into the entry's signatures


@dataclass
class ModeResult:
    """One run of the reproducer, broken or fixed."""

    mode: str
    args: list[str]
    exit_code: int | None  # None when killed by a signal
    signal: str | None  # e.g. "SIGSEGV", or the signal the runner stopped it with
    seconds: float
    timed_out: bool
    output_bytes: int
    truncated: bool  # output exceeded HEAD_BYTES + TAIL_BYTES; the middle was not kept
    matched_lines: list[MatchedLine] = field(default_factory=list)

    @property
    def matched(self) -> bool:
        return bool(self.matched_lines)


@dataclass
class VerificationResult:
    """The verdict on one entry's reproducer, with what both modes did."""

    entry: str
    verdict: str
    reason: str
    device: str
    started_at: str
    timeout: int
    broken: ModeResult | None = None
    fixed: ModeResult | None = None
    matched_signature: int | None = None
    output_excerpt: str = ""

    @property
    def passed(self) -> bool:
        return self.verdict in PASSING_VERDICTS

    def to_dict(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "verdict": self.verdict,
            "reason": self.reason,
            "device": self.device,
            "started_at": self.started_at,
            "timeout": self.timeout,
            "broken": None if self.broken is None else asdict(self.broken),
            "fixed": None if self.fixed is None else asdict(self.fixed),
            "matched_signature": self.matched_signature,
            "output_excerpt": self.output_excerpt,
        }


@dataclass(frozen=True)
class Capabilities:
    """What the machine offers reproducers, determined once per run."""

    cuda: bool = False
    gpu_count: int = 0
    packages: Mapping[str, str | None] = field(default_factory=dict)

    @classmethod
    def from_fingerprint(cls, environment: Mapping[str, Any]) -> Capabilities:
        return cls(
            cuda=bool(environment.get("cuda_available")),
            gpu_count=int(environment.get("gpu_count") or 0),
            packages=dict(environment.get("packages") or {}),
        )

    def installed_version(self, name: str) -> str | None:
        if name in self.packages:
            return self.packages[name]
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None


def now_iso() -> str:
    """The current UTC time in ISO 8601, to the second: ``2024-05-01T12:00:00Z``."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def requirement_names(requirements: Iterable[str]) -> list[str]:
    return [requirement.split("==", 1)[0].strip() for requirement in requirements]


def _same_version(installed: str, wanted: str) -> bool:
    if installed == wanted:
        return True
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:  # pragma: no cover - packaging ships with pip and setuptools
        return False
    try:
        return Version(installed) == Version(wanted)
    except InvalidVersion:
        return False


def skip_reason(item: CatalogEntry, capabilities: Capabilities) -> str | None:
    """Why this machine cannot run the entry's reproducer, or None when it can."""
    reproducer = item.entry.reproducer
    if reproducer.device == "cuda" and not capabilities.cuda:
        return "needs a GPU (device: cuda); torch.cuda.is_available() is false here"
    if reproducer.device == "multi-gpu" and (not capabilities.cuda or capabilities.gpu_count < 2):
        found = capabilities.gpu_count if capabilities.cuda else 0
        return f"needs 2 or more GPUs (device: multi-gpu); found {found}"
    for requirement in reproducer.requirements:
        name, _, wanted = requirement.partition("==")
        installed = capabilities.installed_version(name.strip())
        if installed is None:
            return f"requires {requirement}; {name} is not installed"
        if not _same_version(installed, wanted.strip()):
            return f"requires {requirement}; {name} {installed} is installed"
    return None


def skipped_result(item: CatalogEntry, reason: str) -> VerificationResult:
    return VerificationResult(
        entry=item.entry.id,
        verdict=SKIPPED,
        reason=reason,
        device=item.entry.reproducer.device,
        started_at=now_iso(),
        timeout=item.entry.reproducer.timeout,
    )


# --------------------------------------------------------------------------- environment


def clean_environment(folder: str | os.PathLike[str]) -> dict[str, str]:
    """The environment a reproducer runs in: nothing of the caller's but PATH and locale.

    ``TORCH_*`` and other settings of the user's shell do not leak in; HOME and TMPDIR
    point at the reproducer's own temporary folder.
    """
    folder = os.fspath(folder)
    env = {
        "PATH": os.environ.get("PATH") or os.defpath,
        "HOME": folder,
        "TMPDIR": folder,
        "PYTHONNOUSERSITE": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONUNBUFFERED": "1",
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
    }
    for name in ("LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


# --------------------------------------------------------------------------- output


class BoundedOutput:
    """The first ``head_limit`` and last ``tail_limit`` bytes of a stream, and its size."""

    def __init__(self, head_limit: int = HEAD_BYTES, tail_limit: int = TAIL_BYTES) -> None:
        self.head_limit = head_limit
        self.tail_limit = tail_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.tail_starts_line = True  # the byte before the tail (if dropped) was a newline

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        excess = len(self.tail) - self.tail_limit
        if excess > 0:
            self.tail_starts_line = self.tail[excess - 1 : excess] in (b"\n", b"\r")
            del self.tail[:excess]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def lines(self) -> list[str]:
        """Captured lines, ANSI colour stripped, each cut to ``MAX_LINE_CHARS``.

        When the middle of the output was dropped, the line cut in two at the head's end
        and the tail's partial first line are kept as the fragments they are, except a
        tail fragment that does not start a line (``^`` would match it wrongly).
        """
        if not self.truncated:
            return split_lines(bytes(self.head + self.tail))
        head = split_lines(bytes(self.head))
        tail = split_lines(bytes(self.tail))
        if tail and not self.tail_starts_line:
            tail = tail[1:]
        return head + tail

    def excerpt(self) -> str:
        """About ``EXCERPT_BYTES`` of the output, start and end, as text."""
        return excerpt(bytes(self.head), bytes(self.tail), self.total)


def clean_text(data: bytes) -> str:
    """Decode output, strip ANSI escapes and turn ``\\r`` line breaks into ``\\n``."""
    text = _ANSI.sub("", data.decode("utf-8", errors="replace"))
    return _LINE_BREAK.sub("\n", text)


def split_lines(data: bytes) -> list[str]:
    text = _ANSI.sub("", data.decode("utf-8", errors="replace"))
    return [line[:MAX_LINE_CHARS] for line in _LINE_BREAK.split(text)]


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


class _Reader(threading.Thread):
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


# --------------------------------------------------------------------------- processes


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
        self.pgid = pid  # start_new_session makes the child its own group leader
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
        children of the runner are other reproducers between fork and exec, never ours.
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

    def kill(self, process: subprocess.Popen[bytes], grace: float) -> str | None:
        """Stop the whole tree: SIGTERM, up to ``grace`` seconds, then SIGKILL.

        Returns the name of the last signal sent, or None when nothing was left.
        """
        self.scan()
        self.scan_pipe_holders()
        if process.poll() is not None and not self.anything_alive():
            return None
        self.signal_all(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            process.poll()
            if process.returncode is not None and not self.anything_alive():
                return "SIGTERM"
            time.sleep(0.05)
        self.signal_all(signal.SIGKILL)
        process.wait()
        deadline = time.monotonic() + grace
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


# --------------------------------------------------------------------------- running


class HarnessError(Exception):
    """The runner could not run the reproducer at all."""


@dataclass
class Capture:
    """A finished run: what happened, and the captured output."""

    result: ModeResult
    output: BoundedOutput
    cancelled: bool = False


def run_mode(
    script: Path,
    args: list[str],
    timeout: float,
    patterns: list[CompiledPattern],
    *,
    mode: str = "broken",
    cancel: threading.Event | None = None,
    python: str = sys.executable,
) -> Capture:
    """Run ``python script *args`` once in a fresh folder and capture bounded output.

    Raises ``HarnessError`` when the interpreter cannot be started.
    """
    folder = tempfile.mkdtemp(prefix="failpedia-verify-")
    try:
        return _run_in(folder, script, args, timeout, patterns, mode, cancel, python)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run_in(
    folder: str,
    script: Path,
    args: list[str],
    timeout: float,
    patterns: list[CompiledPattern],
    mode: str,
    cancel: threading.Event | None,
    python: str,
) -> Capture:
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            [python, str(script), *args],
            cwd=folder,
            env=clean_environment(folder),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as error:
        raise HarnessError(f"cannot start {python}: {error.strerror or error}") from error
    assert process.stdout is not None
    fd = process.stdout.fileno()
    output = BoundedOutput()
    reader = _Reader(fd, output)
    reader.start()
    tree = ProcessTree(process.pid, os.fstat(fd).st_ino)
    timed_out = cancelled = False
    killed_with: str | None = None
    try:
        interval = 0.01
        while process.poll() is None:
            elapsed = time.monotonic() - started
            if elapsed >= timeout:
                timed_out = True
                break
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            tree.scan()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(min(interval, timeout - elapsed))
            interval = min(interval * 2, 0.2)
        seconds = time.monotonic() - started
        if timed_out or cancelled:
            killed_with = tree.kill(process, KILL_GRACE_SECONDS)
        else:
            tree.kill(process, LEFTOVER_GRACE_SECONDS)
    except BaseException:
        tree.kill(process, 0.0)
        raise
    finally:
        reader.finish(READER_JOIN_SECONDS)
        if not reader.is_alive():
            process.stdout.close()
    code = process.returncode
    signal_name: str | None = None
    exit_code: int | None = code
    if code is not None and code < 0:
        exit_code = None
        try:
            signal_name = signal.Signals(-code).name
        except ValueError:
            signal_name = f"signal {-code}"
    if timed_out or cancelled:
        signal_name = killed_with or signal_name
    result = ModeResult(
        mode=mode,
        args=list(args),
        exit_code=exit_code,
        signal=signal_name,
        seconds=round(seconds, 3),
        timed_out=timed_out,
        output_bytes=output.total,
        truncated=output.truncated,
        matched_lines=match_lines(output.lines(), patterns),
    )
    return Capture(result, output, cancelled)


def _describe_exit(mode: ModeResult) -> str:
    if mode.signal is not None:
        return f"was killed by {mode.signal}"
    return f"exited {mode.exit_code}"


def verify_entry(
    item: CatalogEntry,
    capabilities: Capabilities,
    *,
    cancel: threading.Event | None = None,
    python: str = sys.executable,
) -> VerificationResult:
    """Run the entry's reproducer broken and fixed (unless skipped) and give the verdict."""
    reason = skip_reason(item, capabilities)
    if reason is not None:
        return skipped_result(item, reason)
    reproducer = item.entry.reproducer
    result = VerificationResult(
        entry=item.entry.id,
        verdict=HARNESS_ERROR,
        reason="",
        device=reproducer.device,
        started_at=now_iso(),
        timeout=reproducer.timeout,
    )
    script = item.folder / reproducer.script
    if not script.is_file():
        result.reason = f"reproducer {reproducer.script} not found in {item.folder}"
        return result
    limit = reproducer.timeout
    try:
        broken = run_mode(
            script, [], limit, item.patterns, mode="broken", cancel=cancel, python=python
        )
    except HarnessError as error:
        result.reason = str(error)
        return result
    result.broken = broken.result
    result.output_excerpt = broken.output.excerpt()
    if broken.result.matched_lines:
        result.matched_signature = broken.result.matched_lines[0].signature
    if broken.cancelled:
        result.reason = "interrupted"
        return result
    if broken.result.timed_out:
        result.verdict = TIMED_OUT
        result.reason = f"broken mode ran past the {limit} s limit"
        return result
    if not broken.result.matched:
        result.verdict = NOT_REPRODUCED
        result.reason = (
            f"broken mode printed no line matching a signature ({_describe_exit(broken.result)})"
        )
        return result
    try:
        fixed = run_mode(
            script, [FIXED_FLAG], limit, item.patterns, mode="fixed", cancel=cancel, python=python
        )
    except HarnessError as error:
        result.reason = str(error)
        return result
    result.fixed = fixed.result
    if fixed.cancelled:
        result.reason = "interrupted"
    elif fixed.result.timed_out:
        result.verdict = TIMED_OUT
        result.reason = f"fixed mode ran past the {limit} s limit"
    elif fixed.result.matched:
        result.verdict = FIX_FAILED
        line = fixed.result.matched_lines[0].line.strip()
        result.reason = f"fixed mode printed a signature: {line[:200]}"
    elif fixed.result.exit_code != 0:
        result.verdict = FIX_FAILED
        result.reason = f"fixed mode {_describe_exit(fixed.result)}"
    else:
        result.verdict = PROVED
        result.reason = (
            f"broken mode printed signature {result.matched_signature}; "
            "fixed mode exited 0 without it"
        )
    return result
