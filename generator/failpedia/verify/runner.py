"""Run an entry's reproducer both ways and decide whether it proves the failure and its fix.

The reproducer contract: ``python repro.py`` prints a line matched by one of the entry's
signature patterns; ``python repro.py --fixed`` exits 0 and prints no such line.

Each mode runs in a fresh subprocess, in its own process group and its own temporary
working folder (removed afterwards), with a clean environment (``environment``), no
stdin, stdout and stderr merged into one pipe (``capture``), and the entry's time
limit; every process it started is stopped with it (``reaper``). The verdicts are
described in ``results``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from failpedia.catalog.catalog import CatalogEntry
from failpedia.signatures.dialect import CompiledPattern
from failpedia.verify.capture import BoundedOutput, OutputReader, match_lines
from failpedia.verify.environment import (
    Capabilities,
    clean_environment,
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

FIXED_FLAG = "--fixed"
KILL_GRACE_SECONDS = 3.0  # between SIGTERM and SIGKILL when a reproducer runs too long
LEFTOVER_GRACE_SECONDS = 1.0  # the same, for processes left behind by one that exited
READER_JOIN_SECONDS = 2.0  # how long output may still drain once everything is killed


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
    reader = OutputReader(fd, output)
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
