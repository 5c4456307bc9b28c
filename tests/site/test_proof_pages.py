"""Verification records on the site: proof status, environments, output, stale, coverage."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from failpedia.verify.records import update_record
from helpers import REPO_ROOT, copy_fixture, run_cli

ENVIRONMENT_2_12 = {
    "key": "cpu|torch-2.12.0+cpu|py3.11|Linux-x86_64",
    "python": "3.11.7",
    "os": "Linux-6.1-x86_64-with-glibc2.36",
    "torch": "2.12.0+cpu",
    "gpu_name": None,
}
ENVIRONMENT_2_13 = {
    **ENVIRONMENT_2_12,
    "key": "cpu|torch-2.13.0+cpu|py3.11|Linux-x86_64",
    "torch": "2.13.0+cpu",
}
ENVIRONMENT_GPU = {
    **ENVIRONMENT_2_13,
    "key": "cuda|NVIDIA H200|torch-2.13.0|py3.11|Linux",
    "torch": "2.13.0",
    "gpu_name": "NVIDIA H200",
}


def _result(verdict: str, started_at: str, excerpt: str = "") -> dict:
    return {
        "entry": "widget-limit",
        "verdict": verdict,
        "reason": "",
        "device": "cpu",
        "started_at": started_at,
        "broken": {"seconds": 1.25},
        "fixed": {"seconds": 0.5},
        "output_excerpt": excerpt,
    }


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = copy_fixture(tmp_path)
    shutil.copytree(REPO_ROOT / "templates", project / "templates")
    return project


def _render(root: Path) -> str:
    result = run_cli(root, "render", "--out", str(root / "out"))
    assert result.returncode == 0, result.stderr
    return (root / "out" / "widgets" / "widget-limit.md").read_text(encoding="utf-8")


def test_no_record_means_not_yet_proved(root: Path) -> None:
    page = _render(root)
    assert "**[Not yet proved](#proof)**" in page
    assert '!!! note "Not yet proved"' in page


def test_proved_record_shows_environment_and_captured_output(root: Path) -> None:
    excerpt = "FooError: widget count 3 exceeds limit 2 <real output>"
    update_record(
        root / "verification", _result("proved", "2026-11-30T10:00:00Z", excerpt), ENVIRONMENT_2_13
    )
    page = _render(root)
    assert "**[Proved on CPU](#proof)**" in page
    assert "| CPU, Python 3.11.7, Linux | 2.13.0+cpu | proved | 2026-11-30 | 1.2 | 0.5 |" in page
    assert "FooError: widget count 3 exceeds limit 2 &lt;real output&gt;" in page


def test_gpu_proof_names_the_gpu(root: Path) -> None:
    update_record(root / "verification", _result("proved", "2026-11-30T10:00:00Z"), ENVIRONMENT_GPU)
    assert "**[Proved on GPU NVIDIA H200](#proof)**" in _render(root)


def test_a_gpu_proof_on_another_torch_than_the_text_names_says_both(root: Path) -> None:
    """The entry's text speaks of torch 2.13 (as source-based wordings do), the GPU proof
    ran torch 2.11 and a later CPU proof 2.13: the page names the GPU run's release in the
    proof sentence, each run's release in the table and under the captured output."""
    entry = root / "entries" / "widgets" / "widget-limit" / "entry.yaml"
    text = entry.read_text(encoding="utf-8")
    entry.write_text(
        text.replace("emitted_by: every release", "emitted_by: widgetlib under torch 2.13.0"),
        encoding="utf-8",
    )
    gpu_2_11 = {
        **ENVIRONMENT_GPU,
        "key": "cuda|NVIDIA H200|torch-2.11.0+cu130|py3.12|Linux",
        "torch": "2.11.0+cu130",
        "python": "3.12.3",
    }
    records = root / "verification"
    update_record(records, _result("proved", "2026-12-04T11:51:00Z", "gpu output"), gpu_2_11)
    update_record(
        records, _result("proved", "2026-12-06T09:00:00Z", "cpu output"), ENVIRONMENT_2_13
    )
    page = _render(root)
    assert "widgetlib under torch 2.13.0" in page
    assert "Proved on GPU NVIDIA H200 with torch 2.11.0+cu130: `python repro.py` printed" in page
    assert "| NVIDIA H200, Python 3.12.3, Linux | 2.11.0+cu130 | proved | 2026-12-04 |" in page
    assert "| CPU, Python 3.11.7, Linux | 2.13.0+cpu | proved | 2026-12-06 |" in page
    assert "Output of `python repro.py` (CPU, Python 3.11.7, Linux, torch 2.13.0+cpu):" in page


def test_no_longer_reproducing_on_a_newer_torch_marks_the_entry_stale(root: Path) -> None:
    records = root / "verification"
    update_record(records, _result("proved", "2026-10-01T10:00:00Z"), ENVIRONMENT_2_12)
    update_record(records, _result("not-reproduced", "2026-11-30T10:00:00Z"), ENVIRONMENT_2_13)
    page = _render(root)
    assert "**[Stale: broken mode no longer reproduces on torch 2.13.0+cpu" in page
    assert '!!! warning "Stale"' in page
    assert "| CPU, Python 3.11.7, Linux | 2.12.0+cpu | proved |" in page
    assert "| CPU, Python 3.11.7, Linux | 2.13.0+cpu | not-reproduced |" in page


def test_not_reproducing_on_an_older_torch_is_not_stale(root: Path) -> None:
    records = root / "verification"
    update_record(records, _result("not-reproduced", "2026-10-01T10:00:00Z"), ENVIRONMENT_2_12)
    update_record(records, _result("proved", "2026-11-30T10:00:00Z"), ENVIRONMENT_2_13)
    assert "**[Proved on CPU](#proof)**" in _render(root)


def test_coverage_page_counts_entries_by_status(root: Path) -> None:
    update_record(
        root / "verification", _result("proved", "2026-11-30T10:00:00Z"), ENVIRONMENT_2_13
    )
    _render(root)
    coverage = (root / "out" / "coverage.md").read_text(encoding="utf-8")
    assert "| Proved on CPU | 1 |" in coverage
    assert "| Not yet proved | 2 |" in coverage
    assert "[Widget count exceeds the limit](widgets/widget-limit.md) | CPU | Proved on CPU |" in (
        coverage
    )


def test_corrupt_record_is_a_problem_not_a_traceback(root: Path) -> None:
    (root / "verification").mkdir()
    (root / "verification" / "widget-limit.json").write_text("{not json", encoding="utf-8")
    result = run_cli(root, "render", "--out", str(root / "out"))
    assert result.returncode == 1
    assert result.stderr.startswith("verification/widget-limit.json: not valid JSON")
    assert "Traceback" not in result.stderr


def test_a_proof_of_another_version_of_the_reproducer_is_stale(root: Path) -> None:
    verified = run_cli(root, "verify", "widget-limit", timeout=120)
    assert verified.returncode == 0, verified.stderr
    assert "**[Proved on CPU](#proof)**" in _render(root)
    script = root / "entries" / "widgets" / "widget-limit" / "repro.py"
    script.write_text(script.read_text(encoding="utf-8") + "\nprint('done')\n", encoding="utf-8")
    page = _render(root)
    assert "**[Stale: the reproducer changed after it was proved](#proof)**" in page
    assert "reproducer or patterns changed after the last verification" in page
