"""``failpedia verify``: the reproducer runner, driven as a user runs it.

``tests/fixtures/runner`` holds made-up entries whose reproducers each behave one way:
prove, never reproduce, fail their fix, exit 1 when fixed, hang, leave grandchildren
behind, print 100 MB, crash with SIGSEGV, write to their working folder, need a GPU or a
package that does not exist. Most tests read one ``--json`` run over all of them, run
contained as CI runs them (``--require-containment``; ``test_containment`` attacks it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from failpedia.catalog.validate import load_catalog
from failpedia.signatures.line_rules import LINE_CAP
from failpedia.verify import capture, environment, records, results, runner
from verify_helpers import LINUX, RUNNER_FIXTURE, copy_project, git, verify, wait_for_processes

# Runs reproducers in subprocesses.
pytestmark = pytest.mark.slow

FIXTURE = RUNNER_FIXTURE
OTHER_ENVIRONMENT = {
    "key": "cuda|Imaginary GPU 9000|torch-1.0.0|py3.9|Linux-x86_64",
    "python": "3.9.0",
    "torch": "1.0.0",
    "gpu_name": "Imaginary GPU 9000",
    "gpu_count": 1,
}
EXPECTED_VERDICTS = {
    "proves": "proved",
    "raises": "proved",
    "never-reproduces": "not-reproduced",
    "fix-fails": "fix-failed",
    "fixed-exits-nonzero": "fix-failed",
    "segfaults": "fix-failed",
    "segfaults-silently": "not-reproduced",
    "hangs": "timed-out",
    "leaves-grandchildren": "proved",
    "prints-100mb": "proved",
    "writes-cwd": "proved",
    "needs-cuda": "skipped",
    "needs-missing-pkg": "skipped",
    "check-skipped": "fix-failed",
    "check-fails": "fix-failed",
    "imports-missing": "harness-error",
}
SKIPPED = {"needs-cuda", "needs-missing-pkg"}


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass
class Run:
    root: Path
    process: subprocess.CompletedProcess[str]
    document: dict[str, Any]

    def result(self, entry_id: str) -> dict[str, Any]:
        return next(item for item in self.document["results"] if item["entry"] == entry_id)


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Every fixture entry, in parallel, with records; two records seeded beforehand."""
    root = copy_project(tmp_path_factory.mktemp("verify"))
    folder = root / "verification"
    folder.mkdir()
    other = {"entry": "proves", "verdict": "proved", "started_at": "2020-01-01T00:00:00Z"}
    other["environment"] = OTHER_ENVIRONMENT
    (folder / "proves.json").write_text(json.dumps({"entry": "proves", "results": [other]}))
    (folder / "never-reproduces.json").write_text('{"entry": "never-reproduces", "resu')
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "seed records")
    process = verify(
        root,
        "--jobs",
        "12",
        "--json",
        "--require-containment",
        extra_env={"TORCH_LOGS": "+dynamo", "FAILPEDIA_LEAK_CHECK": "1"},
    )
    assert "Traceback" not in process.stderr, process.stderr
    return Run(root, process, json.loads(process.stdout))


def test_verdicts(full_run: Run) -> None:
    verdicts = {item["entry"]: item["verdict"] for item in full_run.document["results"]}
    assert verdicts == EXPECTED_VERDICTS, full_run.process.stderr


def test_the_check_region_must_run_to_its_end_and_pass(full_run: Run) -> None:
    """A fixed mode that exits 0 before its check, or whose check fails, proves nothing;
    a proof says that its check passed."""
    assert full_run.result("check-skipped")["reason"] == (
        "fixed mode exited 0 but did not run its check region to the end"
    )
    assert full_run.result("check-skipped")["fixed"]["check_passed"] is False
    failing = full_run.result("check-fails")
    assert failing["reason"] == "fixed mode exited 1"
    assert failing["fixed"]["check_passed"] is False
    proved = full_run.result("proves")
    assert proved["fixed"]["check_passed"] is True
    assert proved["reason"].endswith("fixed mode exited 0 without it, and its check passed")


def test_tracebacks_are_the_reproducers_own(full_run: Run) -> None:
    """The runner starts reproducers through a bootstrap; its frame never shows, and the
    reproducer's path is stored in the neutral form."""
    excerpt = full_run.result("raises")["output_excerpt"]
    assert 'File "repro.py", line 19, in turn' in excerpt, excerpt
    assert "<string>" not in excerpt
    assert excerpt.index("Traceback") < excerpt.index('File "repro.py", line 23, in <module>')


def test_a_missing_module_is_a_harness_error_naming_it(full_run: Run) -> None:
    assert full_run.result("imports-missing")["reason"] == (
        "broken mode stopped at ModuleNotFoundError: no module named "
        "'failpedia_fixture_gearbox_helpers'; install it, or declare its package in "
        "reproducer.requirements"
    )


