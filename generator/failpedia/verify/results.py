"""What a verification found: verdicts, each mode's run, and the result of an entry.

It also reads the stored records (``verification/<id>.json``, written by ``records``):
pages import this module only, never the runner, since showing a proof must not load the
machinery that runs reproducers.

Verdicts:

- ``proved``: broken mode matched a signature; fixed mode exited 0 and matched none.
- ``not-reproduced``: broken mode matched no signature (also when it crashed, e.g.
  with SIGSEGV, without printing one).
- ``fix-failed``: fixed mode matched a signature, exited non-zero, was killed by a
  signal, or did not run its check region to the end (a failed assertion is a non-zero
  exit).
- ``timed-out``: either mode ran past the time limit.
- ``harness-error``: the runner could not run the reproducer (script missing, the
  interpreter could not be started), or a mode stopped at a ``ModuleNotFoundError`` that
  is not the entry's signature: a missing package is not a stale entry.
- ``skipped``: not run, with a reason: the device it needs is unavailable, or a declared
  requirement ``name==version`` is not installed at that version. A skip never proves.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from failpedia.catalog.bounded_read import RefusedFile, read_bounded

PROVED = "proved"
NOT_REPRODUCED = "not-reproduced"
FIX_FAILED = "fix-failed"
TIMED_OUT = "timed-out"
HARNESS_ERROR = "harness-error"
SKIPPED = "skipped"
VERDICTS = (PROVED, NOT_REPRODUCED, FIX_FAILED, TIMED_OUT, HARNESS_ERROR, SKIPPED)
# Each verdict as a page shows it (the coverage page's table).
VERDICT_TEXT = {
    PROVED: "Proved",
    NOT_REPRODUCED: "Not reproduced",
    FIX_FAILED: "Fix failed",
    TIMED_OUT: "Timed out",
    HARNESS_ERROR: "Harness error",
    SKIPPED: "Skipped",
}
# Records come with pull requests too: read as regular files inside the records folder,
# of at most this size (a record keeps one output excerpt per environment).
MAX_RECORD_BYTES = 8_000_000
# Verdicts that leave a run successful; every other one fails it.
PASSING_VERDICTS = frozenset({PROVED, SKIPPED})


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
    exit_code: int | None  # None when killed by a signal, or when its launcher was killed
    signal: str | None  # e.g. "SIGSEGV", or the signal the runner stopped it with
    seconds: float
    timed_out: bool
    output_bytes: int
    truncated: bool  # output exceeded HEAD_BYTES + TAIL_BYTES; the middle was not kept
    matched_lines: list[MatchedLine] = field(default_factory=list)
    # Whether the check region ran to its end (None: the script has none, or an old record).
    check_passed: bool | None = None
    missing_module: str | None = None  # a module the run could not import, if one

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
    reproducer: str | None = None  # the digest of what ran (catalog.reproducer_digest)

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
            "reproducer": self.reproducer,
            "output_excerpt": self.output_excerpt,
        }


def now_iso() -> str:
    """The current UTC time in ISO 8601, to the second: ``2024-05-01T12:00:00Z``."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def record_path(folder: Path, entry_id: str) -> Path:
    return Path(folder) / f"{entry_id}.json"


def environment_key(result: dict[str, Any]) -> str | None:
    environment = result.get("environment")
    key = environment.get("key") if isinstance(environment, dict) else None
    if isinstance(key, str):
        return key
    return None


# The types of the fields of a stored result that pages read (missing fields are allowed:
# older records lack some), of its modes and of its environment.
_NUMBER = (int, float)
_RESULT_TYPES: dict[str, tuple[type, ...]] = {
    "entry": (str,),
    "verdict": (str,),
    "reason": (str,),
    "device": (str,),
    "started_at": (str,),
    "timeout": _NUMBER,
    "broken": (dict, type(None)),
    "fixed": (dict, type(None)),
    "matched_signature": (int, type(None)),
    "reproducer": (str, type(None)),
    "output_excerpt": (str, type(None)),
    "environment": (dict,),
}
_MODE_TYPES: dict[str, tuple[type, ...]] = {"seconds": _NUMBER}
_ENVIRONMENT_TYPES: dict[str, tuple[type, ...]] = {
    name: (str, type(None)) for name in ("key", "python", "os", "torch", "gpu_name")
}
_TYPE_NAMES = {
    str: "a string",
    int: "a number",
    float: "a number",
    dict: "an object",
    list: "a list",
    bool: "true or false",
    type(None): "null",
}


def _type_name(value: object) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _wrong_type(field: str, value: object, allowed: tuple[type, ...]) -> str | None:
    """``field: must be ..., not ...`` where ``value`` has none of the ``allowed`` types."""
    if isinstance(value, allowed) and not (isinstance(value, bool) and bool not in allowed):
        return None
    names = list(dict.fromkeys(_TYPE_NAMES[kind] for kind in allowed))
    return f"{field}: must be {' or '.join(names)}, not {_type_name(value)}"


def _result_problem(index: int, result: dict[str, Any]) -> str | None:
    """The first field of a stored result whose type pages cannot show; None if none."""
    checks = [(f"results[{index}]", result, _RESULT_TYPES)]
    for name, types in (("broken", _MODE_TYPES), ("fixed", _MODE_TYPES)):
        if isinstance(result.get(name), dict):
            checks.append((f"results[{index}].{name}", result[name], types))
    if isinstance(result.get("environment"), dict):
        checks.append((f"results[{index}].environment", result["environment"], _ENVIRONMENT_TYPES))
    for where, values, types in checks:
        for name, allowed in types.items():
            if name in values:
                problem = _wrong_type(f"{where}.{name}", values[name], allowed)
                if problem:
                    return problem
    return None


def load_record(folder: Path, entry_id: str) -> tuple[dict[str, Any] | None, str | None]:
    """The record of an entry and a problem message.

    ``(None, None)`` when there is no record; ``(None, message)`` when the file cannot be
    read, is not a record, or a field of a result has a type pages cannot show (the
    message names the first such field); never raises.
    """
    path = record_path(folder, entry_id)
    try:
        text = read_bounded(path, within=Path(folder), limit=MAX_RECORD_BYTES).decode("utf-8")
    except RefusedFile as refused:
        return None, None if refused.missing else f"{path}: {refused.message}"
    except UnicodeDecodeError as error:
        return None, f"{path}: cannot read the record: {error}"
    try:
        data = json.loads(text)
    except ValueError as error:
        return None, f"{path}: not valid JSON: {error}"
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        return None, f'{path}: not a verification record (needs {{"entry", "results": [...]}})'
    if data.get("entry") != entry_id:
        return None, f"{path}: records entry {data.get('entry')!r}, expected {entry_id!r}"
    if not all(isinstance(item, dict) for item in data["results"]):
        return None, f"{path}: every item of results must be an object"
    for index, item in enumerate(data["results"]):
        problem = _result_problem(index, item)
        if problem:
            return None, f"{path}: {problem}"
    return data, None
