"""Which entries a run proves: a stable share of the catalog, and the entries whose
committed record does not prove them as they are now, where the run is.

Proving every reproducer on every change costs more than a CI run may take once the
catalog is large. ``failpedia verify --changed`` proves an entry again when its record is
out of date here: there is none; its newest result for this environment (the
fingerprint's ``key``: device, torch build, Python, OS) is missing or is no proof; the
reproducer's files or patterns differ from the ones proved (``reproducer_digest``, the
digest pages compare too); or a pinned package's version differs from the one the proof
ran with. A rotating share of the other entries, a different one each day, is proved as
well, so that an entry that depends on something no record names is still caught within
``count`` days; a scheduled run proves them all.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import date
from typing import Any

from failpedia.catalog.catalog import CatalogEntry
from failpedia.catalog.reproducer_digest import reproducer_digest
from failpedia.verify.environment import same_version
from failpedia.verify.results import PROVED, environment_key

# Reasons to prove an entry, as the plan printed before a run names them.
NO_RECORD = "no record"
CHANGED = "changed"
ROTATION = "rotation"


@dataclass(frozen=True)
class Planned:
    """An entry a ``--changed`` run proves, and why."""

    item: CatalogEntry
    reason: str  # NO_RECORD, CHANGED or ROTATION
    detail: str


def in_shard(entry_id: str, index: int, count: int) -> bool:
    """Whether an entry falls in share ``index`` of ``count`` (1-based). The share depends
    on the id alone, so adding entries never moves the others between machines or days."""
    return zlib.crc32(entry_id.encode()) % count == index - 1


def rotation_share(day: date, count: int) -> int:
    """The share (1-based, of ``count``) a day proves: consecutive days take consecutive
    shares, so every entry comes round once in ``count`` days, and a day's runs agree."""
    return day.toordinal() % count + 1


def outdated(
    item: CatalogEntry, record: dict[str, Any] | None, environment: dict[str, Any]
) -> tuple[str, str] | None:
    """Why the record does not prove the entry as it is now in ``environment`` (the
    fingerprint of this run): ``(NO_RECORD or CHANGED, detail)``; None when it does."""
    results = [result for result in (record or {}).get("results", []) if isinstance(result, dict)]
    if not results:
        return NO_RECORD, "no result recorded"
    key = environment.get("key")
    here = [result for result in results if environment_key(result) == key]
    if not here:
        elsewhere = sorted({environment_key(result) or "unknown" for result in results})
        return CHANGED, f"runner: never proved on {key} (recorded on {', '.join(elsewhere)})"
    result = max(here, key=lambda item: str(item.get("started_at", "")))
    if result.get("verdict") != PROVED:
        return CHANGED, f"last result here was {result.get('verdict')}, not a proof"
    if result.get("reproducer") != reproducer_digest(item):
        return CHANGED, "reproducer: its files or patterns differ from the ones proved"
    recorded = (result.get("environment") or {}).get("packages") or {}
    for requirement in item.reproducer.requirements:
        name, _, wanted = (part.strip() for part in requirement.partition("=="))
        version = recorded.get(name) if isinstance(recorded, dict) else None
        if not isinstance(version, str) or not same_version(version, wanted):
            return CHANGED, f"pinned packages: {requirement} (proved with {version or 'none'})"
    return None


def plan(
    items: list[CatalogEntry],
    records: dict[str, dict[str, Any] | None],
    environment: dict[str, Any],
    rotation: tuple[int, int] | None,
) -> list[Planned]:
    """The entries to prove, in catalog order: the outdated ones, and of the others those
    in share ``rotation = (index, count)`` (None: no rotation)."""
    chosen = []
    for item in items:
        entry_id = item.entry.id
        why = outdated(item, records.get(entry_id), environment)
        if why is not None:
            chosen.append(Planned(item, *why))
        elif rotation is not None and in_shard(entry_id, *rotation):
            chosen.append(Planned(item, ROTATION, f"share {rotation[0]} of {rotation[1]}"))
    return chosen
