"""Preview-speed benchmark: from saving an entry to `mkdocs serve` serving its new page.

For the current catalog (a copy of the repository's ``mkdocs.yml``, ``docs/``,
``templates/``, ``entries/`` and ``verification/``) and for N synthetic entries (default
1,000, written by ``build_speed.py``'s generator) this script

1. starts ``mkdocs serve`` on 127.0.0.1 in two modes:
   - **serve**: plain ``mkdocs serve``, which rebuilds every page after a change;
   - **dirty**: ``mkdocs serve --dirty --no-strict``, which rebuilds only the pages whose
     Markdown changed (``--no-strict`` because mkdocs warns about every dirty build, and
     the project's ``strict: true`` turns that warning into a failed build);
2. after the first build and one warm-up edit, ``--edits`` times writes a new word into
   the ``mechanism`` of one entry and polls that entry's page every 10 ms until it holds
   the word. The time from the write to that response is the **preview time**. The
   ``Documentation built in X seconds`` line mkdocs prints for that rebuild is the
   **build time**; the rest is mkdocs noticing the change (it polls the watched files
   every 0.5 s, then waits 0.1 s for more changes);
3. as references, in the same run: a cold ``mkdocs build`` of the same project, and the
   same two serve modes on a copy without the plugin whose pages were pre-rendered by
   ``failpedia render`` (the edit then goes into the page's Markdown): what mkdocs alone
   needs to rebuild;
4. times, in a fresh process that built once (so that its caches are filled as in a
   running ``mkdocs serve``), three rebuilds after an edit: wall and CPU seconds, and the
   CPU seconds spent loading ``mkdocs.yml``, in the plugin's ``on_config``, turning
   Markdown into HTML, indexing for search, in theme templates and writes, copying static
   files, and the rest (median of the three).

Results go to ``benchmarks/results/preview_speed.json`` and ``preview_speed.md``.

Run from the repository root: ``python benchmarks/preview_speed.py [--sizes 1000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from build_speed import (
    REPO,
    failpedia_command,
    load_average,
    machine_facts,
    make_generator_project,
    make_plain_project,
    mkdocs_command,
    run_timed,
)

RESULTS_DIR = Path(__file__).resolve().parent / "results"
CURRENT_ENTRY = ("compile", "dynamo-recompile-limit")
GOAL_SECONDS = 2.0
MODES = {"serve": [], "dirty": ["--dirty", "--no-strict"]}
BUILT = re.compile(r"Documentation built in ([\d.]+) seconds")
# Where the edit goes: the first line of the entry's mechanism, in the YAML and on the page.
ENTRY_MARK = "\nmechanism: |-\n  "
PAGE_MARK = "## What happens\n\n"
POLL_SECONDS = 0.01
PATIENCE_SECONDS = 600


# --------------------------------------------------------------------------- projects


def make_current_project(project: Path) -> tuple[str, str]:
    """A copy of the repository's site and catalog; the entry to edit."""
    project.mkdir(parents=True)
    shutil.copy2(REPO / "mkdocs.yml", project / "mkdocs.yml")
    for name in ("docs", "templates", "entries", "verification"):
        shutil.copytree(REPO / name, project / name)
    return CURRENT_ENTRY


def make_synthetic_project(project: Path, count: int) -> tuple[str, str]:
    """``count`` synthetic entries (build_speed's generator); the entry to edit."""
    categories = make_generator_project(project, count)
    return categories[0]["id"], "bench-00000"


def make_plain_copy(project: Path, plain: Path, env: dict[str, str]) -> None:
    """The same pages, pre-rendered, in a project without the plugin."""
    categories = yaml.safe_load(
        (project / "entries" / "categories.yaml").read_text(encoding="utf-8")
    )["categories"]
    make_plain_project(plain, project, categories)
    run_timed(
        [*failpedia_command(), "--root", str(project), "render", "--out", str(plain / "docs")],
        project,
        env,
    )


# --------------------------------------------------------------------------- measuring


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=PATIENCE_SECONDS) as response:
            return str(response.read().decode("utf-8"))
    except OSError:
        return ""


