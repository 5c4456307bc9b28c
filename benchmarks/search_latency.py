"""How soon does site search show the entry for a pasted error, against the theme's own
full-text search measured in the same page?

Builds the site (`mkdocs build --strict`), serves it on 127.0.0.1, opens it in headless Chromium
and pastes each signature line and alias of the catalog into the search box, from an
empty box each time, on a page whose full-text index and signature matcher are ready (a
reader who clicked the box, then pastes). For each query it records, in the page:

- first result: from the paste to the frame that draws the first result (the entry the
  signature matcher lists, or, where it lists none, the first full-text result);
- full text: from the paste to the frame after the theme's full-text search has answered
  for the query too: what a reader waits for without the matcher.

It reports the median, the 90th percentile and the slowest of each, and the slowest
queries. A query over the goal is measured once more (a busy moment on a shared machine
can slow one query of hundreds from 20 ms to 400), and the second figure is reported
beside the first.

    python benchmarks/search_latency.py [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parent
# The site is built and served, and Chromium started, as the browser tests do.
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(BENCHMARKS))

import run_overhead  # noqa: E402
from sitebuild import CHROMIUM, CHROMIUM_ARGS, SiteServer, build_site  # noqa: E402

GOAL_MS = 300
BOX = "input[data-md-component=search-query]"

# Runs in the page: for each query, from an empty box on a page done with the query before
# (its results gone, the count back to the theme's "Type to start searching"), the time
# from the paste to the first result drawn, and to the full-text search's answer drawn.
TIMES = """
async (queries) => {
  const box = document.querySelector("input[data-md-component=search-query]");
  const meta = document.querySelector(".md-search-result__meta");
  const owner = window.failpediaSearchOwner;
  const idle = meta.textContent;
  const selector = ".md-search-result a.md-search-result__link";
  const paint = () => new Promise(resolve => requestAnimationFrame(() => resolve()));
  const pause = () => new Promise(resolve => setTimeout(resolve, 2));
  const times = [];
  for (const query of queries) {
    box.value = "";
    box.dispatchEvent(new InputEvent("input", { bubbles: true }));
    while (document.querySelector(selector) || meta.textContent !== idle) {
      await new Promise(resolve => setTimeout(resolve, 10));
    }
    await paint();
    await paint();
    const start = performance.now();
    box.value = query;
    box.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertFromPaste" }));
    let first = null;
    let full = null;
    while (performance.now() - start < 10000 && (first === null || full === null)) {
      if (first === null && document.querySelector(selector)) {
        await paint();
        first = performance.now() - start;
      }
      const state = owner.state();
      if (full === null && state.settled && state.settled.query === query) {
        await paint();
        full = performance.now() - start;
      }
      if (first === null || full === null) await pause();
    }
    times.push([first, full]);
  }
  return times;
}
"""


def signature_queries() -> list[tuple[str, str]]:
    """(entry id, text): each signature's identifying line and each alias, as the site's
    search tests use them."""
    from failpedia.catalog.validate import load_catalog

    catalog, _ = load_catalog(REPO / "entries", REPO)
    queries = []
    for item in catalog.entries:
        queries += [(item.entry.id, line) for line in item.signature_lines()]
        queries += [(item.entry.id, alias.text) for alias in item.entry.aliases]
    return queries


def measure(site: Path, texts: list[str]) -> tuple[list[list[float | None]], list[float | None]]:
    """Both times for every query, and the second measure of each query over the goal."""
    from playwright.sync_api import sync_playwright

    with SiteServer(site) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(server.url, wait_until="load")
        page.click(BOX)
        page.wait_for_function(
            "() => window.failpediaSearchOwner.match('RuntimeError').then(() => true)"
        )
        page.wait_for_function(
            "() => !/Initializing/i.test("
            "document.querySelector('.md-search-result__meta').textContent)"
        )
        times = page.evaluate(TIMES, texts)
        slow = [text for text, (first, _) in zip(texts, times, strict=True) if _over(first)]
        again = [first for first, _ in page.evaluate(TIMES, slow)] if slow else []
        browser.close()
    return times, again


def _over(milliseconds: float | None) -> bool:
    return milliseconds is None or milliseconds >= GOAL_MS


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median_ms": round(statistics.median(ordered), 1),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 1),
        "slowest_ms": round(ordered[-1], 1),
    }


def machine() -> dict[str, object]:
    """The machine facts ``run_overhead`` records, and the browser."""
    chromium = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout
    return {**run_overhead.machine(), "chromium": chromium.strip()}


def table(report: dict[str, Any]) -> str:
    rows = [
        "| Measure | Queries | Median (ms) | 90th percentile (ms) | Slowest (ms) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, label in (("first_result", "first result"), ("full_text", "full text (theme)")):
        numbers = report[name]
        rows.append(
            f"| {label} | {numbers['queries']} | {numbers['median_ms']:.0f} "
            f"| {numbers['p90_ms']:.0f} | {numbers['slowest_ms']:.0f} |"
        )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=BENCHMARKS / "results")
    args = parser.parse_args()
    queries = signature_queries()
    texts = [text for _, text in queries]
    started = machine()
    with tempfile.TemporaryDirectory(prefix="failpedia-search-bench-") as folder:
        site = Path(folder) / "site"
        build_site(REPO, site)
        times, again = measure(site, texts)
    firsts = [first for first, _ in times]
    fulls = [full for _, full in times]
    missing = [
        text for text, (first, full) in zip(texts, times, strict=True) if None in (first, full)
    ]
    if missing:
        raise SystemExit(f"no result within 10 s for: {missing[:5]}")
    slowest = sorted(zip(firsts, fulls, texts, strict=True), reverse=True)[:5]
    report = {
        "machine": started,
        "load_average_after": os.getloadavg(),
        "goal_ms": GOAL_MS,
        "first_result": {"queries": len(texts), **summary(firsts)},  # type: ignore[arg-type]
        "full_text": {"queries": len(texts), **summary(fulls)},  # type: ignore[arg-type]
        "over_goal_first_measure": len(again),
        "over_goal_measured_again_ms": [
            None if value is None else round(value, 1) for value in again
        ],
        "slowest_queries": [
            {"first_result_ms": round(first, 1), "full_text_ms": round(full, 1), "query": text}
            for first, full, text in slowest
        ],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "search_latency.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "search_latency.md").write_text(table(report) + "\n")
    print(table(report))
    again_ms = report["over_goal_measured_again_ms"]
    print(f"over {GOAL_MS} ms at first: {len(again)}; measured again: {again_ms}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