def test_any_failure_exits_1(full_run: Run) -> None:
    assert full_run.process.returncode == 1


def test_json_document(full_run: Run) -> None:
    document = full_run.document
    assert set(document) == {"environment", "results", "counts"}
    assert document["counts"] == {
        "proved": 5,
        "not-reproduced": 2,
        "fix-failed": 5,
        "timed-out": 1,
        "harness-error": 1,
        "skipped": 2,
    }
    environment = document["environment"]
    for name in ("python", "os", "machine", "cpu", "torch", "cuda", "cudnn", "nccl"):
        assert name in environment
    assert environment["gpu_count"] == 0 and environment["gpu_name"] is None
    assert environment["key"].startswith("cpu|") and "py3." in environment["key"]
    assert environment["packages"] == {"nonexistent-pkg": None}
    proved = full_run.result("proves")
    assert proved["matched_signature"] == 0
    assert proved["reason"] and proved["device"] == "cpu"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", proved["started_at"])
    for mode, code in (("broken", 1), ("fixed", 0)):
        assert set(proved[mode]) >= {
            "exit_code",
            "signal",
            "seconds",
            "timed_out",
            "output_bytes",
            "truncated",
            "matched_lines",
        }
        assert proved[mode]["exit_code"] == code and proved[mode]["signal"] is None
    assert proved["broken"]["matched_lines"] == [
        {"line": "FooError: widget count 3 exceeds limit 2", "signature": 0}
    ]
    assert proved["fixed"]["matched_lines"] == []
    assert "FooError: widget count 3 exceeds limit 2" in proved["output_excerpt"]
    never = full_run.result("never-reproduces")
    assert never["fixed"] is None and never["matched_signature"] is None


def test_progress_on_stderr(full_run: Run) -> None:
    lines = full_run.process.stderr.splitlines()
    for entry_id, verdict in EXPECTED_VERDICTS.items():
        finished = rf"\] {verdict} +{entry_id} \(\d+\.\d s\)"
        done = [line for line in lines if re.search(finished, line)]
        assert len(done) == 1, (entry_id, full_run.process.stderr)
        started = [line for line in lines if re.search(rf"\] start +{entry_id}$", line)]
        assert len(started) == (0 if entry_id in SKIPPED else 1), full_run.process.stderr


def test_fixed_mode_failures(full_run: Run) -> None:
    assert "StickyError" in full_run.result("fix-fails")["reason"]
    assert full_run.result("fix-fails")["fixed"]["matched_lines"]
    exits = full_run.result("fixed-exits-nonzero")
    assert exits["fixed"]["exit_code"] == 1 and "exited 1" in exits["reason"]


@pytest.mark.skipif(not LINUX, reason="checks processes through /proc")
def test_timeout_kills_the_tree_including_escaped_grandchild(full_run: Run) -> None:
    hangs = full_run.result("hangs")
    broken = hangs["broken"]
    assert broken["timed_out"] is True and broken["exit_code"] is None
    assert broken["signal"] in ("SIGTERM", "SIGKILL")
    assert 2 <= broken["seconds"] < 10
    assert hangs["fixed"] is None and "2 s limit" in hangs["reason"]
    marker = re.search(r"escaped grandchild marker (\S+)", hangs["output_excerpt"]).group(1)
    assert wait_for_processes(marker, 0, seconds=2) == []


@pytest.mark.skipif(not LINUX, reason="checks processes through /proc")
def test_grandchildren_left_behind_are_killed(full_run: Run) -> None:
    result = full_run.result("leaves-grandchildren")
    assert result["verdict"] == "proved"
    match = re.search(r"grandchildren marker (\S+)", result["output_excerpt"])
    assert match, result["output_excerpt"]
    assert wait_for_processes(match.group(1), 0, seconds=2) == []
    assert result["broken"]["seconds"] < 5


def test_huge_output_is_bounded(full_run: Run) -> None:
    result = full_run.result("prints-100mb")
    broken = result["broken"]
    assert result["verdict"] == "proved"
    assert broken["output_bytes"] >= 100_000_000 and broken["truncated"] is True
    assert len(result["output_excerpt"].encode()) <= 8_400
    assert result["output_excerpt"].rstrip().endswith("FloodError: hose 8 overflowed")
    assert "bytes of output omitted" in result["output_excerpt"]
    assert broken["matched_lines"] == [{"line": "FloodError: hose 8 overflowed", "signature": 0}]
    assert result["fixed"]["truncated"] is False


def test_segfault_is_a_verdict_not_a_harness_error(full_run: Run) -> None:
    crash = full_run.result("segfaults")
    assert crash["broken"]["signal"] == "SIGSEGV" and crash["broken"]["exit_code"] is None
    assert crash["matched_signature"] == 0
    assert crash["fixed"]["signal"] == "SIGSEGV" and "SIGSEGV" in crash["reason"]
    silent = full_run.result("segfaults-silently")
    assert silent["broken"]["signal"] == "SIGSEGV" and "SIGSEGV" in silent["reason"]


