"""Release claims a test can check: what a signature's ``releases`` ranges mean, and the
rules an entry file alone must keep for them.

A range names a package and the first (and, where the wording changed, the last) release
that emits the wording. ``covers`` is the one reading of a range, used by the validator's
order check and by the check against the installed release (``verify.release_claims``).
Each bound must be written in ``emitted_by`` too, so the page says what the test checks,
and ``source_text`` must be a piece of the signature's own text, so it is the real message.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from failpedia.catalog.model import ReleaseRange, Signature
from failpedia.catalog.yaml_source import FieldPath

# ``source_text`` shorter than this is found in unrelated messages as well.
MIN_SOURCE_TEXT = 12
_LEADING_RELEASE = re.compile(r"[0-9]+(?:\.[0-9]+)*")


def release_tuple(version: str) -> tuple[int, ...] | None:
    """``"2.13.0+cpu"`` -> ``(2, 13, 0)``: the release numbers a version starts with, or
    None when it starts with none."""
    found = _LEADING_RELEASE.match(version.strip())
    if found is None:
        return None
    return tuple(int(part) for part in found.group().split("."))


def covers(claim: ReleaseRange, version: str) -> bool | None:
    """Whether the range claims that ``version`` emits the wording: ``first`` or later,
    and, when ``last`` is given, no later than it (``2.13`` covers every 2.13.x). None
    when ``version`` has no release number."""
    release = release_tuple(version)
    first = release_tuple(claim.first)
    if release is None or first is None:
        return None
    if release < first:
        return False
    if claim.last is None:
        return True
    last = release_tuple(claim.last)
    return last is not None and release[: len(last)] <= last


def describe(claim: ReleaseRange) -> str:
    """The range as a page says it: ``torch 1.7 to 2.13``, ``torch 2.7 and later``."""
    if claim.last is None:
        return f"{claim.package} {claim.first} and later"
    if claim.last == claim.first:
        return f"{claim.package} {claim.first}"
    return f"{claim.package} {claim.first} to {claim.last}"


def _names_release(prose: str, release: str) -> bool:
    """Whether ``prose`` writes ``release`` as a release of its own (``1.7`` is not named
    by ``1.7.1`` or ``11.7``)."""
    return re.search(rf"(?<![\w.]){re.escape(release)}(?![\w]|\.[0-9])", prose) is not None


def check_release_ranges(
    signature: Signature, index: int, problem: Callable[[FieldPath, str], None]
) -> None:
    """Ranges in order, one per package, said in ``emitted_by``, with a real source text."""
    seen: set[str] = set()
    for number, claim in enumerate(signature.releases):
        path: FieldPath = ("signatures", index, "releases", number)
        package = claim.package.lower().replace("_", "-")
        if package in seen:
            problem((*path, "package"), f"a second range for {claim.package!r}; give one")
        seen.add(package)
        first, last = release_tuple(claim.first), release_tuple(claim.last or claim.first)
        if first is not None and last is not None and last < first:
            problem((*path, "last"), f"{claim.last} comes before first ({claim.first})")
        prose = signature.emitted_by
        if claim.package.lower() not in prose.lower():
            problem(
                (*path, "package"),
                f"`emitted_by` must name {claim.package}, so the page says what is checked",
            )
        named = (
            ("first", claim.first),
            ("last", claim.last),
            ("changed_in", claim.changed_in),
            ("removed_in", claim.removed_in),
        )
        for name, release in named:
            if release is not None and not _names_release(prose, release):
                problem(
                    (*path, name),
                    f"`emitted_by` must name {release}, so the page says the range that "
                    f"is checked ({describe(claim)})",
                )
        source_text = claim.source_text
        if source_text is not None:
            if len(source_text) < MIN_SOURCE_TEXT:
                problem(
                    (*path, "source_text"),
                    f"at least {MIN_SOURCE_TEXT} characters, so it is found in this message only",
                )
            elif source_text not in signature.text:
                problem(
                    (*path, "source_text"),
                    "must be a piece of this signature's `text` (the message as emitted)",
                )
