"""The failures people report, ranked by how often, with the entry that covers each as the
catalog stands now.

``benchmarks/realworld/frequency.yaml`` holds one record per failure: the thread counts
found on the date it was collected (they are not recounted here) and one real line of the
failure (``line``). This script runs each line through the catalog's matcher, as
``failpedia explain "<line>"`` does, names the first entry found (``entry_by: signature``)
or keeps an entry named by reading (``entry_by: reading``: the entry describes the failure
but no signature takes that line), counts the real-log corpus's uncovered failures again,
and rewrites ``frequency.yaml`` and the tables of ``frequency.md`` (the text above its
first table, the method, is kept as written). Run it after entries are added, so that the
list of the most reported failures without an entry stays the list of what to add next:

    python benchmarks/frequency.py [--root ROOT]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
REALWORLD = Path("benchmarks") / "realworld"
DATA_FILE = "frequency.yaml"
LIST_FILE = "frequency.md"
FIRST_TABLE = "## Failures listed"
YAML_HEADER = (
    "# Failures people report, with the public threads found for each; read by nothing, written\n"
    "# for people: frequency.md is the ranked list and says how the counts were made.\n"
)
AREAS = [
    ("compile", "Compile and Triton"),
    ("cuda", "CUDA and cuDNN"),
    ("nccl-distributed", "NCCL and torch.distributed"),
    ("fsdp-deepspeed", "FSDP and DeepSpeed"),
    ("data", "Data loading"),
    ("checkpoints", "Checkpoints and serialization"),
    ("numerics", "Numerics and mixed precision"),
    ("shapes", "Shapes, dtypes and devices"),
    ("autograd", "Autograd"),
    ("huggingface", "Hugging Face: Transformers, Datasets, Accelerate, PEFT, tokenizers"),
    ("install", "Installation, builds and ABI"),
    ("launchers", "Launchers and schedulers"),
]
AREA_ORDER = [key for key, _ in AREAS]
TOP_MISSING = 50


def matched_entries(root: Path, lines: list[str]) -> list[str | None]:
    """The first entry the catalog's matcher finds in each line, or None."""
    from failpedia.diagnose.diagnosis import diagnose
    from failpedia.diagnose.sources import collect_inputs
    from failpedia.project import index_source

    source = index_source.find_index_source(None, None, str(root))
    index = index_source.load_index(source)
    found: list[str | None] = []
    with tempfile.TemporaryDirectory() as work:
        log = Path(work) / "line.log"
        for line in lines:
            log.write_text(line + "\n", encoding="utf-8")
            inputs, _ = collect_inputs([str(log)], [])
            findings = diagnose(inputs, index, context=0).findings
            found.append(findings[0].entry.id if findings else None)
    return found


def remap(records: list[dict[str, Any]], found: list[str | None]) -> None:
    """Each record's entry: the matcher's where it finds one, else the entry named by
    reading, else none."""
    for record, entry in zip(records, found, strict=True):
        if entry is not None:
            record["entry"], record["entry_by"] = entry, "signature"
        elif record.get("entry_by") != "reading":
            record["entry"], record["entry_by"] = "none", None


