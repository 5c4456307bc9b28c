"""Build-speed benchmark: the Failpedia generator against plain mkdocs on the same pages.

For each catalog size N (default 100, 1000 and 3000) this script

1. generates N synthetic, schema-valid entries shaped like the example entry
   (``entries/compile/dynamo-recompile-limit/entry.yaml``) into a temporary project A
   that copies ``mkdocs.yml``, ``docs/``, ``templates/``, ``entries/categories.yaml``
   and the schema files; each entry gets a unique id, title, signature texts and
   patterns, a link to its neighbour in the category, and a stub ``repro.py``;
2. renders A's pages with ``failpedia render --out`` into the docs folder of a second
   project B, whose ``mkdocs.yml`` is A's without the failpedia plugin and with the
   category pages the plugin would put under ``nav_section`` written into the nav
   (same theme, extensions, search settings and strictness);
3. times, in the same run and alternating A and B, ``mkdocs build`` of A (the full
   generator: load, validate, render, build) and of B (plain mkdocs on the same Markdown),
   taking the median of ``--repeat`` runs.

Generator overhead is ``(A - B) / B``. Results go to ``benchmarks/results/build_speed.json``
and ``benchmarks/results/build_speed.md``.

Run from the repository root: ``python benchmarks/build_speed.py [--sizes 100 1000 3000]``.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import importlib.metadata
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from failpedia.catalog.regions import extract_fix_region

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_ENTRY = REPO / "entries" / "compile" / "dynamo-recompile-limit" / "entry.yaml"
RESULTS_DIR = Path(__file__).resolve().parent / "results"
DEFAULT_SIZES = (100, 1000, 3000)
# What a run reads from the repository (besides the installed failpedia package's source).
USED_PATHS = (
    "generator",
    "templates",
    "docs",
    "mkdocs.yml",
    "entries/categories.yaml",
    "entries/categories.schema.json",
    "entries/entry.schema.json",
    "entries/compile/dynamo-recompile-limit",
)
GOAL_ENTRIES = 3000
GOAL_SECONDS = 30.0
GOAL_OVERHEAD = 0.10

KINDS = ("crash", "warning", "hang", "silent-wrong-result")
ROLES = ("initiating", "downstream", "wrapper")
DEVICES = ("cpu", "cuda", "multi-gpu")
RELATIONS = ("causes", "caused-by", "confused-with", "see-also")
# Characters the portable pattern dialect treats as metacharacters (failpedia.signatures.dialect).
PATTERN_METACHARACTERS = set(".^$*+?()[]{}|\\/")
ENTRY_HEADER = "# yaml-language-server: $schema=../../entry.schema.json\n"
REPRO_STUB = '''\
"""Synthetic reproducer stub for benchmark entry {entry_id}; never run by the benchmark."""

import sys

FIXED = "--fixed" in sys.argv[1:]

# --- fix: start
{fix_region}
# --- fix: end

# --- check: start
assert sys.version_info >= (3,)  # the stub computes nothing to compare
# --- check: end

if __name__ == "__main__":
    sys.exit(0)
'''


# --------------------------------------------------------------------------- generation


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line strings as ``|-`` blocks, like hand-written entries."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_BlockDumper.add_representer(str, _represent_str)


def escape_pattern(text: str) -> str:
    return "".join("\\" + char if char in PATTERN_METACHARACTERS else char for char in text)


def synthetic_entry(
    base: dict[str, Any], number: int, category: str, entry_id: str, related_id: str | None
) -> dict[str, Any]:
    """One entry with the example's shape; ids, titles, signatures and patterns unique."""
    entry = copy.deepcopy(base)
    tag = f"S{number:05d}"
    entry["id"] = entry_id
    entry["title"] = f"Synthetic failure {tag}: {base['title']}"[:120]
    entry["category"] = category
    entry["kind"] = KINDS[number % len(KINDS)]
    entry["role"] = ROLES[number % len(ROLES)]
    entry["summary"] = f"Synthetic benchmark entry {tag}. {base['summary']}"
    signatures = []
    for index, signature in enumerate(base["signatures"]):
        prefix = f"FailpediaBench {tag}-{index}: "
        lines = signature["text"].split("\n")
        lines[0] = prefix + lines[0]
        sighting_free = {
            key: value for key, value in signature.items() if key not in ("seen_in", "seen_in_note")
        }
        signatures.append(
            {
                **sighting_free,
                "text": "\n".join(lines),
                # Real sightings are the example's, which the prefixed pattern cannot match.
                "seen_in_note": f"Synthetic benchmark entry {tag}: no thread shows it.",
                # The example's pattern matches the first line of its text; wrap it so a
                # top-level alternation stays behind the unique literal prefix.
                "pattern": f"{escape_pattern(prefix)}(?:{signature['pattern']})",
            }
        )
    entry["signatures"] = signatures
    entry["aliases"] = [
        {**alias, "text": f"{alias['text']} ({tag})"} for alias in base.get("aliases", [])
    ]
    entry["tags"] = [*base.get("tags", []), f"bench-{number:05d}"]
    entry["mechanism"] = f"Synthetic entry {tag}.\n\n{base['mechanism']}"
    entry["faq"] = [
        {**item, "question": f"{item['question']} ({tag})"} for item in base.get("faq", [])
    ]
    if related_id is None:
        entry.pop("related", None)
    else:
        entry["related"] = [
            {
                "id": related_id,
                "relation": RELATIONS[number % len(RELATIONS)],
                "note": f"Neighbour of {tag} in the synthetic catalog.",
            }
        ]
    reproducer = dict(base["reproducer"])
    reproducer["device"] = DEVICES[number % len(DEVICES)]
    entry["reproducer"] = reproducer
    return entry


