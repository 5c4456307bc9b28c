"""The order findings are listed in, as data both matchers read.

``failpedia diagnose`` (``diagnose.ordering``) and the log page's worker sort findings by
the keys ``FINDING_ORDER`` names, in its order, with the ranks of roles and kinds below;
all of it is published in ``signatures.json`` (``order``), so the worker takes it from
there instead of keeping a copy. Each engine knows how to compute each named key; the
order of the keys, and the ranks, are written here only.
"""

from __future__ import annotations

from typing import Any

# An initiating failure first, then what follows from one, then a wrapper (a launcher's
# exit status, a compiler backend's exception), which reports whichever failure it caught.
ROLE_ORDER = {"initiating": 0, "downstream": 1, "wrapper": 2}
# What each role means, in the words every output uses.
ROLE_TEXT = {
    "initiating": "initiates the failure",
    "downstream": "follows from another failure",
    "wrapper": "reports whichever failure it caught",
}
# What a diagnosis's summary line says of the failure that started it all, by the first
# of these roles among its findings: (role, said of one finding, said of several); {where}
# names the logs read ("this log", "these logs", "this output"). An initiating failure is
# listed first; where every finding follows from another, the initiating one is elsewhere
# (most often in another rank's log); where only wrappers were found, it is in the error
# they carry, which no entry knows.
STARTER_TEXT = (
    ("initiating", "the one that started it first.", "the one that started it first."),
    (
        "downstream",
        "it follows from another failure. The initiating failure is not in {where}; "
        "look at the other ranks' logs.",
        "all follow from another failure. The initiating failure is not in {where}; "
        "look at the other ranks' logs.",
    ),
    (
        "wrapper",
        "it reports a failure caught in {where}: read the error it carries, which no "
        "entry matches yet.",
        "they report a failure caught in {where}: read the error it carries, which no "
        "entry matches yet.",
    ),
)


def starter_text(roles: list[str], where: str) -> str:
    """The summary line's words for findings of ``roles`` (one per finding) read in
    ``where``; none, or a role the table does not know, reads as an initiating failure."""
    for role, one, several in STARTER_TEXT:
        if role in roles:
            return (one if len(roles) == 1 else several).format(where=where)
    return STARTER_TEXT[0][1]


# Failures a run survives come after those that end it, among otherwise equal findings,
# and of those a result silently wrong (gradients that never flow, data dropped) before a
# warning: the wrong result is what the reader has to act on.
KIND_ORDER = {"crash": 0, "hang": 0, "silent-wrong-result": 1, "warning": 2}


# The year a time without one (glog's) is ordered in where no finding's time gives a year;
# otherwise the earliest year they give. It only orders: such a time is shown as written.
DEFAULT_YEAR = 1970
# The keys findings are sorted by, in turn (the first that differs decides):
FINDING_ORDER = (
    # A failure the run survives (a warning, a silently wrong result) that causes no other
    # finding goes after every failure that ends the run, wrappers included: a deprecation
    # warning above a worker's crash says nothing of the crash.
    "survived_alone",
    "role",  # ROLE_ORDER: an initiating failure first, a wrapper last
    "causal_level",  # after every found entry that causes it (the catalog's links)
    "kind",  # KIND_ORDER: a failure that ends the run before one it survives
    "root_cause",  # seen on the rank torchrun named as the root cause, or in that block
    "first_time",  # the earliest time a prefix gave its first occurrence; none last
    "first_place",  # where it was first seen: the input, the line, the segment
    # Two entries that claim the same line: the one whose pattern takes more of it is the
    # more specific ("Can't get attribute 'X' on <module '__main__' (built-in)>" over any
    # "Can't get attribute 'X' on <module ...>"), so it goes first.
    "first_match_length",
)


def ends_the_run(kind: str) -> bool:
    """Whether a failure of this kind ends the run (ranked first in ``KIND_ORDER``): CI
    annotations and editors' problem lists call it an error, the others warnings. A kind
    the table does not know counts as ending it, as it sorts."""
    return KIND_ORDER.get(kind, 0) == 0


def published_finding_order() -> dict[str, Any]:
    """The keys, ranks and wordings above, as ``signatures.json`` carries them for the log page."""
    return {
        "keys": list(FINDING_ORDER),
        "default_year": DEFAULT_YEAR,
        "roles": dict(ROLE_ORDER),
        "kinds": dict(KIND_ORDER),
        "role_text": dict(ROLE_TEXT),
        "starter_text": [list(item) for item in STARTER_TEXT],
    }
