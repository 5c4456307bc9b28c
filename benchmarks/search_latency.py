"""How soon does site search show the entry for a pasted error on a page just opened, against
the theme's own full-text search measured in the same run; and how big is what search loads?

Builds the site (`mkdocs build --strict`), serves it on 127.0.0.1 and, for every signature
line and alias of the catalog and every line of `benchmarks/realworld/` that names its entry
(as pasted), opens the home page in a fresh headless Chromium context (nothing cached) and,
once it has loaded and gone quiet (no request for half a second, Playwright's
"networkidle": a reader takes at least that long to reach the box), opens the search,
focuses the box and pastes the line in one go: a reader whose paste follows the click at
once. Nothing search reads is loaded before that: the matcher's two workers are started
once the page is idle, but they fetch signatures.json (then nearest.json), and the
full-text index is requested, only when the box is focused. For each line it records, in
the page, from the paste:

- first result: to the frame that draws the first result (the entry the signature matcher
  lists, an entry with a message close to the line, the entries nearest to it in wording,
  or else the first full-text result);
- full text: for every `--full-every`-th line (default 10: a cold full-text search takes
  seconds), to the frame after the theme's full-text search has answered for the line too:
  what a reader waits for without the matcher.

It reports the median, the 90th percentile and the slowest of each, the slowest lines, and
the sizes of what search loads: the full-text index as written, as the theme's search
plugin wrote it (each entry page's messages repeated in every section), gzipped as a server
sends them, and the two small files the matcher reads.

    python benchmarks/search_latency.py [--out benchmarks/results] [--full-every 10] [--every 1]

Every line takes about 40 minutes on 2 cores; `--every 3` measures every third line of
the same list (signature lines and real-world lines alike) in about a third of that.
"""

from __future__ import annotations

import argparse
import gzip
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
TIMEOUT_MS = 60_000

# Runs in the page, just loaded: open the search, focus the box and paste the line, then
# time the frame that draws the first result and, where asked, the one after the full-text
# answer for the line.
TIMES = """
async ([query, full, timeout]) => {
  const box = document.querySelector("input[data-md-component=search-query]");
  const toggle = document.querySelector("input[data-md-toggle=search]");
  const selector = ".md-search-result a.md-search-result__link";
  const owner = window.failpediaSearchOwner;
  const paint = () => new Promise(resolve => requestAnimationFrame(() => resolve()));
  const pause = () => new Promise(resolve => setTimeout(resolve, 2));
  const wanted = window.failpediaSearchIndexWanted();
  const start = performance.now();
  toggle.checked = true;
  toggle.dispatchEvent(new Event("change"));
  box.focus();
  box.value = query;
  box.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertFromPaste" }));
  let first = null;
  let fullText = null;
  while (performance.now() - start < timeout && (first === null || (full && fullText === null))) {
    if (first === null && document.querySelector(selector)) {
      await paint();
      first = performance.now() - start;
    }
    const state = owner.state();
    if (full && fullText === null && state.settled && state.settled.query === query) {
      await paint();
      fullText = performance.now() - start;
    }
    if (first === null || (full && fullText === null)) await pause();
  }
  return { first, full: fullText, index_wanted_before: wanted };
}
"""


def queries() -> list[tuple[str, str]]:
    """(where from, line): each signature's identifying line and each alias, as the site's
    search tests use them, and each real-world line that names its entry, as pasted."""
    from search_cases import realworld_cases, signature_cases

    found = [(label, text) for _, label, text in signature_cases()]
    found += [(f"realworld-{batch}/{name}", line) for _, batch, name, line in realworld_cases()]
    return found


def measure(site: Path, texts: list[str], full_every: int) -> list[dict[str, Any]]:
    """Both times for every line, each on a page of its own just opened."""
    from playwright.sync_api import sync_playwright

    times = []
    with SiteServer(site) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for number, text in enumerate(texts):
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(server.url, wait_until="networkidle")
            times.append(page.evaluate(TIMES, [text, number % full_every == 0, TIMEOUT_MS]))
            context.close()
        browser.close()
    return times