def generate_entries(entries_dir: Path, count: int, categories: list[str]) -> None:
    """Write ``count`` entries spread round-robin over ``categories``."""
    base = yaml.safe_load(EXAMPLE_ENTRY.read_text(encoding="utf-8"))
    # The example's fix region, so the pages carry the same fix code as the real one.
    fix_region = extract_fix_region((EXAMPLE_ENTRY.parent / "repro.py").read_text(encoding="utf-8"))
    ids = [(categories[number % len(categories)], f"bench-{number:05d}") for number in range(count)]
    # Each entry links to the next entry of its category (not wrapping around), so every
    # relation is stated from one side only and is always consistent.
    next_in_category: dict[str, str | None] = {}
    last_seen: dict[str, str] = {}
    for category, entry_id in reversed(ids):
        next_in_category[entry_id] = last_seen.get(category)
        last_seen[category] = entry_id
    for number, (category, entry_id) in enumerate(ids):
        folder = entries_dir / category / entry_id
        folder.mkdir(parents=True)
        entry = synthetic_entry(base, number, category, entry_id, next_in_category[entry_id])
        text = yaml.dump(entry, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100)
        (folder / "entry.yaml").write_text(ENTRY_HEADER + text, encoding="utf-8")
        stub = REPRO_STUB.format(entry_id=entry_id, fix_region=fix_region)
        (folder / "repro.py").write_text(stub, encoding="utf-8")


def plugin_options(config: dict[str, Any]) -> dict[str, Any]:
    for plugin in config.get("plugins") or []:
        if isinstance(plugin, dict) and "failpedia" in plugin:
            return plugin["failpedia"] or {}
    return {}


def make_generator_project(project: Path, count: int) -> list[dict[str, str]]:
    """Project A: the repository's site setup with ``count`` synthetic entries."""
    project.mkdir(parents=True)
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    options = plugin_options(config)
    entries_name = options.get("entries_dir", "entries")
    templates_name = options.get("templates_dir", "templates")
    shutil.copy2(REPO / "mkdocs.yml", project / "mkdocs.yml")
    shutil.copytree(REPO / config.get("docs_dir", "docs"), project / "docs")
    shutil.copytree(REPO / templates_name, project / templates_name)
    entries_dir = project / entries_name
    entries_dir.mkdir()
    for name in ("categories.yaml", "categories.schema.json", "entry.schema.json"):
        shutil.copy2(REPO / entries_name / name, entries_dir / name)
    registry = yaml.safe_load((entries_dir / "categories.yaml").read_text(encoding="utf-8"))
    categories = registry["categories"]
    generate_entries(entries_dir, count, [category["id"] for category in categories])
    return categories


