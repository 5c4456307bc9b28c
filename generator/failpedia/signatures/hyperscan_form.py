"""The Hyperscan form of a canonical pattern, and which patterns Hyperscan refuses.

``failpedia diagnose`` finds candidate lines with Hyperscan (``diagnose.coarse``); the
validator refuses, at ``failpedia validate`` and ``mkdocs build`` alike, a pattern that
passes the dialect but that Hyperscan would not compile. Both use this one translation.
"""

from __future__ import annotations

from collections.abc import Sequence

# Part of the cache key of compiled databases: change it whenever hyperscan_form changes
# what it produces.
FORM_VERSION = "form-2"


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


# Canonical patterns Hyperscan compiled in this process. Whether it refuses a pattern
# depends on that pattern alone, so checking a catalog again (each rebuild of
# `mkdocs serve`) compiles only the patterns it has not seen: at 1,000 entries the whole
# set takes over a second to compile. Refused patterns are not kept: they are compiled
# again, to report them again.
_accepted: set[str] = set()
MAX_ACCEPTED = 100_000


def engine_refusals(canonicals: Sequence[str]) -> dict[int, str] | None:
    """Patterns the linear-time engine refuses, by position, with its reason; None when
    Hyperscan is not installed here (the dialect check alone then applies)."""
    try:
        import hyperscan
    except ImportError:
        return None
    pending = sorted(set(canonicals) - _accepted)
    if len(_accepted) + len(pending) > MAX_ACCEPTED:
        _accepted.clear()
    reasons: dict[str, str] = {}
    if pending:
        expressions = [hyperscan_form(canonical) for canonical in pending]
        try:
            database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            database.compile(expressions=expressions, ids=list(range(len(expressions))))
            _accepted.update(pending)
        except Exception:  # noqa: BLE001 - find which pattern, one at a time
            for canonical, expression in zip(pending, expressions, strict=True):
                try:
                    hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK).compile(
                        expressions=[expression]
                    )
                    _accepted.add(canonical)
                except Exception as error:  # noqa: BLE001 - the engine's message is the reason
                    reasons[canonical] = str(error) or type(error).__name__
    return {
        position: reasons[canonical]
        for position, canonical in enumerate(canonicals)
        if canonical in reasons
    }
