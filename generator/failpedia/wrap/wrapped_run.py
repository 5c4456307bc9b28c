"""The run behind ``failpedia run -- CMD ...``: a training command, its output passed
through live and diagnosed as it streams; the diagnosis follows on stderr when it ends.

The exit status is the command's (128 + n when signal n killed it; 127 when it could not
be found, 126 when it could not be run; 2 for our own bad usage, found before it starts).
Matching runs in a process of its own, fed through a spool on disk
(``background_matching``), so the command never waits for it: not for the index to be
compiled (only a missing index stops it from starting), nor for the matching; the
diagnosis is printed once the matcher has caught up. Nothing of the diagnosis may hurt
the run: should matching fail, the output still passes through and the failure is
reported at the end; output past the spool's cap (``--spool-cap``), or after the spool
could not be written, is passed through unmatched, and the diagnosis says so.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from failpedia.diagnose.findings import Diagnosis
from failpedia.diagnose.live import LiveDiagnosis
from failpedia.diagnose.output import diagnosis_json, run_text
from failpedia.signatures.index_format import IndexFile, SignatureIndex
from failpedia.signatures.line_rules import CONTEXT_LINES
from failpedia.signatures.redaction import redact
from failpedia.wrap.background_matching import DEFAULT_CAP, BackgroundDiagnosis
from failpedia.wrap.passthrough import Outcome, run_passing_through

STREAM_NAMES = ("stdout", "stderr")


@dataclass(frozen=True)
class RunOptions:
    """What the command line asked of the run (``failpedia run --help`` says each)."""

    context: int = CONTEXT_LINES
    engine: str | None = None
    json_path: Path | None = None  # also write the diagnosis as JSON here
    spool: Path | None = None
    spool_cap: int | None = None


def check_json_target(path: Path) -> str | None:
    """Why ``--json`` cannot be written there, found before the command runs; or None."""
    folder = path.parent
    if not folder.is_dir():
        return f"--json {path}: no folder {folder}"
    if path.is_dir():
        return f"--json {path}: is a folder"
    if not os.access(folder, os.W_OK):
        return f"--json {path}: cannot write in {folder}"
    return None


def _outcome_text(status: int) -> str:
    if status > 128 and status - 128 in signal.valid_signals():
        name = signal.Signals(status - 128).name
        return f"it was killed by {name}, exit status {status}"
    return f"it exited with status {status}"


def _write_json(path: Path, text: str) -> str | None:
    """Write the file whole or not at all; why it failed, or None."""
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text + "\n")
        os.replace(temporary, path)
    except OSError as error:
        return f"--json {path}: cannot write: {error.strerror or error}"
    return None


def _separator(outcome: Outcome) -> str:
    """A blank line before the diagnosis, and first a line end where the output left the
    cursor mid-line, so the diagnosis starts on a line of its own."""
    stderr_last = outcome.last_bytes[1]
    if stderr_last not in (b"", b"\n"):
        return "\n\n"
    stdout_last = outcome.last_bytes[0]
    if outcome.last_stream == 0 and os.isatty(1) and stdout_last not in (b"", b"\n"):
        return "\n\n"
    return "\n"


def run_wrapped(
    command: list[str],
    open_index: Callable[[], IndexFile | SignatureIndex],
    add_nearest: Callable[[Diagnosis], Diagnosis],
    options: RunOptions,
) -> int:
    """Run ``command`` passing its output through, matched in the background against the
    index ``open_index`` opens there; print the diagnosis (with ``add_nearest``'s nearest
    entries where nothing matched) to stderr. The command's exit status."""
    json_path = options.json_path

    def make_live() -> LiveDiagnosis:  # in the matcher, while the command runs
        return LiveDiagnosis(open_index(), STREAM_NAMES, options.context, options.engine)

    cap = DEFAULT_CAP if options.spool_cap is None else options.spool_cap
    watch = BackgroundDiagnosis(make_live, options.spool, cap)
    try:
        outcome = run_passing_through(command, watch.feed)
    except BaseException as error:
        watch.abandon()
        if not isinstance(error, OSError):
            raise
        reason = error.strerror or error
        print(f"failpedia run: cannot run {command[0]!r}: {reason}", file=sys.stderr)
        return 127 if isinstance(error, FileNotFoundError) else 126
    diagnosis = watch.finish()
    sys.stdout.flush()
    report = [_separator(outcome), watch.notes]
    if diagnosis is None:
        report.append(f"failpedia: the output could not be diagnosed ({watch.error})")
    else:
        diagnosis = add_nearest(diagnosis)
        diagnosis.warnings.extend(watch.warnings)
        for warning in diagnosis.warnings:
            report.append(f"warning: {warning}\n")
        report.append(run_text(diagnosis, _outcome_text(outcome.exit_status)))
        if watch.warnings and outcome.exit_status != 0:
            report.append(
                "\n\nPart of the output was not matched: `failpedia diagnose train.log` "
                "reads a saved log whole (`failpedia run -- CMD 2>&1 | tee train.log` "
                "saves one)."
            )
        elif not diagnosis.findings and outcome.exit_status != 0:
            report.append(
                "\n\nNo entry knows this failure yet. Keep the output "
                "(`failpedia run -- CMD 2>&1 | tee train.log`), then `failpedia report "
                "train.log` writes an issue body for it, with your environment."
            )
        if json_path is not None:
            problem = _write_json(json_path, diagnosis_json(diagnosis, scrub=redact))
            if problem:
                report.append(f"\nfailpedia run: {problem}")
    with suppress(OSError):  # stderr is gone: the exit status still tells
        print(redact("".join(report)), file=sys.stderr, flush=True)
    return outcome.exit_status
