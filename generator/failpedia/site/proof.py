"""What the verification records say about an entry: proved where, stale, or not yet.

Reads the records `failpedia verify` writes (``verification/<id>.json``) and turns them
into what the entry page and the coverage page show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from failpedia.catalog.catalog import Catalog, CatalogEntry
from failpedia.catalog.problems import ProblemList, display_path
from failpedia.catalog.reproducer_digest import reproducer_digest
from failpedia.verify.results import load_record

PROVED = "proved"
NOT_REPRODUCED = "not-reproduced"
# Each status (``Proof.status``) as the coverage page's counts name it.
STATUS_TEXT = {
    "proved-gpu": "Proved on a GPU",
    "proved-cpu": "Proved on CPU",
    "stale": "Stale: changed since proved",
    "not-proved": "Not yet proved",
    "documented": "Documented from public reports",
}


def torch_version_key(version: str | None) -> tuple[int, ...]:
    """``"2.13.0+cpu"`` -> ``(2, 13, 0)``; unknown versions sort first."""
    numbers = re.findall(r"\d+", (version or "").split("+")[0])
    return tuple(int(number) for number in numbers[:3])


@dataclass(frozen=True)
class ProofRow:
    """One environment's newest result, as a row of the page's table."""

    environment: str
    torch: str
    gpu: str
    verdict: str
    date: str
    broken_seconds: float | None
    fixed_seconds: float | None


@dataclass
class Proof:
    status: str  # proved-gpu, proved-cpu, stale, not-proved, documented
    label: str
    rows: list[ProofRow] = field(default_factory=list)
    excerpt: str | None = None
    excerpt_environment: str | None = None
    stale_reason: str | None = None
    # The torch release of the run the status names (the GPU run for a GPU proof): the
    # entry's text may speak of another release, and the page says which one was proved.
    torch: str | None = None

    @property
    def proved_on_gpu(self) -> bool:
        return any(row.verdict == PROVED and row.gpu for row in self.rows)

    @property
    def last_proved(self) -> ProofRow | None:
        """The newest run that proved the fix, named under the page's title: None unless
        the entry stands proved now (a stale entry's old runs prove nothing of it)."""
        if self.status not in ("proved-gpu", "proved-cpu"):
            return None
        proved = [row for row in self.rows if row.verdict == PROVED]
        return max(proved, key=lambda row: row.date) if proved else None


def _environment_label(environment: dict[str, Any]) -> str:
    parts = [environment.get("gpu_name") or "CPU"]
    if environment.get("python"):
        parts.append(f"Python {environment['python']}")
    if environment.get("os"):
        parts.append(str(environment["os"]).split("-")[0])
    return ", ".join(parts)


def _run_label(environment: dict[str, Any]) -> str:
    """Where one captured run happened, torch release included: the output shown under it
    is that release's, whatever release the entry's text names."""
    label = _environment_label(environment)
    return f"{label}, torch {environment['torch']}" if environment.get("torch") else label


def _seconds(result: dict[str, Any], mode: str) -> float | None:
    value = (result.get(mode) or {}).get("seconds")
    return round(float(value), 1) if isinstance(value, (int, float)) else None


def proof_for(record: dict[str, Any] | None, digest: str | None = None) -> Proof:
    """Summarise a record; no record (or no results) means not yet proved. Results that
    name another version of the reproducer than ``digest`` (the entry as it is now) prove
    nothing about it; results from before digests were recorded count as they are."""
    results = [item for item in (record or {}).get("results", []) if isinstance(item, dict)]
    if not results:
        return Proof("not-proved", "Not yet proved")
    changed = [
        item
        for item in results
        if digest is not None and item.get("reproducer") not in (None, digest)
    ]
    if len(changed) == len(results):
        proof = proof_for({"results": results})
        proof.status = "stale"
        proof.stale_reason = (
            "reproducer or patterns changed after the last verification; "
            "run `failpedia verify` again"
        )
        proof.label = "Stale: the reproducer changed after it was proved"
        return proof
    results = [item for item in results if item not in changed]
    rows = []
    for result in sorted(results, key=lambda item: str(item.get("started_at", ""))):
        environment = result.get("environment") or {}
        rows.append(
            ProofRow(
                environment=_environment_label(environment),
                torch=str(environment.get("torch") or "none"),
                gpu=str(environment.get("gpu_name") or ""),
                verdict=str(result.get("verdict", "unknown")),
                date=str(result.get("started_at", ""))[:10],
                broken_seconds=_seconds(result, "broken"),
                fixed_seconds=_seconds(result, "fixed"),
            )
        )
    proved = [item for item in results if item.get("verdict") == PROVED]
    newest_proved_torch = max(
        (torch_version_key((item.get("environment") or {}).get("torch")) for item in proved),
        default=None,
    )
    newer_failures = [
        item
        for item in results
        if item.get("verdict") == NOT_REPRODUCED
        and newest_proved_torch is not None
        and torch_version_key((item.get("environment") or {}).get("torch")) > newest_proved_torch
    ]
    proof = Proof("not-proved", "Not yet proved", rows)
    if proved:
        best = max(proved, key=lambda item: str(item.get("started_at", "")))
        on_gpu = [item for item in proved if (item.get("environment") or {}).get("gpu_name")]
        named = max(on_gpu, key=lambda item: str(item.get("started_at", ""))) if on_gpu else best
        named_environment = named.get("environment") or {}
        gpu = named_environment.get("gpu_name")
        proof.status, proof.label = (
            ("proved-gpu", f"Proved on GPU {gpu}") if gpu else ("proved-cpu", "Proved on CPU")
        )
        proof.torch = str(named_environment["torch"]) if named_environment.get("torch") else None
        proof.excerpt = best.get("output_excerpt") or None
        proof.excerpt_environment = _run_label(best.get("environment") or {})
    if newer_failures:
        torch = (newer_failures[0].get("environment") or {}).get("torch")
        proof.status = "stale"
        proof.stale_reason = (
            f"broken mode no longer reproduces on torch {torch}, newer than the release "
            "it was proved on"
        )
        proof.label = f"Stale: {proof.stale_reason}"
    return proof


def documented_proof(item: CatalogEntry) -> Proof:
    """What stands for a proof of an entry no script can trigger: its public reports."""
    count = len(item.entry.evidence.reports) if item.entry.evidence else 0
    return Proof("documented", f"Documented from {count} public reports")


def load_proofs(
    catalog: Catalog, records_dir: Path, root: Path | None
) -> tuple[dict[str, Proof], ProblemList]:
    """The proof of every entry in the catalog; unreadable records are problems."""
    problems = ProblemList()
    proofs = {}
    for item in catalog.entries:
        if item.entry.reproducer is None:
            proofs[item.entry.id] = documented_proof(item)
            continue
        record, problem = load_record(records_dir, item.entry.id)
        if problem is not None:
            path = display_path(records_dir / f"{item.entry.id}.json", root)
            problems.add(path, 0, "", problem.split(": ", 1)[-1])
        proofs[item.entry.id] = proof_for(record, reproducer_digest(item))
    return proofs, problems


@dataclass
class Coverage:
    """Entries against the environments they were verified in, for the coverage page."""

    environments: list[str]
    rows: list[tuple[CatalogEntry, str, dict[str, str]]]  # entry, status label, env -> verdict
    counts_by_verdict: dict[str, int]
    counts_by_device: dict[str, dict[str, int]]
    needs_gpu_proof: list[CatalogEntry]
    # Entries documented from public reports: counted apart, they have nothing to prove.
    documented: list[CatalogEntry] = field(default_factory=list)


def coverage(catalog: Catalog, proofs: dict[str, Proof]) -> Coverage:
    environments: list[str] = []
    rows = []
    by_verdict: dict[str, int] = {}
    by_device: dict[str, dict[str, int]] = {}
    needs_gpu = []
    documented = []
    for item in catalog.entries:
        if item.entry.reproducer is None:
            documented.append(item)
            continue
        proof = proofs.get(item.entry.id) or Proof("not-proved", "Not yet proved")
        cells = {}
        for row in proof.rows:
            if row.environment not in environments:
                environments.append(row.environment)
            cells[row.environment] = row.verdict
        rows.append((item, proof.label, cells))
        by_verdict[proof.status] = by_verdict.get(proof.status, 0) + 1
        device_counts = by_device.setdefault(item.reproducer.device, {})
        device_counts[proof.status] = device_counts.get(proof.status, 0) + 1
        if item.reproducer.device != "cpu" and not proof.proved_on_gpu:
            needs_gpu.append(item)
    return Coverage(sorted(environments), rows, by_verdict, by_device, needs_gpu, documented)
