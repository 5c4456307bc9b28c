"""Verification records: ``verification/<id>.json``, written by ``failpedia verify``.

A record holds the newest result per environment::

    {"entry": "<id>", "results": [{...result..., "environment": {...fingerprint...}}]}

Results are keyed by the fingerprint's ``key``: a new result replaces the one of the same
environment and leaves the others alone. Files are written atomically (a temporary file
in the same folder, flushed and fsynced, then ``os.replace``), so a reader never sees a
half-written record. Skipped results prove nothing and are never written. Records are
never hand-edited.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
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
    key = environment.get("key")
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
    path = record_path(folder, entry_id)
    _write_atomically(path, text + "\n")
    return path, problem
