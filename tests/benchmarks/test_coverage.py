"""The catalog's real-world coverage never drops: diagnosis puts the right entry first on
at least as many of the real logs in benchmarks/realworld/ as the committed figures say."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "coverage.py"
RESULTS = REPO / "benchmarks" / "results" / "coverage.json"

pytestmark = pytest.mark.slow


def _coverage_module():
    spec = importlib.util.spec_from_file_location("coverage_benchmark", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_right_entry_stays_first_as_often_as_committed() -> None:
    coverage = _coverage_module()
    committed = json.loads(RESULTS.read_text(encoding="utf-8"))
    result = coverage.measure(coverage.load_cases(), REPO)
    assert result["cases"] >= committed["cases"], "cases were removed from the corpus"
    assert result["top1"] >= committed["top1"], (
        f"the right entry is first on {result['top1']} cases, committed {committed['top1']}; "
        f"misses: {result['misses']}"
    )
    assert result["found"] >= committed["found"]


def test_every_case_names_its_source_and_a_decisive_line_of_its_excerpt() -> None:
    cases = _coverage_module().load_cases()  # refuses a case without its fields
    assert len(cases) >= 150
    assert all(case.source.startswith("https://") for case in cases)
    hard = sum(case.hard for case in cases)
    assert hard >= 0.4 * len(cases)
    for batch in sorted({case.batch for case in cases} - {1}):
        earlier = {case.source for case in cases if case.batch < batch}
        sources = [case.source for case in cases if case.batch == batch]
        assert len(set(sources)) == len(sources), f"batch {batch} holds a thread twice"
        repeated = earlier & set(sources)
        assert not repeated, f"batch {batch} repeats threads: {repeated}"


def test_every_batch_after_the_first_has_its_first_seen_figures() -> None:
    """A batch is scored before the catalog changes for it: its figures are committed with
    the catalog commit they were measured on, and that commit is in the history."""
    cases = _coverage_module().load_cases()
    committed = json.loads(RESULTS.read_text(encoding="utf-8"))
    recorded = {record["batch"]: record for record in committed["first_seen"]}
    for batch in sorted({case.batch for case in cases} - {1}):
        record = recorded.get(batch)
        assert record is not None, f"batch {batch} was never scored first-seen"
        in_batch = [case for case in cases if case.batch == batch]
        assert record["cases"] == len(in_batch), f"batch {batch} changed after it was scored"
        assert {case.collected for case in in_batch} == {record["collected"]}
        assert len(in_batch) >= 60, f"batch {batch} holds {len(in_batch)} cases"
        done = subprocess.run(
            ["git", "-C", str(REPO), "cat-file", "-e", f"{record['catalog_commit']}^{{commit}}"],
            capture_output=True,
            check=False,
        )
        if (REPO / ".git").exists():
            assert done.returncode == 0, f"batch {batch}: unknown commit {record['catalog_commit']}"