def make_plain_project(
    project: Path, generator_project: Path, categories: list[dict[str, str]]
) -> None:
    """Project B: A's mkdocs.yml minus the failpedia plugin, docs/ to be filled by render."""
    project.mkdir(parents=True)
    config = yaml.safe_load((generator_project / "mkdocs.yml").read_text(encoding="utf-8"))
    nav_section = plugin_options(config).get("nav_section")
    config["plugins"] = [
        plugin
        for plugin in config.get("plugins") or []
        if plugin != "failpedia" and not (isinstance(plugin, dict) and "failpedia" in plugin)
    ]
    if nav_section:
        # What the plugin's nav_section does: one nav page per category.
        pages = [{category["title"]: f"{category['id']}/index.md"} for category in categories]
        for item in config.get("nav") or []:
            if isinstance(item, dict) and nav_section in item:
                item[nav_section] = pages
    # What the plugin's InclusionLevel.NOT_IN_NAV does for entry pages.
    config["not_in_nav"] = "/*/*.md\n!/*/index.md\n"
    (project / "mkdocs.yml").write_text(
        yaml.dump(config, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    shutil.copytree(generator_project / config.get("docs_dir", "docs"), project / "docs")
    theme_dir = (config.get("theme") or {}).get("custom_dir")
    if theme_dir:  # the theme overrides (the search script loads from there)
        shutil.copytree(generator_project / theme_dir, project / theme_dir)


# --------------------------------------------------------------------------- measuring


def run_timed(command: list[str], cwd: Path, env: dict[str, str]) -> dict[str, float]:
    """Run a command; wall seconds and the CPU seconds its processes used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f"{' '.join(command)} failed in {cwd} (exit {result.returncode})")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu}


def site_size(site: Path) -> dict[str, float]:
    html = [path for path in site.rglob("*.html")]
    html_bytes = sum(path.stat().st_size for path in html)
    all_bytes = sum(path.stat().st_size for path in site.rglob("*") if path.is_file())
    return {
        "html_files": len(html),
        "html_mb": html_bytes / 1e6,
        "site_mb": all_bytes / 1e6,
    }


def mkdocs_command() -> list[str]:
    found = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    return [found] if found else [sys.executable, "-m", "mkdocs"]


def failpedia_command() -> list[str]:
    found = shutil.which("failpedia", path=str(Path(sys.executable).parent)) or shutil.which(
        "failpedia"
    )
    return [found] if found else [sys.executable, "-m", "failpedia.cli"]


def bench_size(count: int, repeat: int, workdir: Path, env: dict[str, str]) -> dict[str, Any]:
    root = workdir / f"n{count}"
    generator_project = root / "generator"
    plain_project = root / "plain"
    print(f"[{count}] generating {count} entries in {root}", flush=True)
    start = time.perf_counter()
    categories = make_generator_project(generator_project, count)
    make_plain_project(plain_project, generator_project, categories)
    generate_s = time.perf_counter() - start

    render = run_timed(
        [
            *failpedia_command(),
            "--root",
            str(generator_project),
            "render",
            "--out",
            str(plain_project / "docs"),
        ],
        generator_project,
        env,
    )
    print(f"[{count}] failpedia render: {render['wall_s']:.2f} s", flush=True)

    load_before = load_average()
    runs: dict[str, list[dict[str, float]]] = {"generator": [], "plain": []}
    sites = {"generator": root / "site-generator", "plain": root / "site-plain"}
    projects = {"generator": generator_project, "plain": plain_project}
    for attempt in range(repeat):
        # Alternate the order so neither build always runs on a warmer machine.
        order = ("generator", "plain") if attempt % 2 == 0 else ("plain", "generator")
        for name in order:
            command = [*mkdocs_command(), "build", "--quiet", "--site-dir", str(sites[name])]
            measured = run_timed(command, projects[name], env)
            runs[name].append(measured)
            print(
                f"[{count}] run {attempt + 1}/{repeat} {name:9s} mkdocs build: "
                f"{measured['wall_s']:.2f} s wall, {measured['cpu_s']:.2f} s CPU",
                flush=True,
            )

    generator_s = statistics.median(run["wall_s"] for run in runs["generator"])
    plain_s = statistics.median(run["wall_s"] for run in runs["plain"])
    generator_cpu = statistics.median(run["cpu_s"] for run in runs["generator"])
    plain_cpu = statistics.median(run["cpu_s"] for run in runs["plain"])
    sizes = {name: site_size(site) for name, site in sites.items()}
    return {
        "entries": count,
        "repeat": repeat,
        "generate_s": generate_s,
        "render_s": render["wall_s"],
        "render_cpu_s": render["cpu_s"],
        "generator_build_s": generator_s,
        "plain_build_s": plain_s,
        "overhead": (generator_s - plain_s) / plain_s,
        "generator_cpu_s": generator_cpu,
        "plain_cpu_s": plain_cpu,
        "cpu_overhead": (generator_cpu - plain_cpu) / plain_cpu,
        "load_average": {"before": load_before, "after": load_average()},
        "html_files": sizes["generator"]["html_files"],
        "html_mb": sizes["generator"]["html_mb"],
        "site_mb": sizes["generator"]["site_mb"],
        "plain_html_files": sizes["plain"]["html_files"],
        "plain_html_mb": sizes["plain"]["html_mb"],
        "runs": runs,
    }


# --------------------------------------------------------------------------- reporting


def load_average() -> list[float] | None:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return None


def cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor() or "unknown"
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else platform.processor() or "unknown"


def git_revision() -> str | None:
    try:
        revision = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", *USED_PATHS],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return revision + ("+dirty" if dirty else "")


def machine_facts() -> dict[str, Any]:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable,
        "cpu_model": cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "mkdocs": importlib.metadata.version("mkdocs"),
        "mkdocs_material": importlib.metadata.version("mkdocs-material"),
        "failpedia_revision": git_revision(),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def goal_status(results: list[dict[str, Any]]) -> dict[str, Any]:
    at_goal = [row for row in results if row["entries"] == GOAL_ENTRIES]
    if not at_goal:
        return {"measured": False}
    row = at_goal[0]
    return {
        "measured": True,
        "entries": GOAL_ENTRIES,
        "seconds_limit": GOAL_SECONDS,
        "overhead_limit": GOAL_OVERHEAD,
        "build_s": row["generator_build_s"],
        "overhead": row["overhead"],
        "build_cpu_s": row["generator_cpu_s"],
        "cpu_overhead": row["cpu_overhead"],
        "time_met": row["generator_build_s"] < GOAL_SECONDS,
        "overhead_met": row["overhead"] <= GOAL_OVERHEAD,
    }


def markdown_table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| Entries | HTML pages | Failpedia build (s) | Plain mkdocs (s) | Overhead "
        "| Failpedia CPU (s) | Plain CPU (s) | CPU overhead | Render only (s) "
        "| HTML (MB) | Site (MB) | Runs |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in results:
        lines.append(
            f"| {row['entries']:,} | {row['html_files']:,} | {row['generator_build_s']:.2f} "
            f"| {row['plain_build_s']:.2f} | {row['overhead'] * 100:+.1f}% "
            f"| {row['generator_cpu_s']:.2f} | {row['plain_cpu_s']:.2f} "
            f"| {row['cpu_overhead'] * 100:+.1f}% "
            f"| {row['render_s']:.2f} | {row['html_mb']:.1f} | {row['site_mb']:.1f} "
            f"| {row['repeat']} |"
        )
    return "\n".join(lines)


def _load_text(load: dict[str, list[float] | None]) -> str:
    before, after = load["before"], load["after"]
    if before is None or after is None:
        return "unknown"
    return f"{before[0]:.2f} -> {after[0]:.2f}"


def markdown_report(report: dict[str, Any]) -> str:
    facts = report["machine"]
    goal = report["goal"]
    parts = [
        "# Build speed",
        "",
        "Wall time of `mkdocs build` (median of the runs): *Failpedia build* is the full "
        "generator (load, validate, render, build); *Plain mkdocs* builds the same Markdown, "
        "pre-rendered by `failpedia render`, without the plugin. Overhead = "
        "(Failpedia - plain) / plain. *Render only* is one `failpedia render --out` "
        "(load, validate, render, write), not part of either build time. CPU columns are "
        "the user + system seconds of the build process, median of the runs: they do not "
        "count time spent waiting for a CPU, so they are the steadier comparison on a busy "
        "machine (wall well above CPU means the build was kept waiting).",
        "",
        markdown_table(report["results"]),
        "",
    ]
    if goal["measured"]:
        verdict = "met" if goal["time_met"] and goal["overhead_met"] else "missed"
        parts += [
            f"Goal ({GOAL_ENTRIES:,} entries in under {GOAL_SECONDS:.0f} s on 2 cores, "
            f"overhead at most {GOAL_OVERHEAD:.0%}): **{verdict}**: "
            f"{goal['build_s']:.1f} s ({'met' if goal['time_met'] else 'missed'}), "
            f"overhead {goal['overhead'] * 100:+.1f}% "
            f"({'met' if goal['overhead_met'] else 'missed'}); "
            f"CPU {goal['build_cpu_s']:.1f} s, CPU overhead {goal['cpu_overhead'] * 100:+.1f}%.",
            "",
        ]
    parts += [
        "Machine:",
        "",
        f"- CPU: {facts['cpu_model']}, {facts['cpu_count']} CPUs ({facts['usable_cpus']} usable)",
        f"- {facts['platform']}",
        f"- Python {facts['python']}, mkdocs {facts['mkdocs']}, "
        f"mkdocs-material {facts['mkdocs_material']}",
        f"- Failpedia revision {facts['failpedia_revision']}",
        f"- Date: {facts['date']}",
        "- Load average (1 min) before and after each size: "
        + ", ".join(
            f"{row['entries']:,}: {_load_text(row['load_average'])}" for row in report["results"]
        ),
        "",
    ]
    return "\n".join(parts)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=list(DEFAULT_SIZES),
        metavar="N",
        help="catalog sizes to measure (default: %(default)s)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="builds per size, median reported (default: 1 for 3000+ entries, else 3)",
    )
    parser.add_argument(
        "--out-dir",
        type=Path,
        default=RESULTS_DIR,
        help="where build_speed.json and build_speed.md go (default: benchmarks/results)",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="folder for the generated projects (default: a temporary folder)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated projects and sites")
    args = parser.parse_args(argv)
    if any(size < 1 for size in args.sizes):
        parser.error("--sizes must be positive")
    if args.repeat is not None and args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        workdir = Path(tempfile.mkdtemp(prefix="failpedia-bench-", dir=args.workdir))
    else:
        workdir = Path(tempfile.mkdtemp(prefix="failpedia-bench-"))
    results = []
    try:
        for count in args.sizes:
            repeat = args.repeat or (1 if count >= GOAL_ENTRIES else 3)
            results.append(bench_size(count, repeat, workdir, env))
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    report = {
        "machine": machine_facts(),
        "goal": goal_status(results),
        "results": results,
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "build_speed.json").write_text(
        json.dumps(report, indent=2) + "\n", encoding="utf-8"
    )
    text = markdown_report(report)
    (args.out_dir / "build_speed.md").write_text(text, encoding="utf-8")
    print()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
