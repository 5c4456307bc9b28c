"""What the search tests type: the repository's catalog, and for each entry the
identifying line of each signature and each alias, with the entry page it belongs to; and
the site search's own code run on a built site in Node (``tests/site/search_page.js``),
which answers them all in one process."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

from failpedia.catalog.validate import load_catalog
from sitebuild import REPO

CATALOG, _ = load_catalog(REPO / "entries", REPO)
SEARCH_PAGE_JS = REPO / "tests" / "site" / "search_page.js"


def signature_cases() -> list[tuple[str, str, str]]:
    """(entry page path, label, text): each signature's identifying line and each alias."""
    cases = []
    for item in CATALOG.entries:
        url = f"{item.entry.category}/{item.entry.id}/"
        for index, line in enumerate(item.signature_lines()):
            cases.append((url, f"{item.entry.id}-signature{index}", line))
        for index, alias in enumerate(item.entry.aliases):
            cases.append((url, f"{item.entry.id}-alias{index}", alias.text))
    return cases


RANK_PREFIX = "[rank3]: "
TIME_PREFIX = "2024-05-01 12:00:01,123 ERROR "
# A number standing alone (not in a word like ReluBackward0 or sm_80, a version like 2.1.0,
# a hex value, a negative exit code, "1-element", or a time of day like 18:31:18).
NUMBER = re.compile(r"(?<![\w.\-])(?<!\d:)\d+(?![\w.\-]|\.\d|:\d)")
# A tensor shape as torch prints one: "[4, 3]", "(1000, 1000)", "torch.Size([2, 4])".
SHAPE = re.compile(r"(?<=[\[(])\d+(?:, \d+)+(?=[\])])")
# An absolute path of the machine that printed the message (not a URL's path).
PATH = re.compile(r"(?<![\w:/.])/(?:[\w.@+\-]+/)+[\w.@+\-]+")


def _other_number(match: re.Match[str]) -> str:
    """Another number of as many digits (a line number, a count, a port, a rank)."""
    text = match.group()
    seed = zlib.crc32(text.encode()) + len(text)
    if len(text) == 1:
        return str((int(text) + 3 + seed % 5) % 10)
    low = 10 ** (len(text) - 1)
    span = 65535 - low if len(text) == 5 else 9 * low  # five digits: most likely a port
    value = low + (int(text) * 7 + 13 + seed) % span
    return str(value if str(value) != text else low + (value + 1 - low) % span)


def _other_shape(match: re.Match[str]) -> str:
    """Another shape, with one more dimension: [4, 3] -> [55, 50, 33]."""
    sizes = [int(size) for size in match.group().split(", ")]
    return ", ".join(
        str(size * 12 + 7 * (position + 1)) for position, size in enumerate(sizes + [1])
    )


def _other_path(match: re.Match[str]) -> str:
    """The same file under another root: what differs between machines is where things
    are installed or built, not the tail of the path."""
    parts = match.group().split("/")[1:]
    kept = parts[-3:] if len(parts) > 3 else parts[-1:]
    return "/home/alice/work/" + "/".join(kept)


def other_values(text: str) -> str:
    """``text`` as another run would print it: other paths, shapes and numbers."""
    text = PATH.sub(_other_path, text)
    text = SHAPE.sub(_other_shape, text)
    return NUMBER.sub(_other_number, text)


def variants(text: str) -> list[tuple[str, str]]:
    """(label, query): the text as it is and as it appears in other runs' logs."""
    changed = other_values(text)
    found = [
        ("as-is", text),
        ("rank-prefix", RANK_PREFIX + text),
        ("time-prefix", TIME_PREFIX + text),
        ("other-values", changed),
        ("rank-time-other-values", RANK_PREFIX + TIME_PREFIX + changed),
    ]
    unique: dict[str, str] = {}
    for label, query in found:
        unique.setdefault(query, label)
    return [(label, query) for query, label in unique.items()]


def all_variant_cases() -> list[tuple[str, str, str]]:
    """Every signature line and alias in every variant, labelled ``label/kind``; a query
    two entries share is left out (it has no one owner)."""
    owners: dict[str, set[str]] = {}
    cases = []
    for url, label, text in signature_cases():
        for kind, query in variants(text):
            owners.setdefault(query, set()).add(url)
            cases.append((url, f"{label}/{kind}", query))
    return [case for case in cases if len(owners[case[2]]) == 1]


def realworld_cases() -> list[tuple[str, int, str, str]]:
    """(entry page path, batch, case name, line): the line of each real-world case that
    names its entry (``decisive_line``), as it was pasted, prefixes and all; cases whose
    failure has no entry are left out."""
    # benchmarks/coverage.py reads the cases' files; loaded by path, since the name
    # "coverage" may be the coverage package's.
    spec = importlib.util.spec_from_file_location(
        "failpedia_realworld_coverage", REPO / "benchmarks" / "coverage.py"
    )
    assert spec and spec.loader
    coverage = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = coverage  # its dataclasses look their module up
    spec.loader.exec_module(coverage)
    load_cases = coverage.load_cases

    pages = {item.entry.id: f"{item.entry.category}/{item.entry.id}/" for item in CATALOG.entries}
    return [
        (pages[case.expected], case.batch, case.name, case.decisive_line.strip())
        for case in load_cases()
        if case.expected in pages
    ]


def causes(url: str) -> list[str]:
    """The pages of the entries the catalog names as causes of the entry at ``url``, or as
    confused with it (the same message, printed by another failure)."""
    entry_id = url.rstrip("/").rsplit("/", 1)[-1]
    links = CATALOG.links(entry_id)
    return [
        f"{link.target.entry.category}/{link.target.entry.id}/"
        for relation in ("caused-by", "confused-with")
        for link in links.get(relation, [])
    ]


def search_in_node(
    site: Path, queries: list[str], *, typed: bool = False, full_text: bool = False
) -> list[dict[str, Any]]:
    """What the search page shows for each query, from the site's own search scripts run
    in Node: each query pasted (or ``typed``) into an empty box. Each answer has ``owners``
    (the entries listed above the full-text results), ``first`` (the first result's page
    path), ``answers`` and ``fix_links`` (each listed entry's quick answer and fix link),
    and, where the full-text search ran (always with ``full_text``), ``pages`` and
    ``count``."""
    request = json.dumps({"queries": queries, "typed": typed, "full_text": full_text})
    done = subprocess.run(
        ["node", str(SEARCH_PAGE_JS), str(site)],
        input=request,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found
