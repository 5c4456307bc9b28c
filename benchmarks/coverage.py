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
- ``false_findings``: findings that are neither the case's expected entry nor linked to it
  in the catalog (``related``, or a wrapper, which reports whichever failure it caught),
  over all cases; the goal is none;
- ``by_category`` and ``by_batch``: the same figures per failure area and per batch;
- ``uncovered``: the failures without an entry, most frequent first;
- ``unmatched`` and ``nearest_found``: covered cases where no pattern matched, and how
  many of them list the right entry among the entries nearest in wording;
- ``misses``: covered cases whose entry was not first, with what came first;
- ``documented``: the same figures for the cases whose entry is documented from public
  reports rather than proved by a reproducer, counted apart, and how many such entries
  the catalog holds.

Cases come in dated batches (``batch``, ``collected``). A new batch is scored once, with
the catalog as it stands before any entry is written or changed for it:

    python benchmarks/coverage.py --first-seen N [--readme]

records that batch's figures with the catalog's commit in ``first_seen`` (refused when the
batch already has a figure, or when ``entries/`` has changes not yet committed, since the
figure names the commit it was measured on). Later runs carry the recorded figures over
unchanged: that first-seen figure is what the catalog is worth to a stranger's log; the
score over all cases afterwards shows only that the work was done.

    python benchmarks/coverage.py [--out FILE] [--readme]

``--readme`` also rewrites the tables in ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from failpedia.catalog.validate import load_catalog
from failpedia.signatures.nearest_rules import MAX_NEAREST

ROOT = Path(__file__).resolve().parents[1]
CASES_DIR = ROOT / "benchmarks" / "realworld" / "cases"
RESULTS = ROOT / "benchmarks" / "results" / "coverage.json"
README = ROOT / "benchmarks" / "README.md"
PROJECT_README = ROOT / "README.md"  # publishes the first-seen figures
FIRST_SEEN_START = "<!-- first-seen:start -->"
FIRST_SEEN_END = "<!-- first-seen:end -->"
BATCHES_START = "<!-- batches:start -->"
BATCHES_END = "<!-- batches:end -->"
TABLE_START = "<!-- coverage:start -->"
TABLE_END = "<!-- coverage:end -->"
REQUIRED = (
    "batch",
    "collected",
    "source",
    "category",
    "hard",
    "decisive_line",
    "expected",
    "failure",
    "excerpt",
)


