"""Rules for entries documented from public reports instead of proved by a reproducer.

An entry carries a reproducer or, for a failure no script can trigger on demand, evidence:
at least two public reports, each quoting the failure's line as pasted there. The quotes
are what show that the entry's patterns catch real logs, so each must be matched by one of
them; like signature texts, they are published in the neutral path form (no reporter's
home or interpreter prefix); with no reproducer, no signature can claim to be a
reproducer's output. Such
entries stay a small share of the catalog (``MAX_EVIDENCE_SHARE``): a proof beats a
citation wherever one is possible.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from failpedia.catalog.catalog import CatalogEntry
from failpedia.catalog.yaml_source import FieldPath
from failpedia.signatures.line_rules import LINE_CAP
from failpedia.signatures.machine_paths import normalise_paths

MAX_EVIDENCE_SHARE = 0.15


def check_proof_source(item: CatalogEntry, problem: Callable[[FieldPath, str], None]) -> None:
    """Exactly one of ``reproducer`` and ``evidence``; the evidence's own rules."""
    entry = item.entry
    if entry.reproducer is None and entry.evidence is None:
        problem(
            ("reproducer",),
            "missing: every entry has a reproducer, or `evidence` (public reports) when no "
            "script can trigger the failure on demand",
        )
        return
    if entry.reproducer is not None and entry.evidence is not None:
        problem(
            ("evidence",),
            "an entry has a reproducer or evidence, not both: a reproducer proves what "
            "evidence can only document; remove `evidence`",
        )
        return
    if entry.evidence is None:
        return
    for index, signature in enumerate(entry.signatures):
        if signature.verified_from == "reproducer-output":
            problem(
                ("signatures", index, "verified_from"),
                "an entry without a reproducer has no reproducer output to copy from; "
                "copy the wording from the framework's source (`framework-source`)",
            )
    seen: dict[str, int] = {}
    for index, report in enumerate(entry.evidence.reports):
        url = report.url.rstrip("/")
        if url in seen:
            problem(
                ("evidence", "reports", index, "url"),
                f"the same thread as reports[{seen[url]}]: each report is another thread",
            )
        seen.setdefault(url, index)
        quote = report.quote
        path: FieldPath = ("evidence", "reports", index, "quote")
        neutral = normalise_paths(quote)
        if len(quote.strip().splitlines()) != 1:
            problem(path, "one line: the failure's line exactly as the report shows it")
        elif neutral != quote:
            problem(
                path,
                "holds a path of the reporter's machine; pages publish paths in the neutral "
                f"form: {neutral}",
            )
        elif not any(pattern.search(quote.strip()[:LINE_CAP]) for pattern in item.patterns):
            problem(
                path,
                "no signature pattern matches it: the patterns must catch the line as real "
                "logs print it (add the wording this report shows as a signature, from the "
                "framework's source)",
            )


def evidence_share_problem(entries: Sequence[CatalogEntry]) -> str | None:
    """Why the catalog holds too many entries documented only from reports, if it does."""
    documented = sorted(item.entry.id for item in entries if item.entry.evidence is not None)
    allowed = math.floor(MAX_EVIDENCE_SHARE * len(entries))
    if len(documented) <= allowed:
        return None
    return (
        f"{len(documented)} of {len(entries)} entries are documented from reports instead of "
        f"proved by a reproducer; at most {MAX_EVIDENCE_SHARE:.0%} ({allowed}) may be. Write "
        "a reproducer for one of them, or add entries that have one. Documented: "
        + ", ".join(documented)
    )
