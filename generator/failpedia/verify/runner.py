"""Run an entry's reproducer both ways and decide whether it proves the failure and its fix.

The reproducer contract: ``python repro.py`` prints a line matched by one of the entry's
signature patterns; ``python repro.py --fixed`` exits 0 and prints no such line.

Each mode runs contained where the machine allows (``sandbox``: bubblewrap), else with
what holds without it, and always through the launcher (``launcher``), started with a
clean environment (``environment``); its standard input carries only the check
bootstrap (``check_bootstrap``), read before the script starts; stdout and stderr are
merged into one pipe (``capture``, which scrubs credentials). The launcher reports the
reproducer's exit on a status pipe and stops every process of the run when the runner
closes the lifeline pipe (the time limit, an interruption) or dies; the sandbox, or for an
uncontained run the reaper (``reaper``), stops whatever is left. The verdicts are described in
``results``.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from failpedia.catalog.catalog import CatalogEntry
from failpedia.catalog.reproducer_digest import reproducer_digest
from failpedia.signatures.dialect import CompiledPattern
from failpedia.verify import sandbox
from failpedia.verify.capture import BoundedOutput, OutputReader, match_lines
from failpedia.verify.check_bootstrap import CheckedRun, watched_run
from failpedia.verify.environment import (
    GPU_DEVICES,
    Capabilities,
    skip_reason,
    skipped_result,
)
from failpedia.verify.reaper import ProcessTree
from failpedia.verify.results import (
    FIX_FAILED,
    HARNESS_ERROR,
    NOT_REPRODUCED,
    PROVED,
    TIMED_OUT,
    ModeResult,
    VerificationResult,
    now_iso,
)
from failpedia.verify.sandbox import LAUNCHER_SOURCE

FIXED_FLAG = "--fixed"
_NO_MODULE = re.compile(r"\bModuleNotFoundError: No module named '([\w.]+)'")
KILL_GRACE_SECONDS = 3.0  # between SIGTERM and SIGKILL when a reproducer runs too long
LEFTOVER_GRACE_SECONDS = 1.0  # the same, for processes left behind by one that exited
LAUNCHER_SECONDS = 7.0  # how long the launcher may take to stop everything, beyond grace
READER_JOIN_SECONDS = 2.0  # how long output may still drain once everything is killed
STATUS_LINE_BYTES = 256


class HarnessError(Exception):
    """The runner could not run the reproducer at all."""


@dataclass
class Capture:
    """A finished run: what happened, and the captured output."""

    result: ModeResult
    output: BoundedOutput
    cancelled: bool = False


class LauncherReport:
    """What the launcher said on its status pipe: ``started``, the exit, ``stopped``."""

    def __init__(self, descriptor: int) -> None:
        self.descriptor = descriptor
        self.pending = b""
        self.closed = False
        self.started: int | None = None
        self.status: tuple[str, int] | None = None  # ("exit", code) or ("signal", number)
        self.ended_at: float | None = None
        self.stopped: str | None = None

    def read(self, seconds: float) -> None:
        """Wait up to ``seconds`` for news and take in every complete line."""
        if self.closed:
            return
        ready, _, _ = select.select([self.descriptor], [], [], max(seconds, 0.0))
        if not ready:
            return
        try:
            chunk = os.read(self.descriptor, 4096)
        except OSError:
            chunk = b""
        if not chunk:
            self.closed = True
            return
        *lines, self.pending = (self.pending + chunk).split(b"\n")
        self.pending = self.pending[-STATUS_LINE_BYTES:]
        for line in lines:
            self._take(line.decode("ascii", errors="replace").split())

    def _take(self, words: list[str]) -> None:
        if len(words) != 2:
            return
        kind, value = words
        if kind == "started" and value.isdigit() and self.started is None:
            self.started = int(value)
        elif kind in ("exit", "signal") and self.status is None:
            with contextlib.suppress(ValueError):
                self.status = (kind, int(value))
                self.ended_at = time.monotonic()
        elif kind == "stopped" and value in ("SIGTERM", "SIGKILL"):
            self.stopped = value

    def wait_closed(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self.closed and (remaining := deadline - time.monotonic()) > 0:
            self.read(remaining)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def run_mode(
    script: Path,
    args: list[str],
    timeout: float,
    patterns: list[CompiledPattern],
    *,
    mode: str = "broken",
    cancel: threading.Event | None = None,
    python: str = sys.executable,
    containment: sandbox.Containment | None = None,
    limits: sandbox.Limits = sandbox.DEFAULT_LIMITS,
    network: bool = False,
    device: str = "cpu",
) -> Capture:
    """Run ``python script *args`` once, contained where possible, and capture bounded
    output. ``containment`` defaults to what ``sandbox.detect`` finds for ``python``.

    Raises ``HarnessError`` when the reproducer's launcher cannot be started.
    """
    if containment is None:
        containment = sandbox.detect(python)
    with sandbox.prepared(
        containment,
        python=python,
        entry_folder=script.parent,
        network=network,
        gpu=device in GPU_DEVICES,
        limits=limits,
    ) as place:
        return _run_in(place, script, args, timeout, patterns, mode, cancel, python, limits)


def _launcher_command(
    place: sandbox.Place, python: str, status: int, lifeline: int, limits: sandbox.Limits
) -> list[str]:
    command = [*place.prefix, python, "-I", "-S", "-c", LAUNCHER_SOURCE]
    command += ["--status", str(status), "--lifeline", str(lifeline)]
    command += ["--grace", str(KILL_GRACE_SECONDS)]
    command += ["--leftover-grace", str(LEFTOVER_GRACE_SECONDS)]
    command += ["--max-data-bytes", str(limits.memory_bytes)]
    if place.contained:
        command += ["--pid-namespace", "--max-processes", str(limits.processes)]
        if place.run_as is not None:
            command += ["--user", "{}:{}".format(*place.run_as)]
    else:
        command.append("--detach")
    return command


def _program_input(watched: CheckedRun | None) -> int:
    """The reproducer's standard input: a pipe holding the check bootstrap, already
    closed for writing (it fits in a pipe's buffer), or /dev/null without one."""
    if watched is None:
        return os.open(os.devnull, os.O_RDONLY)
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, watched.program)
    finally:
        os.close(write_end)
    return read_end