@dataclass(frozen=True)
class Case:
    name: str
    batch: int
    collected: str  # the date the batch was collected, YYYY-MM-DD
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
        if not isinstance(data["batch"], int) or isinstance(data["batch"], bool):
            raise SystemExit(f"{path}: batch must be a number")
        cases.append(
            Case(
                name=path.stem,
                batch=data["batch"],
                collected=str(data["collected"]),
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


def diagnose(case: Case, index: Path, python: str = sys.executable) -> tuple[list[str], list[str]]:
    """The entry ids ``failpedia diagnose`` finds in the excerpt, first finding first, and
    the ids it lists as nearest in wording when it finds none."""
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
    data = json.loads(done.stdout)
    return [item["id"] for item in data["findings"]], [item["id"] for item in data["nearest"]]


def nearest_figures(
    rows: list[tuple[Case, list[str]]], nearest: dict[str, list[str]]
) -> dict[str, int]:
    """Covered cases no pattern matched, and how many of them list the right entry among
    the nearest in wording."""
    unmatched = [case for case, ids in rows if case.expected != "none" and not ids]
    return {
        "unmatched": len(unmatched),
        "nearest_found": sum(1 for case in unmatched if case.expected in nearest[case.name]),
    }


@dataclass(frozen=True)
class Links:
    """How the catalog relates entries: ``related`` in both directions, and the wrappers
    (``role: wrapper``: a launcher's exit status, a compiler backend's exception), which
    report whichever failure they caught and so are linked to every failure."""

    related: dict[str, set[str]]
    wrappers: frozenset[str]


def false_findings(case: Case, ids: list[str], links: Links) -> list[str]:
    """Findings that claim another failure: neither the expected entry, nor linked to it,
    nor a wrapper (an uncovered case has no entry, so every other finding there is false)."""
    allowed = {case.expected, *links.related.get(case.expected, set()), *links.wrappers}
    return [entry_id for entry_id in ids if entry_id not in allowed]


def _figures(rows: list[tuple[Case, list[str]]], links: Links) -> dict[str, Any]:
    covered = [(case, ids) for case, ids in rows if case.expected != "none"]
    top1 = sum(1 for case, ids in covered if ids[:1] == [case.expected])
    return {
        "cases": len(rows),
        "covered": len(covered),
        "found": sum(1 for case, ids in covered if case.expected in ids),
        "top1": top1,
        "top1_rate": round(top1 / len(rows), 3) if rows else 0.0,
        "false_alarms": sum(1 for case, ids in rows if case.expected == "none" and ids),
        "false_findings": sum(len(false_findings(case, ids, links)) for case, ids in rows),
    }


def catalog_facts(root: Path = ROOT) -> tuple[set[str], Links]:
    """The ids of entries documented from reports, and every entry's links in both
    directions (read by the one loader)."""
    catalog, _ = load_catalog(root / "entries", root)
    related: dict[str, set[str]] = defaultdict(set)
    for item in catalog.entries:
        for link in item.entry.related:
            related[item.entry.id].add(link.id)
            related[link.id].add(item.entry.id)
    documented = {item.entry.id for item in catalog.entries if item.entry.evidence is not None}
    wrappers = frozenset(item.entry.id for item in catalog.entries if item.entry.role == "wrapper")
    return documented, Links(dict(related), wrappers)


def measure(cases: list[Case], root: Path = ROOT) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        index = compile_index(Path(folder), root)
        # One diagnosis process per case, as many at once as there are CPUs: each spends
        # most of its time starting Python and reading the index.
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            found = list(pool.map(lambda case: diagnose(case, index), cases))
        diagnosed = [(case, *result) for case, result in zip(cases, found, strict=True)]
    rows = [(case, ids) for case, ids, _ in diagnosed]
    nearest = {case.name: near for case, _, near in diagnosed}
    documented, links = catalog_facts(root)
    by_category: dict[str, list[tuple[Case, list[str]]]] = defaultdict(list)
    by_batch: dict[int, list[tuple[Case, list[str]]]] = defaultdict(list)
    for row in rows:
        by_category[row[0].category].append(row)
        by_batch[row[0].batch].append(row)
    uncovered = Counter(case.failure for case, _ in rows if case.expected == "none")
    examples: dict[str, list[str]] = defaultdict(list)
    for case, _ in rows:
        if case.expected == "none":
            examples[case.failure].append(case.name)
    return {
        **_figures(rows, links),
        **nearest_figures(rows, nearest),
        "hard_cases": sum(1 for case, _ in rows if case.hard),
        "by_category": {
            name: _figures(group, links) for name, group in sorted(by_category.items())
        },
        "by_batch": {
            str(number): {
                "collected": group[0][0].collected,
                "hard_cases": sum(1 for case, _ in group if case.hard),
                **_figures(group, links),
                **nearest_figures(group, nearest),
            }
            for number, group in sorted(by_batch.items())
        },
        "uncovered": [
            {"failure": failure, "count": count, "cases": examples[failure]}
            for failure, count in sorted(uncovered.items(), key=lambda item: (-item[1], item[0]))
        ],
        "misses": [
            {"case": case.name, "expected": case.expected, "first": ids[0] if ids else None}
            for case, ids in rows
            if case.expected != "none" and ids[:1] != [case.expected]
        ],
        "false": [
            {"case": case.name, "expected": case.expected, "claimed": wrong}
            for case, ids in rows
            if (wrong := false_findings(case, ids, links))
        ],
        "documented": {
            "entries": len(documented),
            **_figures([(case, ids) for case, ids in rows if case.expected in documented], links),
        },
    }


FIRST_SEEN_FIELDS = ("cases", "hard_cases", "covered", "found", "top1", "top1_rate")


def catalog_commit(root: Path) -> str:
    """The commit the catalog is measured at; refused while ``entries/`` holds changes
    not yet committed, which no commit would name."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"git {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout.strip()

    if git("status", "--porcelain", "--", "entries"):
        raise SystemExit("entries/ has uncommitted changes: commit them, then score the batch")
    return git("rev-parse", "--short=12", "HEAD")


def first_seen_record(
    result: dict[str, Any], batch: int, commit: str, scored: str
) -> dict[str, Any]:
    """One batch's first-seen figures, as measured now, with what they were measured on."""
    figures = result["by_batch"].get(str(batch))
    if figures is None:
        raise SystemExit(f"no case of batch {batch} in the corpus")
    return {
        "batch": batch,
        "collected": figures["collected"],
        "catalog_commit": commit,
        "scored": scored,
        **{name: figures[name] for name in FIRST_SEEN_FIELDS},
        "false_findings": figures["false_findings"],
    }


def batch_table(result: dict[str, Any]) -> str:
    """Per batch: the first-seen figures (the catalog before any change for the batch)
    next to the same batch scored now."""
    lines = [
        "| batch | collected | catalog commit | cases | hard | covered | found | first "
        "| first / cases | false findings | first now |",
        "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    recorded = {record["batch"]: record for record in result.get("first_seen", [])}
    for number, now in result["by_batch"].items():
        record = recorded.get(int(number))
        if record is None or record.get("catalog_commit") is None:
            lines.append(
                f"| {number} | {now['collected']} | written from it | {now['cases']} | "
                f"{now['hard_cases']} | - | - | - | - | - | {now['top1_rate']:.0%} |"
            )
            continue
        lines.append(
            f"| {number} | {record['collected']} | `{record['catalog_commit']}` | "
            f"{record['cases']} | {record['hard_cases']} | {record['covered']} | "
            f"{record['found']} | {record['top1']} | {record['top1_rate']:.0%} | "
            f"{record['false_findings']} | {now['top1_rate']:.0%} |"
        )
    return "\n".join(lines)


def published_table(result: dict[str, Any]) -> str:
    """The first-seen figures as the project's README publishes them."""
    lines = [
        "| batch | collected | catalog commit | logs | right entry first |",
        "| ---: | --- | --- | ---: | ---: |",
    ]
    for record in result.get("first_seen", []):
        if record.get("catalog_commit") is None:
            continue
        lines.append(
            f"| {record['batch']} | {record['collected']} | `{record['catalog_commit'][:7]}` | "
            f"{record['cases']} | {record['top1']} ({record['top1_rate']:.0%}) |"
        )
    return "\n".join(lines)


def table(result: dict[str, Any]) -> str:
    lines = [
        "| area | cases | covered | found | first | first / cases | false findings |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, figures in [*result["by_category"].items(), ("all", result)]:
        label = f"**{name}**" if name == "all" else name
        lines.append(
            f"| {label} | {figures['cases']} | {figures['covered']} | {figures['found']} | "
            f"{figures['top1']} | {figures['top1_rate']:.0%} | {figures['false_findings']} |"
        )
    documented = result["documented"]
    lines += [
        "",
        f"Of these, {documented['cases']} cases name one of the {documented['entries']} "
        "entries documented from public reports rather than proved by a reproducer; "
        f"their entry is first in {documented['top1']}.",
        "",
        f"Where no pattern matched a covered case ({result['unmatched']}), the right entry "
        f"was among the {MAX_NEAREST} nearest in wording in {result['nearest_found']}.",
    ]
    return "\n".join(lines)


def _replace_between(text: str, start_mark: str, end_mark: str, body: str) -> str:
    start, end = text.index(start_mark) + len(start_mark), text.index(end_mark)
    return text[:start] + "\n" + body + "\n" + text[end:]


def write_readme(
    result: dict[str, Any], path: Path = README, project_readme: Path = PROJECT_README
) -> None:
    text = path.read_text(encoding="utf-8")
    text = _replace_between(text, BATCHES_START, BATCHES_END, batch_table(result))
    text = _replace_between(text, TABLE_START, TABLE_END, table(result))
    path.write_text(text, encoding="utf-8")
    text = project_readme.read_text(encoding="utf-8")
    body = published_table(result)
    text = _replace_between(text, FIRST_SEEN_START, FIRST_SEEN_END, body)
    project_readme.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the figures")
    parser.add_argument("--readme", action="store_true", help="rewrite the README's tables")
    parser.add_argument("--root", type=Path, default=ROOT, help="the project (its catalog)")
    parser.add_argument(
        "--first-seen",
        type=int,
        metavar="N",
        help="record batch N's first-seen figures (once, before any entry changes for it)",
    )
    args = parser.parse_args()
    previous = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    recorded: list[dict[str, Any]] = list(previous.get("first_seen", []))
    if args.first_seen is not None:
        if any(record["batch"] == args.first_seen for record in recorded):
            raise SystemExit(f"batch {args.first_seen} already has its first-seen figures")
        commit = catalog_commit(args.root)
    result = measure(load_cases(args.root / CASES_DIR.relative_to(ROOT)), args.root)
    if args.first_seen is not None:
        scored = datetime.date.today().isoformat()
        recorded.append(first_seen_record(result, args.first_seen, commit, scored))
    result["first_seen"] = sorted(recorded, key=lambda record: record["batch"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.readme:
        write_readme(result)
    print(batch_table(result))
    print()
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
