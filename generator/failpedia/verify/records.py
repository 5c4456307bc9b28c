"""Verification records: ``verification/<id>.json``, written by ``failpedia verify``.

A record holds the newest result per environment::

    {"entry": "<id>", "results": [{...result..., "environment": {...fingerprint...}}]}

Results are keyed by the fingerprint's ``key``: a new result replaces the one of the same
environment and leaves the others alone. Files are written atomically (a temporary file
in the same folder, flushed and fsynced, then ``os.replace``), so a reader never sees a
half-written record. Skipped results prove nothing and are never written. Records are
never hand-edited.

Several ``failpedia verify`` processes may store results in the same record (parallel
runs, machines sharing a checkout): each read-modify-write holds an exclusive ``flock`` on
``.<id>.json.lock`` beside the record, so no update is lost. The lock file is removed when
released; a writer that locked a file already removed tries again.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from failpedia.verify.results import (
    SKIPPED,
    VerificationResult,
    environment_key,
    load_record,
    record_path,
)


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            mode = 0o644  # a record is an ordinary file of the repository
        os.fchmod(descriptor, mode)
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable where possible
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``.<name>.lock`` beside ``path`` for the ``with`` block."""
    lock = path.with_name(f".{path.name}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            held = os.fstat(descriptor)
            try:
                current = os.stat(lock)
            except FileNotFoundError:
                current = None
        except BaseException:
            os.close(descriptor)
            raise
        if current is not None and (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino):
            break
        os.close(descriptor)  # the holder before us removed this file: lock the new one
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)  # while still held, so no one locks a file about to vanish
        os.close(descriptor)


def update_record(
    folder: Path, result: VerificationResult | dict[str, Any], environment: dict[str, Any]
) -> tuple[Path | None, str | None]:
    """Store ``result`` as the newest for its environment; return (path, problem).

    The path is None when nothing was written (a skipped result). The problem names an
    existing record that could not be read and was replaced; other environments' results
    in a readable record are always kept.
    """
    data = result.to_dict() if isinstance(result, VerificationResult) else dict(result)
    if data.get("verdict") == SKIPPED:
        return None, None
    entry_id = data["entry"]
    data["environment"] = environment
    path = record_path(folder, entry_id)
    with _locked(path):
        return path, _merge_and_write(folder, entry_id, data)


def _merge_and_write(folder: Path, entry_id: str, data: dict[str, Any]) -> str | None:
    """Add ``data`` to the record of ``entry_id`` (under the record's lock); the problem."""
    key = environment_key(data)
    record, problem = load_record(folder, entry_id)
    if problem is not None:
        problem += "; replaced by a new record"
    kept = []
    for existing in (record or {}).get("results", []):
        if key is not None and environment_key(existing) == key:
            if str(existing.get("started_at", "")) > str(data.get("started_at", "")):
                data = existing  # a newer result for this environment is already there
            continue
        kept.append(existing)
    results = sorted([*kept, data], key=lambda item: environment_key(item) or "")
    text = json.dumps({"entry": entry_id, "results": results}, indent=2, ensure_ascii=False)
    _write_atomically(record_path(folder, entry_id), text + "\n")
    return problem


def merge_records(source: Path, destination: Path) -> tuple[int, list[str]]:
    """Add every result of the records in ``source`` to those in ``destination`` (newest
    per environment wins), as if they had been verified there: how records made on another
    machine come back. Returns the number of results merged and the problems met."""
    merged = 0
    problems = []
    for path in sorted(source.glob("*.json")):
        record, problem = load_record(source, path.stem)
        if record is None:
            problems.append(problem or f"{path.name}: not a record")
            continue
        for result in record.get("results", []):
            if not isinstance(result, dict) or not isinstance(result.get("environment"), dict):
                problems.append(f"{path.name}: a result without its environment")
                continue
            result = {**result, "entry": path.stem}
            _, problem = update_record(destination, result, result["environment"])
            if problem:
                problems.append(problem)
            merged += 1
    return merged, problems
