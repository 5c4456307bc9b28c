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


def engine_refusals(canonicals: Sequence[str]) -> dict[int, str] | None:
    """Patterns the linear-time engine refuses, by position, with its reason; None when
    Hyperscan is not installed here (the dialect check alone then applies)."""
    try:
        import hyperscan
    except ImportError:
        return None
    expressions = [hyperscan_form(canonical) for canonical in canonicals]
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