def corpus_uncovered(root: Path, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The real-log corpus's cases labelled ``expected: none``, counted by failure, with
    the record that counts the same failure in public threads."""
    counts: Counter[str] = Counter()
    for path in sorted((root / REALWORLD / "cases").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        failure = re.search(r"^failure: (.+)$", text, re.M)
        if re.search(r"^expected: none$", text, re.M) and failure:
            counts[failure.group(1).strip()] += 1
    by_failure = {r["corpus_failure"]: r["name"] for r in records if r.get("corpus_failure")}
    return [
        {"failure": failure, "cases": cases, "record": by_failure.get(failure)}
        for failure, cases in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def rank_key(record: dict[str, Any]) -> tuple[int, str, str]:
    return (-record["threads"]["total"], record["area"], record["name"])


def _code(text: str) -> str:
    text = text.replace("|", "\\|")
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _entry_cell(record: dict[str, Any]) -> str:
    if record["entry"] == "none":
        return "none"
    return f"`{record['entry']}`" + (" (by reading)" if record["entry_by"] == "reading" else "")


def _count_cell(record: dict[str, Any]) -> str:
    threads = record["threads"]
    pages = "–" if threads["pages"] is None else str(threads["pages"])
    return f"{threads['total']}{'+' if record['saturated'] else ''} ({threads['issues']} / {pages})"


def _examples_cell(record: dict[str, Any]) -> str:
    shown = []
    for url in record["examples"]:
        thread = re.match(r"https://github\.com/([^/]+/[^/]+)/(issues|pull)/(\d+)", url)
        if thread:
            label = f"{thread.group(1)}#{thread.group(3)}"
        else:
            label = re.sub(r"^https?://", "", url)[:40]
        shown.append(f"[{_cell(label)}]({url})")
    return ", ".join(shown)


def _heads(record: dict[str, Any]) -> str:
    return "<br>".join(_code(head) for head in record["heads"])


def tables(records: list[dict[str, Any]], corpus: list[dict[str, Any]]) -> list[str]:
    """The Markdown below the method: totals, the top failures without an entry, each
    area ranked, and the corpus's uncovered failures."""
    md = [FIRST_TABLE, "", "| area | failures | with an entry | without |"]
    md.append("| --- | ---: | ---: | ---: |")
    for key, title in AREAS:
        area = [r for r in records if r["area"] == key]
        covered = sum(r["entry"] != "none" for r in area)
        md.append(f"| [{title}](#{key}) | {len(area)} | {covered} | {len(area) - covered} |")
    covered = sum(r["entry"] != "none" for r in records)
    md += [f"| **all** | {len(records)} | {covered} | {len(records) - covered} |", ""]
    missing = sorted((r for r in records if r["entry"] == "none"), key=rank_key)
    md += [
        f"## Top {TOP_MISSING} without an entry",
        "",
        "What the catalog should add next: the failures above with no covering entry, ranked by",
        "the threads found. Ties keep area order.",
        "",
        "| rank | failure | area | message head(s) | threads (issues / pages) | examples |",
        "| ---: | --- | --- | --- | --- | --- |",
    ]
    for rank, r in enumerate(missing[:TOP_MISSING], 1):
        md.append(
            f"| {rank} | {_cell(r['name'])} | {r['area']} | {_heads(r)} | {_count_cell(r)} "
            f"| {_examples_cell(r)} |"
        )
    md.append("")
    for key, title in AREAS:
        area = sorted((r for r in records if r["area"] == key), key=rank_key)
        md += [f'<a id="{key}"></a>', "", f"## {title}", ""]
        if not area:
            md += ["Not searched yet.", ""]
            continue
        md += [
            "| rank | failure | message head(s) | threads (issues / pages) | examples | entry |",
            "| ---: | --- | --- | --- | --- | --- |",
        ]
        for rank, r in enumerate(area, 1):
            md.append(
                f"| {rank} | {_cell(r['name'])} | {_heads(r)} | {_count_cell(r)} "
                f"| {_examples_cell(r)} | {_entry_cell(r)} |"
            )
        md.append("")
    md += [
        "## Uncovered failures of the real-log corpus",
        "",
        "Cases in `cases/` labelled `expected: none`, counted by their `failure` label",
        '(`grep -h "^failure:" $(grep -l "^expected: none" benchmarks/realworld/cases/*.yaml)'
        " | sort | uniq -c`),",
        "and the record above that counts the same failure in public threads.",
        "",
        "| cases | failure label | record above |",
        "| ---: | --- | --- |",
    ]
    for row in corpus:
        record = _cell(row["record"]) if row["record"] else "–"
        md.append(f"| {row['cases']} | {_cell(row['failure'])} | {record} |")
    md.append("")
    return md


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(ROOT), help="the project (its catalog and cases)")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    data_path, list_path = root / REALWORLD / DATA_FILE, root / REALWORLD / LIST_FILE
    data = yaml.safe_load(data_path.read_text(encoding="utf-8"))
    records: list[dict[str, Any]] = data["failures"]
    head, marker, _ = list_path.read_text(encoding="utf-8").partition(FIRST_TABLE)
    if not marker:
        print(f"{list_path}: no '{FIRST_TABLE}' heading to write the tables under", file=sys.stderr)
        return 1
    remap(records, matched_entries(root, [r["line"] for r in records]))
    records.sort(key=lambda r: (AREA_ORDER.index(r["area"]), *rank_key(r)))
    data["real_log_corpus_uncovered"] = corpus_uncovered(root, records)
    data_path.write_text(
        YAML_HEADER + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100),
        encoding="utf-8",
    )
    written = tables(records, data["real_log_corpus_uncovered"])
    list_path.write_text(head + "\n".join(written), encoding="utf-8")
    missing = sum(r["entry"] == "none" for r in records)
    print(f"{len(records)} failures, {len(records) - missing} with an entry, {missing} without")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