def wait_for(url: str, needle: str) -> float:
    """Poll ``url`` until its page holds ``needle``; the moment it did."""
    deadline = time.perf_counter() + PATIENCE_SECONDS
    while time.perf_counter() < deadline:
        if needle in fetch(url):
            return time.perf_counter()
        time.sleep(POLL_SECONDS)
    raise SystemExit(f"{url} never showed {needle!r}")


def serve_log(log: Path) -> tuple[list[float], int]:
    """The build times serve printed, and how many rebuilds it finished.

    mkdocs drops a log line identical to an earlier one, so a rebuild that took as long
    as an earlier one (to the hundredth of a second) prints no build time; "Reloading
    browsers" (with a timestamp) follows every rebuild.
    """
    text = log.read_text(errors="replace")
    return [float(match) for match in BUILT.findall(text)], text.count("Reloading browsers")


@contextmanager
def serving(project: Path, options: list[str], log: Path, env: dict[str, str]) -> Iterator[str]:
    """``mkdocs serve`` on a free port of 127.0.0.1; yields the site's URL."""
    port = free_port()
    with log.open("wb") as output:
        server = subprocess.Popen(
            [*mkdocs_command(), "serve", "--dev-addr", f"127.0.0.1:{port}", *options],
            cwd=project,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            yield f"http://127.0.0.1:{port}/failpedia/"
        finally:
            server.terminate()
            server.wait(timeout=60)


def measure_serve(
    project: Path,
    edited: Path,
    mark: str,
    page_url: str,
    options: list[str],
    edits: int,
    log: Path,
    env: dict[str, str],
) -> dict[str, Any]:
    """Start serve, edit ``edited`` ``edits`` times (after one warm-up edit), and time each
    edit until the page at ``page_url`` (below the site) shows it."""
    original = edited.read_text(encoding="utf-8")
    if original.count(mark) != 1:
        raise SystemExit(f"{edited}: expected {mark!r} once")
    previews: list[float] = []
    builds: list[float | None] = []
    try:
        with serving(project, options, log, env) as site:
            started = time.perf_counter()
            wait_for(site + page_url, "</html>")
            first_build = time.perf_counter() - started
            for number in range(edits + 1):
                word = f"Zqpreview{number}x{os.getpid()}"
                times_before, rebuilds_before = serve_log(log)
                written = time.perf_counter()
                edited.write_text(original.replace(mark, f"{mark}{word} "), encoding="utf-8")
                served = wait_for(site + page_url, word)
                while serve_log(log)[1] == rebuilds_before:  # its lines follow the build
                    time.sleep(POLL_SECONDS)
                if number == 0:
                    continue  # warm-up
                times = serve_log(log)[0]
                previews.append(served - written)
                builds.append(times[-1] if len(times) > len(times_before) else None)
                time.sleep(1.0)
    finally:
        edited.write_text(original, encoding="utf-8")
    timed = [(preview, build) for preview, build in zip(previews, builds, strict=True) if build]
    return {
        "first_build_s": first_build,
        "preview_s": statistics.median(previews),
        "build_s": statistics.median(build for _, build in timed) if timed else None,
        "noticing_s": statistics.median(p - b for p, b in timed) if timed else None,
        "previews": previews,
        "builds": builds,
    }


# --------------------------------------------------------------------------- where the time goes

CONFIG = "loading mkdocs.yml (theme, plugins, Markdown extensions)"
PLUGIN = "plugin on_config (check the catalog, render pages)"
MARKDOWN = "Markdown to HTML"
SEARCH = "search index"
SEARCH_PER_PAGE = "search index, page by page"
THEME = "theme templates, page writes"
STATIC = "static files"
REST = "the rest (files, nav, links, anchors)"
PARTS = (CONFIG, PLUGIN, MARKDOWN, SEARCH, THEME, STATIC, REST)
REBUILDS = 3


def instrument(spent: dict[str, float]) -> None:
    """Count the CPU time of the functions a rebuild spends it in, into ``spent``."""
    from failpedia.site.plugin import FailpediaPlugin
    from material.plugins.search.plugin import SearchPlugin
    from mkdocs.commands import build as build_module
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

    targets = (
        (PLUGIN, FailpediaPlugin, "on_config"),
        (MARKDOWN, Page, "render"),
        (SEARCH_PER_PAGE, SearchPlugin, "on_page_context"),
        (SEARCH, SearchPlugin, "on_post_build"),
        (THEME, build_module, "_build_page"),  # holds the search's per-page part
        (STATIC, Files, "copy_static_files"),
    )
    for label, owner, name in targets:
        original = getattr(owner, name)

        def timed(*args: Any, _original: Any = original, _label: str = label, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[_label] += time.process_time() - start

        setattr(owner, name, timed)


def rebuild_in_process(project: Path, edited: Path, mark: str, dirty: bool) -> None:
    """In this process, as a running ``mkdocs serve`` does: build once, then rebuild after
    each of ``REBUILDS`` edits, timing each (wall and CPU seconds, and CPU seconds by
    part). Prints the medians as JSON."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    site = tempfile.mkdtemp(prefix="failpedia-preview-site-")
    serve_url = "http://127.0.0.1:8000/failpedia/"
    spent: dict[str, float] = dict.fromkeys([*PARTS, SEARCH_PER_PAGE], 0.0)
    instrument(spent)

    def config() -> Any:
        loaded = load_config(str(project / "mkdocs.yml"), site_dir=site)
        if dirty:  # mkdocs warns about every dirty build; strict mode would fail it
            loaded.strict = False
        return loaded

    def timed_build() -> dict[str, Any]:
        spent.update(dict.fromkeys(spent, 0.0))
        wall, cpu = time.perf_counter(), time.process_time()
        loaded = config()
        spent[CONFIG] = time.process_time() - cpu
        build(loaded, serve_url=serve_url, dirty=dirty)
        total_cpu = time.process_time() - cpu
        parts = {part: spent[part] for part in PARTS}
        parts[THEME] -= spent[SEARCH_PER_PAGE]  # counted once, as search
        parts[SEARCH] += spent[SEARCH_PER_PAGE]
        parts[REST] = total_cpu - sum(value for key, value in parts.items() if key != REST)
        return {"wall_s": time.perf_counter() - wall, "cpu_s": total_cpu, "parts_cpu_s": parts}

    original = edited.read_text(encoding="utf-8")
    try:
        first = config()
        first.plugins.on_startup(command="serve", dirty=dirty)
        wall = time.perf_counter()
        build(first, serve_url=serve_url, dirty=dirty)
        first_build_s = time.perf_counter() - wall
        rebuilds = []
        for number in range(REBUILDS):
            edited.write_text(original.replace(mark, f"{mark}Zqtimed{number} "), encoding="utf-8")
            rebuilds.append(timed_build())
    finally:
        edited.write_text(original, encoding="utf-8")
        shutil.rmtree(site, ignore_errors=True)
    result = {
        "first_build_s": first_build_s,
        "rebuild_wall_s": statistics.median(run["wall_s"] for run in rebuilds),
        "rebuild_cpu_s": statistics.median(run["cpu_s"] for run in rebuilds),
        "parts_cpu_s": {
            part: statistics.median(run["parts_cpu_s"][part] for run in rebuilds) for part in PARTS
        },
        "rebuilds": rebuilds,
    }
    print(json.dumps(result))


def rebuild_timings(
    project: Path, edited: Path, mark: str, dirty: bool, env: dict[str, str]
) -> dict[str, Any]:
    """``rebuild_in_process`` in a fresh process, so that its caches start empty."""
    arguments = json.dumps([str(project), str(edited), mark, dirty])
    done = subprocess.run(
        [sys.executable, __file__, "--rebuild-in-process", arguments],
        cwd=project,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --------------------------------------------------------------------------- one size


def bench_project(
    name: str, make: Any, workdir: Path, edits: int, repeat: int, env: dict[str, str]
) -> dict[str, Any]:
    root = workdir / name
    project = root / "generator"
    category, entry_id = make(project)
    entries = len(list((project / "entries").glob("*/*/entry.yaml")))
    plain = root / "plain"
    make_plain_copy(project, plain, env)
    print(f"[{name}] {entries} entries in {project}", flush=True)
    result: dict[str, Any] = {"catalog": name, "entries": entries, "edits": edits}
    load_before = load_average()

    command = [*mkdocs_command(), "build", "--quiet", "--site-dir", str(root / "site")]
    cold = [run_timed(command, project, env) for _ in range(repeat)]
    result["cold_build_s"] = statistics.median(run["wall_s"] for run in cold)
    result["cold_build_cpu_s"] = statistics.median(run["cpu_s"] for run in cold)
    print(f"[{name}] cold mkdocs build: {result['cold_build_s']:.2f} s", flush=True)

    edited = {
        "failpedia": (
            project,
            project / "entries" / category / entry_id / "entry.yaml",
            ENTRY_MARK,
        ),
        "plain": (plain, plain / "docs" / category / f"{entry_id}.md", PAGE_MARK),
    }
    page_url = f"{category}/{entry_id}/"
    for mode, options in MODES.items():
        for variant, (folder, path, mark) in edited.items():
            log = root / f"{variant}-{mode}.log"
            measured = measure_serve(folder, path, mark, page_url, options, edits, log, env)
            measured["in_process"] = rebuild_timings(folder, path, mark, mode == "dirty", env)
            result[f"{variant}_{mode}"] = measured
            print(
                f"[{name}] {variant:9s} {mode:5s}: preview {measured['preview_s']:.2f} s, "
                f"build {seconds(measured['build_s'])} s, "
                f"noticing {seconds(measured['noticing_s'])} s; "
                f"rebuild in-process {measured['in_process']['rebuild_cpu_s']:.2f} CPU s",
                flush=True,
            )
    result["load_average"] = {"before": load_before, "after": load_average()}
    return result


# --------------------------------------------------------------------------- reporting


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def markdown_table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| Catalog | Entries | Mode | Preview (s) | Build (s) | Noticing (s) "
        "| Rebuild CPU (s) | Plain mkdocs: preview (s) | build (s) | rebuild CPU (s) "
        "| Cold `mkdocs build` (s) |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in results:
        for mode in MODES:
            ours, plain = row[f"failpedia_{mode}"], row[f"plain_{mode}"]
            lines.append(
                f"| {row['catalog']} | {row['entries']:,} | {mode} | {ours['preview_s']:.2f} "
                f"| {seconds(ours['build_s'])} | {seconds(ours['noticing_s'])} "
                f"| {ours['in_process']['rebuild_cpu_s']:.2f} "
                f"| {plain['preview_s']:.2f} | {seconds(plain['build_s'])} "
                f"| {plain['in_process']['rebuild_cpu_s']:.2f} "
                f"| {row['cold_build_s']:.2f} |"
            )
    return "\n".join(lines)


def profile_table(results: list[dict[str, Any]]) -> str:
    """Median CPU seconds of one rebuild after an edit, by part, and their share."""
    columns = [
        (row, variant, mode)
        for row in results
        for variant in ("failpedia", "plain")
        for mode in MODES
    ]
    header = " | ".join(f"{row['entries']:,}, {variant} {mode}" for row, variant, mode in columns)
    lines = [f"| Where | {header} |", "| --- |" + " ---: |" * len(columns)]
    for part in PARTS:
        cells = []
        for row, variant, mode in columns:
            timings = row[f"{variant}_{mode}"]["in_process"]
            seconds = timings["parts_cpu_s"][part]
            cells.append(f"{seconds:.2f} ({seconds / timings['rebuild_cpu_s']:.0%})")
        lines.append(f"| {part} | " + " | ".join(cells) + " |")
    totals = [
        f"{row[f'{variant}_{mode}']['in_process']['rebuild_cpu_s']:.2f}"
        for row, variant, mode in columns
    ]
    lines.append("| rebuild | " + " | ".join(totals) + " |")
    return "\n".join(lines)


def markdown_report(report: dict[str, Any]) -> str:
    facts = report["machine"]
    goal = report["goal"]
    return "\n".join(
        [
            "# Preview speed",
            "",
            "*Preview*: median seconds from writing an edit into one entry until `mkdocs serve` "
            "serves that entry's page with it; *Build*: mkdocs's own `Documentation built in` "
            "time for that rebuild; *Noticing*: the rest (the file watcher polls every 0.5 s, "
            "then waits 0.1 s). *Rebuild CPU*: CPU seconds of one rebuild after an edit, "
            "in-process as in a running serve (steadier than wall time on a busy machine). "
            "*serve* is `mkdocs serve`, *dirty* `mkdocs serve --dirty --no-strict`. "
            "*Plain mkdocs* is the same mode on the same pages pre-rendered, without the "
            "plugin. *Cold `mkdocs build`* builds the project from scratch.",
            "",
            markdown_table(report["results"]),
            "",
            f"Goal: under {goal['seconds_limit']:.0f} s at the current size "
            f"({goal['entries']} entries): serve {goal['serve_preview_s']:.2f} s "
            f"({'met' if goal['serve_met'] else 'missed'}), dirty "
            f"{goal['dirty_preview_s']:.2f} s ({'met' if goal['dirty_met'] else 'missed'}).",
            "",
            "Where the CPU time of one rebuild after an edit goes (seconds, in-process, "
            "median of three; share of the rebuild):",
            "",
            profile_table(report["results"]),
            "",
            f"- CPU: {facts['cpu_model']}, {facts['cpu_count']} CPUs "
            f"({facts['usable_cpus']} usable); Python {facts['python']}, mkdocs "
            f"{facts['mkdocs']}, mkdocs-material {facts['mkdocs_material']}",
            f"- Failpedia revision {facts['failpedia_revision']}, {facts['date']}",
            "- Load average (1 min) before and after: "
            + ", ".join(
                f"{row['catalog']}: {row['load_average']['before']} -> "
                f"{row['load_average']['after']}"
                for row in report["results"]
            ),
            "",
        ]
    )


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="*",
        default=[1000],
        metavar="N",
        help="synthetic catalog sizes, measured after the current catalog (default: 1000)",
    )
    parser.add_argument("--edits", type=int, default=5, help="timed edits per serve (default: 5)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="cold builds per catalog (default: 3)"
    )
    parser.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--keep", action="store_true", help="keep the generated projects")
    parser.add_argument("--rebuild-in-process", metavar="JSON", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.edits < 1 or args.repeat < 1 or any(size < 1 for size in args.sizes):
        parser.error("--sizes, --edits and --repeat must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.rebuild_in_process:  # the child process of rebuild_timings
        project, edited, mark, dirty = json.loads(args.rebuild_in_process)
        rebuild_in_process(Path(project), Path(edited), mark, dirty)
        return 0
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    workdir = Path(tempfile.mkdtemp(prefix="failpedia-preview-"))
    results = []
    try:
        results.append(
            bench_project("current", make_current_project, workdir, args.edits, args.repeat, env)
        )
        for size in args.sizes:
            results.append(
                bench_project(
                    f"synthetic-{size}",
                    lambda project, size=size: make_synthetic_project(project, size),
                    workdir,
                    args.edits,
                    args.repeat,
                    env,
                )
            )
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    current = results[0]
    report = {
        "machine": machine_facts(),
        "goal": {
            "entries": current["entries"],
            "seconds_limit": GOAL_SECONDS,
            "serve_preview_s": current["failpedia_serve"]["preview_s"],
            "dirty_preview_s": current["failpedia_dirty"]["preview_s"],
            "serve_met": current["failpedia_serve"]["preview_s"] < GOAL_SECONDS,
            "dirty_met": current["failpedia_dirty"]["preview_s"] < GOAL_SECONDS,
        },
        "results": results,
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "preview_speed.json").write_text(
        json.dumps(report, indent=2) + "\n", encoding="utf-8"
    )
    text = markdown_report(report)
    (args.out_dir / "preview_speed.md").write_text(text, encoding="utf-8")
    print()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