def _run_in(
    place: sandbox.Place,
    script: Path,
    args: list[str],
    timeout: float,
    patterns: list[CompiledPattern],
    mode: str,
    cancel: threading.Event | None,
    python: str,
    limits: sandbox.Limits,
) -> Capture:
    status_read, status_write = os.pipe()
    lifeline_read, lifeline_write = os.pipe()
    command = _launcher_command(place, python, status_write, lifeline_read, limits)
    watched = _watched(script)
    if watched is None:
        command += ["--", python, str(script), *args]
    else:
        command += ["--", python, *watched.arguments, *args]
    started = time.monotonic()
    program = _program_input(watched)
    try:
        process = subprocess.Popen(
            command,
            cwd=place.cwd,
            env=place.env,
            stdin=program,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(status_write, lifeline_read),
        )
    except OSError as error:
        for descriptor in (status_read, lifeline_write):
            os.close(descriptor)
        raise HarnessError(f"cannot start {command[0]}: {error.strerror or error}") from error
    finally:
        os.close(status_write)
        os.close(lifeline_read)
        os.close(program)
    assert process.stdout is not None
    fd = process.stdout.fileno()
    output = BoundedOutput()
    if watched is not None:
        output.watch(watched.passed_line)
    reader = OutputReader(fd, output)
    reader.start()
    report = LauncherReport(status_read)
    tree: ProcessTree | None = None
    timed_out = cancelled = False
    try:
        while not report.closed and report.status is None:
            elapsed = time.monotonic() - started
            if elapsed >= timeout:
                timed_out = True
                break
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            report.read(min(0.1, timeout - elapsed))
            if tree is None and report.started is not None and not place.contained:
                tree = ProcessTree(report.started, os.fstat(fd).st_ino)
            if tree is not None:
                tree.scan()
        seconds = (report.ended_at or time.monotonic()) - started
        os.close(lifeline_write)  # the launcher stops what is left of the run
        lifeline_write = -1
        grace = KILL_GRACE_SECONDS if timed_out or cancelled else LEFTOVER_GRACE_SECONDS
        report.wait_closed(grace + LAUNCHER_SECONDS)
    finally:
        if lifeline_write >= 0:
            os.close(lifeline_write)
        _stop_what_is_left(process, tree)
        reader.finish(READER_JOIN_SECONDS)
        if not reader.is_alive():
            process.stdout.close()
        os.close(status_read)
    if report.started is None and not (timed_out or cancelled):
        lines = output.excerpt().strip().splitlines() or [f"exit status {process.returncode}"]
        raise HarnessError(f"the reproducer's launcher did not start: {lines[0][:300]}")
    exit_code: int | None = None
    signal_name: str | None = None
    if report.status is not None:
        kind, number = report.status
        if kind == "exit":
            exit_code = number
        else:
            signal_name = _signal_name(number)
    if timed_out or cancelled:
        signal_name = report.stopped or signal_name or "SIGKILL"
    lines = output.lines()
    result = ModeResult(
        mode=mode,
        args=list(args),
        exit_code=exit_code,
        signal=signal_name,
        seconds=round(seconds, 3),
        timed_out=timed_out,
        output_bytes=output.total,
        truncated=output.truncated,
        matched_lines=match_lines(lines, patterns),
        check_passed=output.seen if watched is not None else None,
        missing_module=_missing_module(lines),
    )
    return Capture(result, output, cancelled)


