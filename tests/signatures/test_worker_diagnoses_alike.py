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
pasted; and files chosen together. The worker is also run on an index whose rules, order
and issue form differ, to show it takes each from the index, and every word is stemmed in
Python and in lunr.js, which rank the nearest entries. Chromium's tests
(``tests/diagnose/test_diagnose_browser.py``) keep the wiring and what a person sees.
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
    MATMUL_LINE,
    corpus_logs,
    downstream_only_log,
    many_occurrences_log,
    traceback_first_log,
)
from failpedia.cli.main import main
from failpedia.signatures.nearest_rules import register_stemmer, terms_of
from helpers import REPO_ROOT
from lunr.token import Token

HARNESS = Path(__file__).with_name("worker_diagnose.js")
CASES = REPO_ROOT / "benchmarks" / "realworld" / "cases"
HEALTHY = REPO_ROOT / "tests" / "healthy_logs"
# Some hundred logs through Node and the CLI, several ways each: a minute on two cores.
pytestmark = pytest.mark.slow
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
    problems = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(problems):
        code = main(["index", "--out", str(out)])
    assert code == 0, problems.getvalue()
    return out / "signatures.json"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("logs")
    written = {name: write_log(name, folder) for name in log_names()}
    for path in written.values():
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes()))
    return written