def index_sizes(site: Path) -> dict[str, int]:
    """Bytes of what search loads, plain and gzipped; the index also as the theme's search
    plugin wrote it, before each entry page's messages were kept on its own document only
    (failpedia.site.search_index): the page's tags copied back into each section."""
    index = (site / "search" / "search_index.json").read_bytes()
    data = json.loads(index)
    tags = {doc["location"]: doc["tags"] for doc in data["docs"] if doc.get("tags")}
    for doc in data["docs"]:
        page = doc["location"].split("#")[0]
        if "#" in doc["location"] and page in tags:
            doc["tags"] = tags[page]
    as_written = json.dumps(data, separators=(",", ":")).encode()
    sizes = {
        "index_bytes": len(index),
        "index_gzip_bytes": len(gzip.compress(index, 6)),
        "index_with_repeated_messages_bytes": len(as_written),
        "index_with_repeated_messages_gzip_bytes": len(gzip.compress(as_written, 6)),
    }
    for name, path in (
        ("signatures", site / "signatures.json"),
        ("messages", site / "search" / "messages.json"),
        ("nearest", site / "nearest.json"),
    ):
        raw = path.read_bytes()
        sizes[f"{name}_bytes"] = len(raw)
        sizes[f"{name}_gzip_bytes"] = len(gzip.compress(raw, 6))
    return sizes


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values) or [float("nan")]
    return {
        "queries": len(ordered),
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
        "| Measure (page just opened) | Lines | Median (ms) | 90th percentile (ms) "
        "| Slowest (ms) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, label in (
        ("first_result", "first result"),
        ("first_result_signatures", "first result: signature lines and aliases"),
        ("first_result_realworld", "first result: real-world lines"),
        ("full_text", "full text (theme)"),
    ):
        numbers = report[name]
        rows.append(
            f"| {label} | {numbers['queries']} | {numbers['median_ms']:.0f} "
            f"| {numbers['p90_ms']:.0f} | {numbers['slowest_ms']:.0f} |"
        )
    sizes = report["sizes"]
    rows += [
        "",
        "| File search loads | Bytes | Gzipped |",
        "| --- | ---: | ---: |",
        f"| full-text index, each page's messages repeated in every section (before) "
        f"| {sizes['index_with_repeated_messages_bytes']:,} "
        f"| {sizes['index_with_repeated_messages_gzip_bytes']:,} |",
        f"| full-text index, messages on the page's own document (now; loaded when the "
        f"box is first used) | {sizes['index_bytes']:,} | {sizes['index_gzip_bytes']:,} |",
        f"| signatures.json (the matcher) | {sizes['signatures_bytes']:,} "
        f"| {sizes['signatures_gzip_bytes']:,} |",
        f"| search/messages.json (entries close to a line) | {sizes['messages_bytes']:,} "
        f"| {sizes['messages_gzip_bytes']:,} |",
        f"| nearest.json (entries nearest in wording) | {sizes['nearest_bytes']:,} "
        f"| {sizes['nearest_gzip_bytes']:,} |",
    ]
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=BENCHMARKS / "results")
    parser.add_argument("--full-every", type=int, default=10)
    parser.add_argument("--limit", type=int, help="only the first N lines (a quick look)")
    parser.add_argument(
        "--every",
        type=int,
        default=1,
        help="every Nth line only, spread over all of them (a page each takes 2-3 s here)",
    )
    args = parser.parse_args()
    lines = queries()[:: args.every]
    if args.limit:  # some of each kind
        lines = lines[: args.limit // 2] + lines[-(args.limit - args.limit // 2) :]
    texts = [text for _, text in lines]
    started = machine()
    with tempfile.TemporaryDirectory(prefix="failpedia-search-bench-") as folder:
        site = Path(folder) / "site"
        build_site(REPO, site)
        sizes = index_sizes(site)
        times = measure(site, texts, args.full_every)
    missing = [text for text, time in zip(texts, times, strict=True) if time["first"] is None]
    if missing:
        raise SystemExit(f"no result within {TIMEOUT_MS} ms for: {missing[:5]}")
    early = [text for text, time in zip(texts, times, strict=True) if time["index_wanted_before"]]
    if early:
        raise SystemExit(f"the page asked for the full-text index before the paste: {early[:3]}")
    firsts = [time["first"] for time in times]
    realworld = [label.startswith("realworld-") for label, _ in lines]
    slowest = sorted(zip(firsts, [label for label, _ in lines], texts, strict=True))[::-1][:8]
    report = {
        "machine": started,
        "load_average_after": os.getloadavg(),
        "goal_ms": GOAL_MS,
        "full_text_every": args.full_every,
        "lines_every": args.every,
        "sizes": sizes,
        "first_result": summary(firsts),
        "first_result_signatures": summary(
            [first for first, real in zip(firsts, realworld, strict=True) if not real]
        ),
        "first_result_realworld": summary(
            [first for first, real in zip(firsts, realworld, strict=True) if real]
        ),
        "full_text": summary([time["full"] for time in times if time["full"] is not None]),
        "over_goal_count": sum(1 for first in firsts if first >= GOAL_MS),
        "over_goal": [
            {"first_result_ms": round(first, 1), "line": label, "query": text[:200]}
            for first, (label, text) in sorted(
                zip(firsts, lines, strict=True), key=lambda item: -item[0]
            )
            if first >= GOAL_MS
        ],
        "slowest": [
            {"first_result_ms": round(first, 1), "line": label, "query": text[:200]}
            for first, label, text in slowest
        ],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "search_latency.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "search_latency.md").write_text(table(report) + "\n")
    print(table(report))
    print(f"over {GOAL_MS} ms: {report['over_goal_count']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
