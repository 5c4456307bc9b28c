"""Put the failure that started it all first.

Findings are ordered by, in turn: role (initiating, then downstream, then a wrapper that
reports whichever failure it caught), causal level (an
entry after every found entry that causes it), what the failure does to the run (a crash
or a hang before a warning or a silently wrong result, which a run survives: where a
warning is what led to the crash, the catalog says so with ``causes`` and the causal level
puts it first), torchrun's root cause, the earliest time a prefix gave, and the order of
first appearance. The site's log page applies the same
order in ``diagnose-worker.js``, with the ranks of roles and kinds it reads from
``signatures.json`` (``signatures.finding_order``).
"""

from __future__ import annotations

import math

from failpedia.diagnose.findings import Finding, RootCause
from failpedia.signatures.finding_order import KIND_ORDER, ROLE_ORDER
from failpedia.signatures.index_format import SignatureIndex


def assumed_year_of(findings: list[Finding]) -> int:
    years = [finding.min_year for finding in findings if finding.min_year is not None]
    return min(years) if years else 1970


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
    for finding in findings:
        finding.level = level[finding.entry.id]


def order_findings(
    findings: list[Finding], index: SignatureIndex, root: RootCause, assumed_year: int
) -> list[Finding]:
    for finding in findings:
        finding.root_cause = finding.in_root_block or not root.ranks.isdisjoint(finding.rank_set)
        choose_first(finding, assumed_year)
    causal_levels(findings, index)

    def key(finding: Finding) -> tuple[int, int, int, int, float, tuple[int, int, int, int]]:
        assert finding.first is not None
        return (
            ROLE_ORDER.get(finding.entry.role, 0),
            finding.level,
            KIND_ORDER.get(finding.entry.kind, 0),
            0 if finding.root_cause else 1,
            finding.first_time if finding.first_time is not None else math.inf,
            finding.first.order,
        )

    return sorted(findings, key=key)
