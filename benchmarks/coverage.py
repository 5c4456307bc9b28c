"""How much of what people really paste does the catalog cover, and does diagnosis put the
right entry first?

Compiles the catalog's index once (``failpedia index``), then runs ``failpedia diagnose
--json --index`` on every case of ``benchmarks/realworld/cases/`` (log excerpts pasted into
public issue threads, each labelled with the entry that explains it or ``none``) and
writes ``benchmarks/results/coverage.json``:

- ``cases``: how many; ``covered``: cases whose failure has an entry;
- ``found``: cases whose expected entry is among the findings; ``top1``: cases whose
  expected entry is the first finding (the goal is top1 / cases);
- ``false_alarms``: uncovered cases where diagnosis still named an entry;
- ``by_category``: the same figures per failure area;
- ``uncovered``: the failures without an entry, most frequent first;
- ``misses``: covered cases whose entry was not first, with what came first;
- ``documented``: the same figures for the cases whose entry is documented from public
  reports rather than proved by a reproducer, counted apart, and how many such entries
  the catalog holds.

    python benchmarks/coverage.py [--out FILE] [--readme]

``--readme`` also rewrites the table in ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from failpedia.catalog.validate import load_catalog

ROOT = Path(__file__).resolve().parents[1]
CASES_DIR = ROOT / "benchmarks" / "realworld" / "cases"
RESULTS = ROOT / "benchmarks" / "results" / "coverage.json"
README = ROOT / "benchmarks" / "README.md"
TABLE_START = "<!-- coverage:start -->"
TABLE_END = "<!-- coverage:end -->"
REQUIRED = ("source", "category", "hard", "decisive_line", "expected", "failure", "excerpt")


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    category: str
    hard: bool
    decisive_line: str
    expected: str  # an entry id, or "none"
    failure: str  # the failure in a few words (the key uncovered failures are counted by)
    excerpt: str


def load_cases(folder: Path = CASES_DIR) -> list[Case]:
    """Every case file, checked for its fields; a bad file stops the run with its name."""
    cases = []
    for path in sorted(folder.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        missing = [name for name in REQUIRED if not isinstance(data, dict) or name not in data]
        if missing:
            raise SystemExit(f"{path}: missing {', '.join(missing)}")
        if data["decisive_line"].strip() not in data["excerpt"]:
            raise SystemExit(f"{path}: decisive_line is not a line of the excerpt")
        cases.append(
            Case(
                name=path.stem,
                source=str(data["source"]),
                category=str(data["category"]),
                hard=bool(data["hard"]),
                decisive_line=str(data["decisive_line"]),
                expected=str(data["expected"]),
                failure=" ".join(str(data["failure"]).split()).lower(),
                excerpt=str(data["excerpt"]),
            )
        )
    return cases


def compile_index(folder: Path, root: Path = ROOT, python: str = sys.executable) -> Path:
    """The catalog's signature index, written once with ``failpedia index``: each
    diagnosis then reads it instead of compiling the entries again."""
    done = subprocess.run(
        [python, "-m", "failpedia.cli", "--root", str(root), "index", "--out", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"failpedia index failed ({done.returncode}): {done.stderr}")
    return folder / "signatures.json"


def diagnose(case: Case, index: Path, python: str = sys.executable) -> list[str]:
    """The entry ids ``failpedia diagnose`` finds in the excerpt, first finding first."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / f"{case.name}.log"
        log.write_text(case.excerpt, encoding="utf-8")
        done = subprocess.run(
            [python, "-m", "failpedia.cli", "diagnose", "--json", "--index", str(index), str(log)],
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode not in (0, 1):
        raise SystemExit(f"diagnose failed on {case.name} ({done.returncode}): {done.stderr}")
    return [finding["id"] for finding in json.loads(done.stdout)["findings"]]


def _figures(rows: list[tuple[Case, list[str]]]) -> dict[str, Any]:
    covered = [(case, ids) for case, ids in rows if case.expected != "none"]
    top1 = sum(1 for case, ids in covered if ids[:1] == [case.expected])
    return {
        "cases": len(rows),
        "covered": len(covered),
        "found": sum(1 for case, ids in covered if case.expected in ids),
        "top1": top1,
        "top1_rate": round(top1 / len(rows), 3) if rows else 0.0,
        "false_alarms": sum(1 for case, ids in rows if case.expected == "none" and ids),
    }


def documented_entries(root: Path = ROOT) -> set[str]:
    """Ids of the catalog's entries documented from reports (read by the one loader)."""
    catalog, _ = load_catalog(root / "entries", root)
    return {item.entry.id for item in catalog.entries if item.entry.evidence is not None}


def measure(cases: list[Case], root: Path = ROOT) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        index = compile_index(Path(folder), root)
        rows = [(case, diagnose(case, index)) for case in cases]
    documented = documented_entries(root)
    by_category: dict[str, list[tuple[Case, list[str]]]] = defaultdict(list)
    for row in rows:
        by_category[row[0].category].append(row)
    uncovered = Counter(case.failure for case, _ in rows if case.expected == "none")
    examples: dict[str, list[str]] = defaultdict(list)
    for case, _ in rows:
        if case.expected == "none":
            examples[case.failure].append(case.name)
    return {
        **_figures(rows),
        "hard_cases": sum(1 for case, _ in rows if case.hard),
        "by_category": {name: _figures(group) for name, group in sorted(by_category.items())},
        "uncovered": [
            {"failure": failure, "count": count, "cases": examples[failure]}
            for failure, count in sorted(uncovered.items(), key=lambda item: (-item[1], item[0]))
        ],
        "misses": [
            {"case": case.name, "expected": case.expected, "first": ids[0] if ids else None}
            for case, ids in rows
            if case.expected != "none" and ids[:1] != [case.expected]
        ],
        "documented": {
            "entries": len(documented),
            **_figures([(case, ids) for case, ids in rows if case.expected in documented]),
        },
    }


def table(result: dict[str, Any]) -> str:
    lines = [
        "| area | cases | covered | found | first | first / cases |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, figures in [*result["by_category"].items(), ("all", result)]:
        label = f"**{name}**" if name == "all" else name
        lines.append(
            f"| {label} | {figures['cases']} | {figures['covered']} | {figures['found']} | "
            f"{figures['top1']} | {figures['top1_rate']:.0%} |"
        )
    documented = result["documented"]
    lines += [
        "",
        f"Of these, {documented['cases']} cases name one of the {documented['entries']} "
        "entries documented from public reports rather than proved by a reproducer; "
        f"their entry is first in {documented['top1']}.",
    ]
    return "\n".join(lines)


def write_readme(result: dict[str, Any], path: Path = README) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    path.write_text(text[:start] + "\n" + table(result) + "\n" + text[end:], encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the figures")
    parser.add_argument("--readme", action="store_true", help="rewrite the README's table")
    parser.add_argument("--root", type=Path, default=ROOT, help="the project (its catalog)")
    args = parser.parse_args()
    result = measure(load_cases(args.root / CASES_DIR.relative_to(ROOT)), args.root)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.readme:
        write_readme(result)
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