def test_clean_environment_temp_folder_and_untouched_repository(full_run: Run) -> None:
    text = full_run.result("writes-cwd")["output_excerpt"]
    values = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    workdir = values["cwd"]
    assert values["home"] == workdir and values["tmpdir"] == workdir
    assert values["leaked"] == "", "TORCH_*/other user settings leaked into the reproducer"
    assert Path(workdir).name.startswith("failpedia-verify-")
    assert not Path(workdir).exists(), "the reproducer's temporary folder was not removed"
    changed = git(full_run.root, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert changed, "records were not written"
    assert all(line[3:].startswith("verification/") for line in changed), changed


def test_skips(full_run: Run) -> None:
    cuda = full_run.result("needs-cuda")
    assert "GPU" in cuda["reason"] and cuda["broken"] is None and cuda["device"] == "cuda"
    package = full_run.result("needs-missing-pkg")
    assert "nonexistent-pkg==1.0" in package["reason"] and package["broken"] is None


def test_records(full_run: Run) -> None:
    folder = full_run.root / "verification"
    written = sorted(path.name for path in folder.iterdir())
    assert written == sorted(f"{entry}.json" for entry in EXPECTED_VERDICTS if entry not in SKIPPED)
    key = full_run.document["environment"]["key"]
    for path in folder.iterdir():
        record = read_json(path)
        assert record["entry"] == path.stem
        ours = [item for item in record["results"] if item["environment"]["key"] == key]
        assert len(ours) == 1 and ours[0]["verdict"] == EXPECTED_VERDICTS[path.stem]
    proves = read_json(folder / "proves.json")["results"]
    assert [item["environment"]["key"] for item in proves] == sorted(
        [key, OTHER_ENVIRONMENT["key"]]
    ), "the other environment's result was dropped"
    assert "never-reproduces.json" in full_run.process.stderr  # the corrupt record, replaced
    assert (folder / "proves.json").stat().st_mode & 0o777 == 0o644 or os.name != "posix"


def test_only_skips_exit_0_and_newest_result_per_environment(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    first = verify(root, "proves", "needs-cuda", "needs-missing-pkg", "--device", "cpu", "--json")
    assert first.returncode == 0, first.stderr
    document = json.loads(first.stdout)
    verdicts = {item["entry"]: item["verdict"] for item in document["results"]}
    assert verdicts == {"proves": "proved", "needs-cuda": "skipped", "needs-missing-pkg": "skipped"}
    assert (
        "needs a GPU"
        in next(r for r in document["results"] if r["entry"] == "needs-cuda")["reason"]
    )
    path = root / "verification" / "proves.json"
    record = read_json(path)
    assert len(record["results"]) == 1
    record["results"][0]["reason"] = "an older run"
    record["results"][0]["started_at"] = "2001-01-01T00:00:00Z"
    path.write_text(json.dumps(record))

    second = verify(root, "proves")
    assert second.returncode == 0, second.stderr
    header = second.stdout.splitlines()[0].split()
    assert header == ["entry", "verdict", "broken", "s", "fixed", "s", "reason"]
    assert second.stdout.splitlines()[-1] == "1 entry: 1 proved"
    results = read_json(path)["results"]
    assert len(results) == 1 and results[0]["reason"] != "an older run"
    assert not [name for name in os.listdir(path.parent) if name.startswith(".")]


def test_since_selects_changed_entries_and_leaves_the_repository_alone(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    with (root / "entries/outcomes/proves/repro.py").open("a") as file:
        file.write("# touched\n")
    (root / "entries/outcomes/fix-fails/notes.txt").write_text("untracked\n")
    before = git(root, "status", "--porcelain", "--untracked-files=all")
    result = verify(root, "--since", "HEAD", "--no-record", "--json")
    entries = sorted(item["entry"] for item in json.loads(result.stdout)["results"])
    assert entries == ["fix-fails", "proves"], result.stderr
    assert result.returncode == 1  # fix-fails
    assert git(root, "status", "--porcelain", "--untracked-files=all") == before
    assert not (root / "verification").exists()


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    unknown = verify(root, "proves", "provse-nothing")
    assert unknown.returncode == 2
    assert "unknown entry id 'provse-nothing'" in unknown.stderr
    bad_ref = verify(root, "--since", "no-such-ref")
    assert bad_ref.returncode == 2 and "no-such-ref" in bad_ref.stderr
    both = verify(root, "proves", "--since", "HEAD")
    assert both.returncode == 2
    jobs = verify(root, "--jobs", "0")
    assert jobs.returncode == 2
    assert not (root / "verification").exists()
    for done in (unknown, bad_ref, both, jobs):
        assert "Traceback" not in done.stderr


def test_entry_problems_exit_1(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    (root / "entries/outcomes/proves/entry.yaml").write_text("id: [\n")
    result = verify(root)
    assert result.returncode == 1
    assert "entries/outcomes/proves/entry.yaml" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_documents_exit_codes() -> None:
    result = verify(FIXTURE, "--help")
    assert result.returncode == 0
    said = " ".join(result.stdout.split())  # help wraps its paragraphs to the terminal
    for words in ("Exit codes: 0 every selected entry proved", "; 1 any entry", "; 2 bad usage"):
        assert words in said


# ---------------------------------------------------------------- the runner, in process


def fixture_entry(entry_id: str, root: Path = FIXTURE):
    catalog, problems = load_catalog(root / "entries", root)
    assert not problems, problems.report()
    return catalog.by_id[entry_id]


def test_memory_stays_bounded_on_huge_output() -> None:
    item = fixture_entry("prints-100mb")
    tracemalloc.start()
    try:
        captured = runner.run_mode(item.folder / "repro.py", [], 60, item.patterns)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert captured.result.output_bytes >= 100_000_000
    assert peak < 4_000_000, f"peak Python memory {peak:,} bytes while reading 100 MB"
    assert len(captured.output.head) + len(captured.output.tail) == (
        capture.HEAD_BYTES + capture.TAIL_BYTES
    )


def test_harness_errors(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(FIXTURE, root)
    item = fixture_entry("proves", root)
    missing_python = runner.verify_entry(
        item, environment.Capabilities(), python=str(tmp_path / "no-python")
    )
    assert missing_python.verdict == results.HARNESS_ERROR and "no-python" in missing_python.reason
    (item.folder / "repro.py").unlink()
    missing_script = runner.verify_entry(item, environment.Capabilities())
    assert missing_script.verdict == results.HARNESS_ERROR and "repro.py" in missing_script.reason
    assert missing_script.to_dict()["broken"] is None


def test_lines_split_on_carriage_returns_and_lose_colour() -> None:
    output = capture.BoundedOutput()
    output.add(b"step 1\rstep 2\r\x1b[31mFooError: widget count 3 exceeds")
    output.add(b" limit 2\x1b[0m\r\nnext " + b"y" * 10_000 + b"\n")
    lines = output.lines()
    assert "FooError: widget count 3 exceeds limit 2" in lines
    assert "step 1" in lines and max(len(line) for line in lines) == LINE_CAP
    pattern = fixture_entry("proves").patterns
    assert capture.match_lines(lines, pattern) == [
        results.MatchedLine("FooError: widget count 3 exceeds limit 2", 0)
    ]


def test_load_record_never_raises(tmp_path: Path) -> None:
    assert results.load_record(tmp_path, "absent") == (None, None)
    (tmp_path / "broken.json").write_text("{")
    record, problem = results.load_record(tmp_path, "broken")
    assert record is None and "not valid JSON" in problem
    (tmp_path / "list.json").write_text("[]")
    assert results.load_record(tmp_path, "list")[0] is None
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    assert results.load_record(tmp_path, "binary")[0] is None


def test_update_record_is_atomic_and_skips_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = fixture_entry("proves")
    skipped = environment.skipped_result(item, "needs a GPU")
    assert records.update_record(tmp_path, skipped, {"key": "k"}) == (None, None)
    assert not list(tmp_path.iterdir())

    result = results.VerificationResult(
        entry="proves",
        verdict=results.PROVED,
        reason="r",
        device="cpu",
        started_at=results.now_iso(),
        timeout=5,
    )
    path, problem = records.update_record(tmp_path, result, {"key": "a"})
    assert problem is None and read_json(path)["results"][0]["environment"] == {"key": "a"}
    original = path.read_bytes()

    def fail(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(records.os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        records.update_record(tmp_path, result, {"key": "b"})
    assert path.read_bytes() == original
    assert [entry.name for entry in tmp_path.iterdir()] == ["proves.json"]
    monkeypatch.undo()
    records.update_record(tmp_path, result, {"key": "b"})
    assert [item["environment"]["key"] for item in read_json(path)["results"]] == ["a", "b"]


def test_records_go_where_mkdocs_yml_says(tmp_path: Path) -> None:
    """``records_dir`` in the plugin's options moves the records for verify and the site."""
    root = copy_project(tmp_path)
    (root / "mkdocs.yml").write_text(
        "site_name: t\nplugins:\n  - failpedia:\n      records_dir: proofs/cpu\n",
        encoding="utf-8",
    )
    done = verify(root, "proves")
    assert done.returncode == 0, done.stderr
    assert read_json(root / "proofs" / "cpu" / "proves.json")["entry"] == "proves"
    assert not (root / "verification").exists()
