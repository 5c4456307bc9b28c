"""The log page's whole worker finds, in every log we hold, what ``failpedia diagnose`` finds.

``worker_diagnose.js`` runs ``docs/assets/diagnose-worker.js`` in Node exactly as the page
runs it (its message handler: a file read in pieces, gunzipped where it is gzip, or pasted
text; blocks, lines, prefixes, matching, ordering, roles, the error-like lines and the
nearest entries), one process for every log. Each log is also diagnosed by
``failpedia diagnose --json`` with the same ``signatures.json``, and both must show the same
findings in the same order, with the same lines, context, counts, ranks, times and match
spans, the same error-like lines and the same nearest entries.

The logs: every excerpt of ``benchmarks/realworld/cases/``, the diagnosis corpus, the
healthy logs, and the logs the diagnosis tests generate; each as a file, as a gzip file and
pasted. Chromium's tests (``tests/diagnose/test_diagnose_browser.py``) keep the wiring.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from diagnose_helpers import (
    corpus_logs,
    downstream_only_log,
    many_occurrences_log,
    traceback_first_log,
)
from failpedia.cli.main import main
from helpers import REPO_ROOT

HARNESS = Path(__file__).with_name("worker_diagnose.js")
CASES = REPO_ROOT / "benchmarks" / "realworld" / "cases"
HEALTHY = REPO_ROOT / "tests" / "healthy_logs"
PASTED = "pasted log"  # the name the page gives a pasted log
# Logs the diagnosis tests write, by the name each is diagnosed under.
GENERATED = {
    "many-occurrences-2024.log": many_occurrences_log(2024),
    "many-occurrences-2023.log": many_occurrences_log(2023),
    "downstream-only.log": downstream_only_log(),
    "traceback-first.log": traceback_first_log(),
}


def log_names() -> list[str]:
    """Every log, as ``source/name``."""
    return [
        *(f"realworld/{path.stem}.log" for path in sorted(CASES.glob("*.yaml"))),
        *(f"corpus/{path.name}" for path in corpus_logs()),
        *(f"healthy/{path.name}" for path in sorted(HEALTHY.glob("*.log"))),
        *(f"generated/{name}" for name in GENERATED),
    ]


def write_log(name: str, folder: Path) -> Path:
    """The log ``name`` (``log_names``) as a file in ``folder``, named as the page names it."""
    source, file_name = name.split("/", 1)
    if source == "corpus":
        text = (REPO_ROOT / "tests" / "diagnose_corpus" / file_name).read_text(encoding="utf-8")
    elif source == "healthy":
        text = (HEALTHY / file_name).read_text(encoding="utf-8")
    elif source == "generated":
        text = GENERATED[file_name]
    else:
        case = yaml.safe_load((CASES / file_name).with_suffix(".yaml").read_text("utf-8"))
        text = str(case["excerpt"])
    path = folder / source / file_name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``signatures.json`` (and ``nearest.json`` beside it), as ``failpedia index`` writes it."""
    out = tmp_path_factory.mktemp("index")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["index", "--out", str(out)]) == 0
    return out / "signatures.json"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("logs")
    written = {name: write_log(name, folder) for name in log_names()}
    for path in written.values():
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes()))
    return written


@pytest.fixture(scope="module")
def worker(index: Path, logs: dict[str, Path]) -> dict[tuple[str, str], dict[str, Any]]:
    """The worker's answer for every log, each as a file, a gzip file and pasted: one Node
    process answers them all."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: install Node.js (scripts/test.sh does)")
    requests = [
        (name, mode, {"index": str(index), "log": str(path), "as": "file"})
        if mode == "file"
        else (name, mode, {"index": str(index), "log": str(path) + ".gz", "as": "file"})
        if mode == "gzip"
        else (name, mode, {"index": str(index), "log": str(path), "as": "paste", "name": PASTED})
        for name, path in logs.items()
        for mode in ("file", "gzip", "paste")
    ]
    done = subprocess.run(
        [node, str(HARNESS)],
        input="".join(json.dumps(request) + "\n" for _, _, request in requests),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(replies) == len(requests), done.stderr
    return {(name, mode): reply for (name, mode, _), reply in zip(requests, replies, strict=True)}


def cli_diagnosis(index: Path, log: Path) -> dict[str, Any]:
    """``failpedia diagnose --json --index INDEX LOG``, as its console script runs it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["diagnose", "--json", "--index", str(index), str(log)])
    assert code in (0, 1), f"failpedia diagnose exited {code} on {log}"
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def _renamed(item: dict[str, Any], key: str, names: dict[str, str]) -> dict[str, Any]:
    return item | {key: names.get(item[key], item[key])}


def as_the_page_shows(result: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """What the page shows of a diagnosis (the worker's whole result), with each input
    named as the page names it (``names``: the CLI's name -> the page's)."""
    return {
        "inputs": [_renamed(item, "name", names) for item in result["inputs"]],
        "findings": [
            item
            | {
                "first": _renamed(item["first"], "file", names),
                "locations": [_renamed(place, "file", names) for place in item["locations"]],
            }
            for item in result["findings"]
        ],
        "unmatched": [
            {key: item[key] for key in ("file", "line", "rank", "score", "text")}
            | {"file": names.get(item["file"], item["file"])}
            for item in result["unmatched"]
        ],
        "nearest": result["nearest"],
    }


def with_site_urls(result: dict[str, Any], site_url: str) -> dict[str, Any]:
    """The worker's result with entry links as the CLI writes them: from the site's root."""
    root = site_url.rstrip("/") + "/" if site_url else ""
    return result | {
        "findings": [item | {"url": root + item["url"]} for item in result["findings"]],
        "nearest": [item | {"url": root + item["url"]} for item in result["nearest"]],
    }


@pytest.mark.parametrize("name", log_names())
def test_the_worker_diagnoses_each_log_as_the_cli_does(
    name: str,
    index: Path,
    logs: dict[str, Path],
    worker: dict[tuple[str, str], dict[str, Any]],
) -> None:
    log = logs[name]
    cli = cli_diagnosis(index, log)
    assert cli["problems"] == []
    site_url = json.loads(index.read_text(encoding="utf-8"))["site_url"]
    for mode in ("file", "gzip", "paste"):
        reply = worker[name, mode]
        assert reply["type"] == "done", reply.get("message")
        page = with_site_urls(reply["result"], site_url)
        assert page["warnings"] == []
        shown = {"file": log.name, "gzip": log.name + ".gz", "paste": PASTED}[mode]
        expected = as_the_page_shows(cli, {str(log): shown})
        if mode == "paste":
            if cli["inputs"][0]["rank"] is not None:
                continue  # a rank from the file's name: a pasted log has no name to give one
            # A pasted log's size is its length in the page: UTF-16 units.
            expected["inputs"][0]["bytes"] = len(log.read_text("utf-8").encode("utf-16-le")) // 2
        assert as_the_page_shows(page, {}) == expected, mode