def _watched(script: Path) -> CheckedRun | None:
    """How to run ``script`` with its check region watched (None without one)."""
    try:
        source = script.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return watched_run(str(script), source)


def _missing_module(lines: list[str]) -> str | None:
    """The module named by the last ``ModuleNotFoundError`` line of the output, if any."""
    for line in reversed(lines):
        found = _NO_MODULE.search(line)
        if found:
            return found.group(1)
    return None


def _stop_what_is_left(process: subprocess.Popen[bytes], tree: ProcessTree | None) -> None:
    """The launcher stops the run; this makes sure. Killing bubblewrap ends its sandbox;
    without one, the reaper looks for what the launcher may have left."""
    try:
        process.wait(1.0)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if tree is not None:
        tree.stop(LEFTOVER_GRACE_SECONDS)


def _describe_exit(mode: ModeResult) -> str:
    if mode.signal is not None:
        return f"was killed by {mode.signal}"
    if mode.exit_code is None:
        return "ended without an exit status: its launcher was killed"
    return f"exited {mode.exit_code}"


def verify_entry(
    item: CatalogEntry,
    capabilities: Capabilities,
    *,
    cancel: threading.Event | None = None,
    python: str = sys.executable,
    containment: sandbox.Containment | None = None,
) -> VerificationResult:
    """Run the entry's reproducer broken and fixed (unless skipped) and give the verdict,
    contained as ``containment`` allows (by default, what ``sandbox.detect`` finds)."""
    reason = skip_reason(item, capabilities)
    if reason is not None:
        return skipped_result(item, reason)
    reproducer = item.reproducer
    result = VerificationResult(
        entry=item.entry.id,
        verdict=HARNESS_ERROR,
        reason="",
        device=reproducer.device,
        started_at=now_iso(),
        timeout=reproducer.timeout,
        reproducer=reproducer_digest(item),
    )
    script = item.folder / reproducer.script
    if not script.is_file():
        result.reason = f"reproducer {reproducer.script} not found in {item.folder}"
        return result
    limit = reproducer.timeout

    def run(mode: str, args: list[str]) -> Capture:
        return run_mode(
            script,
            args,
            limit,
            item.patterns,
            mode=mode,
            cancel=cancel,
            python=python,
            containment=containment,
            network=reproducer.network,
            device=reproducer.device,
        )

    try:
        broken = run("broken", [])
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
    if not broken.result.matched and broken.result.missing_module:
        result.reason = _missing_reason("broken", broken.result.missing_module)
        return result
    if not broken.result.matched:
        result.verdict = NOT_REPRODUCED
        result.reason = (
            f"broken mode printed no line matching a signature ({_describe_exit(broken.result)})"
        )
        return result
    try:
        fixed = run("fixed", [FIXED_FLAG])
    except HarnessError as error:
        result.reason = str(error)
        return result
    result.fixed = fixed.result
    if fixed.cancelled:
        result.reason = "interrupted"
    elif fixed.result.timed_out:
        result.verdict = TIMED_OUT
        result.reason = f"fixed mode ran past the {limit} s limit"
    elif fixed.result.missing_module and not fixed.result.matched:
        result.reason = _missing_reason("fixed", fixed.result.missing_module)
    elif fixed.result.matched:
        result.verdict = FIX_FAILED
        line = fixed.result.matched_lines[0].line.strip()
        result.reason = f"fixed mode printed a signature: {line[:200]}"
    elif fixed.result.exit_code != 0:
        result.verdict = FIX_FAILED
        result.reason = f"fixed mode {_describe_exit(fixed.result)}"
    elif fixed.result.check_passed is False:
        result.verdict = FIX_FAILED
        result.reason = "fixed mode exited 0 but did not run its check region to the end"
    else:
        result.verdict = PROVED
        checked = ", and its check passed" if fixed.result.check_passed else ""
        result.reason = (
            f"broken mode printed signature {result.matched_signature}; "
            f"fixed mode exited 0 without it{checked}"
        )
    return result


def _missing_reason(mode: str, module: str) -> str:
    return (
        f"{mode} mode stopped at ModuleNotFoundError: no module named {module!r}; install it, "
        "or declare its package in reproducer.requirements"
    )
