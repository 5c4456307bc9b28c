"""The Hyperscan form of a canonical pattern, which patterns Hyperscan refuses, and the
user's cache of what it compiled.

``failpedia diagnose`` finds candidate lines with Hyperscan (``diagnose.coarse``); the
validator refuses, at ``failpedia validate`` and ``mkdocs build`` alike, a pattern that
passes the dialect but that Hyperscan would not compile. Both use this one translation.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Part of the cache key of compiled databases: change it whenever hyperscan_form changes
# what it produces.
FORM_VERSION = "form-2"
# How many accepted forms the cache remembers before it starts over.
ACCEPTED_LIMIT = 200_000


def hyperscan_form(canonical: str) -> bytes:
    """The canonical pattern as a Hyperscan byte pattern that matches at least as much.

    Anchors are dropped (lines are matched after their prefixes are removed; the exact
    check runs later), and a class that names non-ASCII characters becomes "any one to
    four bytes", since Hyperscan matches bytes and UTF-8 spreads such characters over
    several.
    """
    # Only when compiling: a cached database needs none of the dialect (diagnose start-up).
    from failpedia.signatures.dialect import DOT

    text = canonical.replace(DOT, "[^\\n\\r]")
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            out.append(text[index : index + 2])
            index += 2
        elif char == "[":
            end = index + 1
            if text.startswith("^", end):
                end += 1
            if text.startswith("]", end):
                end += 1
            while end < len(text) and text[end] != "]":
                end += 2 if text[end] == "\\" else 1
            members = text[index : end + 1]
            out.append("(?:[^\\n]{1,4})" if any(ord(c) > 127 for c in members) else members)
            index = end + 1
        elif char in "^$":
            index += 1
        else:
            out.append(char if ord(char) < 128 else "".join(f"\\x{b:02x}" for b in char.encode()))
            index += 1
    return "".join(out).encode("ascii")


def cache_dir() -> Path:
    """Where compiled databases and the engine's verdicts are cached for this user."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "failpedia"


# A file modified this recently may change again within its time's resolution: the
# cache's records of a file's size and time do not vouch for its bytes then.
RACY_SECONDS = 2.0


def trusted_before_ns() -> float:
    """The modification time (ns) a file must be older than for its recorded size and
    time to stand for its bytes (and a folder's for its listing)."""
    return (time.time() - RACY_SECONDS) * 1e9


def write_cache(path: Path, data: bytes) -> None:
    """Write a cache file whole or not at all (runs at the same time may race to write
    it); a cache that cannot be written is not an error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError:
        pass


def _accepted_file(hyperscan: Any) -> Path:
    """The cache of forms this Hyperscan compiled: one digest a line."""
    version = getattr(hyperscan, "__version__", "") or "unknown"
    key = hashlib.sha256(f"{FORM_VERSION} {version}".encode()).hexdigest()[:16]
    return cache_dir() / f"accepted-{key}.txt"


def _read_accepted(path: Path) -> set[str]:
    try:
        return set(path.read_text(encoding="ascii").split())
    except (OSError, UnicodeDecodeError):
        return set()


def _refusals(hyperscan: Any, expressions: list[bytes]) -> dict[int, str]:
    """Compile all the expressions at once; where that fails, one at a time for reasons."""
    try:
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        database.compile(expressions=expressions, ids=list(range(len(expressions))))
        return {}
    except Exception:  # noqa: BLE001 - find which pattern, one at a time
        pass
    refused = {}
    for position, expression in enumerate(expressions):
        try:
            hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK).compile(expressions=[expression])
        except Exception as error:  # noqa: BLE001 - the engine's own message is the reason
            refused[position] = str(error) or type(error).__name__
    return refused


def engine_refusals(canonicals: Sequence[str], use_cache: bool = True) -> dict[int, str] | None:
    """Patterns the linear-time engine refuses, by position, with its reason; None when
    Hyperscan is not installed here (the dialect check alone then applies).

    Compiling costs about a millisecond a pattern (5 s for 6,000, with the GIL held), so the
    forms this Hyperscan accepted are remembered in the user's cache, by digest, and only
    new forms are compiled. A refusal is never cached: it is found again every time.
    """
    try:
        import hyperscan
    except ImportError:
        return None
    expressions = [hyperscan_form(canonical) for canonical in canonicals]
    digests = [hashlib.sha256(expression).hexdigest()[:32] for expression in expressions]
    path = _accepted_file(hyperscan)
    known = _read_accepted(path) if use_cache else set()
    unknown = [position for position, digest in enumerate(digests) if digest not in known]
    if not unknown:
        return {}
    found = _refusals(hyperscan, [expressions[position] for position in unknown])
    refused = {unknown[index]: reason for index, reason in found.items()}
    if use_cache:
        accepted = {digests[position] for position in unknown if position not in refused}
        # Forms of deleted or edited patterns pile up; past the limit, keep today's only.
        merged = (
            known | accepted
            if len(known) < ACCEPTED_LIMIT
            else set(digests) - {digests[position] for position in refused}
        )
        write_cache(path, "\n".join(sorted(merged)).encode("ascii") + b"\n")
    return refused
