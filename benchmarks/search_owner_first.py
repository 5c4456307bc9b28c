"""How often does site search put the entry that owns a pasted line first?

Builds the site (`mkdocs build --strict`) and runs the site's own search scripts on it in
Node (`tests/site/search_page.js`: search-paste.js, search-owner.js, the log page's worker
and the theme's full-text worker, as the page runs them) for:

- every signature line and alias of the catalog, as it is and as other runs print it
  (behind a rank prefix, a timestamp and level, with other numbers, paths and shapes: the
  variants of `tests/search_cases.py`); a query two entries share is left out;
- every line of `benchmarks/realworld/` that names its entry (`decisive_line`), as it was
  pasted, prefixes and all, per batch.

A line counts as owner-first when the first result the page shows (an entry the signature
matcher lists, an entry with a message close to the line, or else the first full-text
result) is its entry's page, and as top-five when the entry is among the first five
results. Writes `benchmarks/results/search_owner_first.json` and `.md`.

    python benchmarks/search_owner_first.py [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(BENCHMARKS))

import run_overhead  # noqa: E402
from search_cases import all_variant_cases, realworld_cases, search_in_node  # noqa: E402
from sitebuild import build_site  # noqa: E402

GOAL = 0.95


def scored(answer: dict[str, Any], url: str) -> tuple[bool, bool]:
    """Whether the entry at ``url`` is the first result, and among the first five."""
    shown = answer["owner_urls"] + (answer["pages"] or [])
    first = (answer["first"] or "").endswith("/" + url)
    return first, any(page.endswith("/" + url) for page in shown[:5])


def figures(rows: list[tuple[str, bool, bool]]) -> dict[str, dict[str, float]]:
    """Per group: lines, owner first, in the top five, and the share first."""
    groups: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for group, first, top5 in rows:
        for name in (group, "all"):
            counts = groups[name]
            counts[0] += 1
            counts[1] += first
            counts[2] += top5
    return {
        name: {
            "lines": lines,
            "first": first,
            "top5": top5,
            "first_share": round(first / lines, 4),
            "top5_share": round(top5 / lines, 4),
        }
        for name, (lines, first, top5) in sorted(groups.items())
    }


def table(report: dict[str, Any]) -> str:
    rows = [
        "| Lines | Which | Count | Owner first | Share first | In the top five |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for part, label in (("signatures", "signature lines and aliases"), ("realworld", "real world")):
        for name, numbers in report[part].items():
            which = "all" if name == "all" else name
            rows.append(
                f"| {label} | {which} | {numbers['lines']} | {numbers['first']} "
                f"| {numbers['first_share']:.1%} | {numbers['top5_share']:.1%} |"
            )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=BENCHMARKS / "results")
    args = parser.parse_args()
    variants = all_variant_cases()
    realworld = realworld_cases()
    queries = [query for *_, query in variants] + [line for *_, line in realworld]
    with tempfile.TemporaryDirectory(prefix="failpedia-owner-first-") as folder:
        site = build_site(REPO, Path(folder) / "site")
        answers = search_in_node(site, queries)
    signature_rows = []
    misses = []
    for (url, label, query), answer in zip(variants, answers[: len(variants)], strict=True):
        first, top5 = scored(answer, url)
        signature_rows.append((label.split("/")[1], first, top5))
        if not first:
            misses.append({"line": label, "first": answer["first"], "query": query[:200]})
    realworld_rows = []
    for (url, batch, name, line), answer in zip(realworld, answers[len(variants) :], strict=True):
        first, top5 = scored(answer, url)
        realworld_rows.append((f"batch {batch}", first, top5))
        if not first:
            misses.append(
                {"line": f"realworld-{batch}/{name}", "first": answer["first"], "query": line[:200]}
            )
    report = {
        "machine": run_overhead.machine(),
        "goal_signatures_first": GOAL,
        "signatures": figures(signature_rows),
        "realworld": figures(realworld_rows),
        "misses": misses,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "search_owner_first.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "search_owner_first.md").write_text(table(report) + "\n")
    print(table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
