"""When each wording came and went: what a page says of a signature's releases ("added
in", "changed in", "removed in"), whether the entry's messages are still printed at all,
and the rule that keeps a change honest.

All of it is read from the signature's ``releases`` ranges (``release_rules``): ``first``
is where a wording was added, ``changed_in`` the release that prints another wording of
the same entry instead, ``removed_in`` the release that prints none. An entry whose every
signature was changed or removed is no longer emitted; it stays in the catalog for the
logs of older releases, and ``failpedia diagnose`` still finds it.
"""

from __future__ import annotations

from collections.abc import Callable

from failpedia.catalog.model import Entry, ReleaseRange, Signature
from failpedia.catalog.release_rules import covers, describe, release_tuple
from failpedia.catalog.yaml_source import FieldPath


def _same_package(one: str, other: str) -> bool:
    return one.lower().replace("_", "-") == other.lower().replace("_", "-")


def signature_history(signature: Signature) -> list[str]:
    """``["added in torch 1.7", "changed in torch 2.4"]``: each range's steps, in order."""
    steps = []
    for claim in signature.releases:
        steps.append(f"added in {claim.package} {claim.first}")
        if claim.changed_in is not None:
            steps.append(f"changed in {claim.package} {claim.changed_in}")
        if claim.removed_in is not None:
            steps.append(f"removed in {claim.package} {claim.removed_in}")
    return steps


def printed_by(entry: Entry) -> list[str]:
    """``["torch 1.7 and later"]``: the releases of each package that print any of the
    entry's wordings, from the signatures' ``releases`` ranges (one range per package, from
    the earliest ``first`` to the latest ``last``, open when any range is); empty where no
    signature has a range, since ``emitted_by`` is prose a page does not parse."""
    spans: dict[str, ReleaseRange] = {}
    for signature in entry.signatures:
        for claim in signature.releases:
            key = claim.package.lower().replace("_", "-")
            known = spans.get(key)
            if known is None:
                spans[key] = ReleaseRange(package=claim.package, first=claim.first, last=claim.last)
                continue
            if (release_tuple(claim.first) or ()) < (release_tuple(known.first) or ()):
                known.first = claim.first
            if known.last is not None and (
                claim.last is None
                or (release_tuple(claim.last) or ()) > (release_tuple(known.last) or ())
            ):
                known.last = claim.last
    return [describe(span) for _, span in sorted(spans.items())]


def _ended(claim: ReleaseRange) -> str | None:
    return claim.changed_in or claim.removed_in


def no_longer_emitted_since(entry: Entry) -> list[str]:
    """``["torch 2.4"]`` when no release since prints any of the entry's wordings (every
    signature has a range that was changed or removed), the latest such release of each
    package; empty while any wording is still printed or nothing says it is not."""
    latest: dict[str, tuple[tuple[int, ...], str]] = {}
    for signature in entry.signatures:
        ended = [claim for claim in signature.releases if _ended(claim) is not None]
        if not ended:
            return []
        for claim in ended:
            release = _ended(claim) or ""
            key = claim.package.lower().replace("_", "-")
            order = release_tuple(release) or ()
            if key not in latest or order > latest[key][0]:
                latest[key] = (order, f"{claim.package} {release}")
    return [text for _, text in sorted(latest.values(), key=lambda item: item[1])]


def check_release_history(entry: Entry, problem: Callable[[FieldPath, str], None]) -> None:
    """A range that ended says how, once, after its ``last`` (so the range ``failpedia
    releases`` checks stops before it); a change names a release that another wording of
    the entry is claimed for, so the page can say what it changed to."""
    for number, signature in enumerate(entry.signatures):
        for index, claim in enumerate(signature.releases):
            path: FieldPath = ("signatures", number, "releases", index)
            if claim.changed_in is not None and claim.removed_in is not None:
                problem(
                    (*path, "removed_in"),
                    "give `changed_in` (another wording replaced it) or `removed_in` (none "
                    "did), not both",
                )
                continue
            ended = _ended(claim)
            name = "changed_in" if claim.changed_in is not None else "removed_in"
            if ended is None:
                continue
            if claim.last is None:
                problem(
                    (*path, name),
                    f"needs `last` too, the last release that prints the wording (before "
                    f"{ended}), so the range the check reads ends there",
                )
                continue
            first, release = release_tuple(claim.first), release_tuple(ended)
            if covers(claim, ended) is not False or (first and release and release < first):
                problem(
                    (*path, name),
                    f"{ended} must come after last ({claim.last}): the range says {ended} "
                    "still prints it",
                )
                continue
            if claim.changed_in is not None and not _replaced(entry, number, claim):
                problem(
                    (*path, "changed_in"),
                    f"no other signature of this entry has a {claim.package} range that covers "
                    f"{claim.changed_in}: add the wording it changed to, with its range, or "
                    "say `removed_in`",
                )


def _replaced(entry: Entry, number: int, claim: ReleaseRange) -> bool:
    """Whether another signature of the entry is claimed for the release a change names."""
    release = claim.changed_in or ""
    return any(
        _same_package(other.package, claim.package) and covers(other, release)
        for index, signature in enumerate(entry.signatures)
        if index != number
        for other in signature.releases
    )
