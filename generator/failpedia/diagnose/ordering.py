"""Put the failure that started it all first.

Findings are sorted by the keys ``signatures.finding_order.FINDING_ORDER`` names, in its
order (a survived failure that causes nothing found, role, causal level, kind, torchrun's
root cause, first time, first place); this module computes each key. A crash or a hang
comes before a warning a run survives, a wrapper's crash too: where a warning is what led
to the crash, the catalog says so with ``causes`` and the causal level puts it first.
The site's log page sorts by the same list of keys, which it reads from
``signatures.json`` (``order``), in ``diagnose-worker.js``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from failpedia.diagnose.findings import Finding, RootCause
from failpedia.signatures.finding_order import (
    DEFAULT_YEAR,
    FINDING_ORDER,
    KIND_ORDER,
    ROLE_ORDER,
)
from failpedia.signatures.index_format import SignatureIndex


def assumed_year_of(findings: list[Finding]) -> int:
    years = [finding.min_year for finding in findings if finding.min_year is not None]
    return min(years) if years else DEFAULT_YEAR


def choose_first(finding: Finding, assumed_year: int) -> None:
    finding.first, finding.first_time = finding.first_of(assumed_year)


def causal_levels(findings: list[Finding], index: SignatureIndex) -> None:
    """Causal level: one more than the deepest found entry that causes this one."""
    found = {finding.entry.id for finding in findings}
    edges: set[tuple[str, str]] = set()
    for entry in index.entries:
        if entry.id not in found:
            continue
        edges.update((entry.id, target) for target in entry.causes if target in found)
        edges.update((source, entry.id) for source in entry.caused_by if source in found)
    level = dict.fromkeys(found, 0)
    for _ in range(len(found)):
        changed = False
        for source, target in sorted(edges):
            if level[target] < level[source] + 1 <= len(found):
                level[target] = level[source] + 1
                changed = True
        if not changed:
            break
    sources = {source for source, _ in edges}
    for finding in findings:
        finding.level = level[finding.entry.id]
        finding.leads = finding.entry.id in sources


def order_findings(
    findings: list[Finding], index: SignatureIndex, root: RootCause, assumed_year: int
) -> list[Finding]:
    for finding in findings:
        finding.root_cause = finding.in_root_block or not root.ranks.isdisjoint(finding.rank_set)
        choose_first(finding, assumed_year)
    causal_levels(findings, index)

    return sorted(
        findings, key=lambda finding: tuple(KEYS[name](finding) for name in FINDING_ORDER)
    )


def _first_time(finding: Finding) -> float:
    return finding.first_time if finding.first_time is not None else math.inf


def _first_place(finding: Finding) -> tuple[int, int, int, int]:
    assert finding.first is not None
    return finding.first.order


def _first_match_length(finding: Finding) -> int:
    """The length of the first occurrence's match, negated: the longer first."""
    assert finding.first is not None
    start, end = finding.first.span
    return start - end


# How each key FINDING_ORDER names is computed (the worker has the same table).
KEYS: dict[str, Callable[[Finding], int | float | tuple[int, int, int, int]]] = {
    "survived_alone": lambda finding: (
        1 if KIND_ORDER.get(finding.entry.kind, 0) > 0 and not finding.leads else 0
    ),
    "role": lambda finding: ROLE_ORDER.get(finding.entry.role, 0),
    "causal_level": lambda finding: finding.level,
    "kind": lambda finding: KIND_ORDER.get(finding.entry.kind, 0),
    "root_cause": lambda finding: 0 if finding.root_cause else 1,
    "first_time": _first_time,
    "first_place": _first_place,
    "first_match_length": _first_match_length,
}