def run_worker(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The worker's answers to ``requests`` (``worker_diagnose.js``), from one Node process."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: install Node.js (scripts/test.sh does)")
    done = subprocess.run(
        [node, str(HARNESS)],
        input="".join(json.dumps(request) + "\n" for request in requests),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(replies) == len(requests), done.stderr
    return replies


@pytest.fixture(scope="module")
def worker(index: Path, logs: dict[str, Path]) -> dict[tuple[str, str], dict[str, Any]]:
    """The worker's answer for every log, each as a file, a gzip file and pasted: one Node
    process answers them all."""
    requests = {
        (name, mode): {
            "index": str(index),
            "log": str(path) + (".gz" if mode == "gzip" else ""),
            "as": "paste" if mode == "paste" else "file",
            "name": PASTED,
        }
        for name, path in logs.items()
        for mode in ("file", "gzip", "paste")
    }
    replies = run_worker(list(requests.values()))
    return dict(zip(requests, replies, strict=True))


def cli_diagnosis(index: Path, *logs: Path) -> dict[str, Any]:
    """``failpedia diagnose --json --index INDEX LOG...``, as its console script runs it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["diagnose", "--json", "--index", str(index), *map(str, logs)])
    assert code in (0, 1), f"failpedia diagnose exited {code} on {logs}"
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


def ranked_logs(folder: Path) -> list[Path]:
    """The logs of three ranks, named for them, whose failure came first on rank 1."""
    paths = []
    for rank, second in ((0, 9), (1, 4), (2, 6)):
        path = folder / f"rank{rank}.log"
        path.write_text(
            f"step 1\n[2024-06-11 03:00:0{second},000] ERROR {MATMUL_LINE.format(rank)}\n"
            + downstream_only_log(),
            encoding="utf-8",
        )
        paths.append(path)
    return paths


def test_logs_chosen_together_are_diagnosed_as_the_cli_diagnoses_them(
    index: Path, logs: dict[str, Path], tmp_path: Path
) -> None:
    """Several files at once (the page's file picker; the CLI's arguments): one diagnosis
    across them, the first occurrence taken across inputs by time, then by input."""
    groups = [
        [path for name, path in logs.items() if name.startswith("corpus/")],
        [path for name, path in logs.items() if name.startswith("healthy/")],
        [path for name, path in logs.items() if name.startswith("generated/")],
        ranked_logs(tmp_path),
    ]
    replies = run_worker(
        [{"index": str(index), "log": [str(path) for path in group]} for group in groups]
    )
    site_url = json.loads(index.read_text(encoding="utf-8"))["site_url"]
    for group, reply in zip(groups, replies, strict=True):
        assert reply["type"] == "done", reply.get("message")
        cli = cli_diagnosis(index, *group)
        names = {str(path): path.name for path in group}
        page = with_site_urls(reply["result"], site_url)
        assert as_the_page_shows(page, {}) == as_the_page_shows(cli, names)
    ranked = replies[-1]["result"]
    assert [item["rank"] for item in ranked["inputs"]] == ["0", "1", "2"]
    assert (ranked["findings"][0]["first"]["file"], ranked["findings"][0]["ranks"]) == (
        "rank1.log",
        ["0", "1", "2"],
    )


def test_the_worker_takes_its_rules_and_order_from_the_index(
    index: Path, logs: dict[str, Path], tmp_path: Path
) -> None:
    """The worker hard-codes no line rule, limit, key of the finding order or issue form:
    given a signatures.json that changes each, it reports what that index says."""
    data = json.loads(index.read_text(encoding="utf-8"))
    rules = data["rules"]
    rules["max_error_lines"] = 2
    rules["max_locations"] = 1
    # torchrun's prefix still stripped, but its group no longer read as a rank.
    rules["prefixes"] = [
        [name, source, [] if name == "torchrun" else groups]
        for name, source, groups in rules["prefixes"]
    ]
    data["order"]["roles"] = {"initiating": 2, "downstream": 1, "wrapper": 0}
    data["issue_forms"]["unknown_failure_form"] = "another-form.yml"
    changed = tmp_path / "signatures.json"
    changed.write_text(json.dumps(data), encoding="utf-8")
    shutil.copy(index.with_name("nearest.json"), tmp_path / "nearest.json")
    nothing, ranks, roles = (
        logs["corpus/no-known-failure.log"],
        logs["corpus/ddp-dataloader-oom.log"],
        logs["corpus/gloo-crash-cascade.log"],
    )
    replies = run_worker(
        [{"index": str(changed), "log": str(path)} for path in (nothing, ranks, roles)]
    )
    assert len(cli_diagnosis(index, nothing)["unmatched"]) > 2
    assert len(replies[0]["result"]["unmatched"]) == 2
    assert replies[0]["issues"]["forms"]["unknown_failure_form"] == "another-form.yml"
    cli = cli_diagnosis(index, ranks)
    [theirs] = [item for item in cli["findings"] if item["count"] > 1][:1]
    [mine] = [item for item in replies[1]["result"]["findings"] if item["id"] == theirs["id"]]
    assert len(theirs["locations"]) > 1 and len(mine["locations"]) == 1
    assert theirs["ranks"] and not mine["ranks"]
    assert mine["first"]["text"] == theirs["first"]["text"]  # the prefix is still stripped
    cli_roles = [item["role"] for item in cli_diagnosis(index, roles)["findings"]]
    page_roles = [item["role"] for item in replies[2]["result"]["findings"]]
    assert cli_roles[0] == "initiating" and cli_roles[-1] == "wrapper"
    assert page_roles == sorted(cli_roles, key={"initiating": 2, "downstream": 1, "wrapper": 0}.get)


def test_the_worker_knows_every_key_of_the_finding_order(
    index: Path, logs: dict[str, Path], tmp_path: Path
) -> None:
    """A key the worker cannot sort by is an error the page shows, never a silent order."""
    data = json.loads(index.read_text(encoding="utf-8"))
    data["order"]["keys"].append("a-key-no-engine-knows")
    changed = tmp_path / "signatures.json"
    changed.write_text(json.dumps(data), encoding="utf-8")
    [reply] = run_worker([{"index": str(changed), "log": str(logs["corpus/ansi-compile.log"])}])
    assert reply["type"] == "error"
    assert "cannot sort findings by a-key-no-engine-knows" in reply["message"]


STEMS = """
const lunr = require(process.argv[1]);
const words = JSON.parse(require("fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(words.map(function (word) {
  return lunr.stemmer(new lunr.Token(word)).toString();
})));
"""


def test_words_stem_alike_for_the_nearest_entries(index: Path) -> None:
    """nearest.json is built and queried in Python and queried with lunr.js in the page:
    every word of the catalog and of the real-world logs stems alike in both."""
    texts = [index.with_name("nearest.json").read_text(encoding="utf-8")]
    texts += [path.read_text(encoding="utf-8") for path in sorted(CASES.glob("*.yaml"))]
    texts += [
        path.read_text(encoding="utf-8")
        for path in sorted((REPO_ROOT / "entries").glob("*/*/entry.yaml"))
    ]
    words = sorted(set(terms_of(texts)))
    assert {"key", "array", "display", "dry"} <= set(words)
    stemmer = register_stemmer()
    python = [str(stemmer(Token(word))) for word in words]
    lunr_js = REPO_ROOT / "docs" / "assets" / "vendor" / "lunr.min.js"
    done = subprocess.run(
        [str(shutil.which("node")), "-e", STEMS, str(lunr_js)],
        input=json.dumps(words),
        capture_output=True,
        text=True,
        check=True,
    )
    differ = [
        (word, mine, theirs)
        for word, mine, theirs in zip(words, python, json.loads(done.stdout), strict=True)
        if mine != theirs
    ]
    assert differ == []
