"""``failpedia diagnose`` through its command line, on the corpus of realistic logs."""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import failpedia
import pytest
from diagnose_helpers import (
    CORPUS,
    MATMUL_LINE,
    corpus_logs,
    diagnose_json,
    downstream_only_log,
    essence,
    expectations,
    many_occurrences_log,
    run_diagnose,
    traceback_first_log,
)


@pytest.mark.slow
@pytest.mark.parametrize("log", corpus_logs(), ids=lambda path: path.name)
def test_corpus_log_finds_the_initiating_failure_first(log: Path) -> None:
    expected = expectations()[log.name]
    result = diagnose_json(str(log))
    ids = [item["id"] for item in result["findings"]]
    if expected["first"] is None:
        assert ids == []
        assert any(expected["unmatched_includes"] in item["text"] for item in result["unmatched"])
        return
    assert ids[0] == expected["first"]
    if "first_ranks" in expected:
        assert result["findings"][0]["ranks"] == expected["first_ranks"]
    for other in expected.get("includes", []):
        assert other in ids
    if "order" in expected:
        assert ids == expected["order"]


@pytest.mark.slow
@pytest.mark.parametrize("log", corpus_logs(), ids=lambda path: path.name)
def test_gzip_stdin_and_both_engines_agree(log: Path, tmp_path: Path) -> None:
    plain = essence(diagnose_json(str(log)))
    packed = tmp_path / (log.name + ".gz")
    packed.write_bytes(gzip.compress(log.read_bytes()))
    assert essence(diagnose_json(str(packed))) == plain
    assert essence(diagnose_json("-", stdin=log.read_bytes())) == plain
    assert essence(diagnose_json("--engine", "literal", str(log))) == plain


@pytest.mark.slow
def test_compiled_matcher_is_reused_from_the_cache(tmp_path: Path) -> None:
    """The compiled database is written once and loaded by later runs, not rebuilt."""
    pytest.importorskip("hyperscan")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    log = corpus_logs()[0]
    first = essence(diagnose_json(str(log), env=env))
    databases = sorted((tmp_path / "cache" / "failpedia").glob("*.db"))
    assert databases, "no compiled database was cached"
    for path in databases:  # an old timestamp: a rebuild would replace the file
        os.utime(path, ns=(1, 1))
    assert essence(diagnose_json(str(log), env=env)) == first
    assert [path.stat().st_mtime_ns for path in databases] == [1] * len(databases)


@pytest.mark.slow
def test_an_index_file_is_matched_from_its_cached_databases(tmp_path: Path) -> None:
    """Given an index file, diagnose finds its compiled matcher by the file's content and
    starts scanning before parsing it: the second run finds what the first did without
    compiling again, and an edited index file is compiled anew, never matched with the
    old databases."""
    pytest.importorskip("hyperscan")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-m", "failpedia.cli", "index", "--out", str(tmp_path / "data")],
        capture_output=True,
        check=True,
    )
    index = tmp_path / "data" / "signatures.json"
    log = next(path for path in corpus_logs() if path.name == "nccl-oom-cascade.log")
    expected = essence(diagnose_json(str(log)))  # the catalog compiled from entries/
    assert essence(diagnose_json("--index", str(index), str(log), env=env)) == expected
    databases = sorted((tmp_path / "cache" / "failpedia").glob("*.db"))
    assert databases, done.stderr
    for path in databases:  # an old timestamp: a rebuild would replace the file
        os.utime(path, ns=(1, 1))
    assert essence(diagnose_json("--index", str(index), str(log), env=env)) == expected
    assert [path.stat().st_mtime_ns for path in databases] == [1] * len(databases)

    data = json.loads(index.read_text())
    data["entries"] = [item for item in data["entries"] if item["id"] != "cuda-oom"]
    index.write_text(json.dumps(data))
    edited = essence(diagnose_json("--index", str(index), str(log), env=env))
    assert edited == [item for item in expected if item[0] != "cuda-oom"]


@pytest.mark.slow
def test_literal_pass_and_crowded_blocks_find_what_the_pure_python_engine_finds(
    tmp_path: Path,
) -> None:
    """The literal pass answers quiet blocks; a block crowded with near-misses goes to the
    whole patterns. Both find what the pure-Python engine finds, on every corpus log and
    on the crowded block, and again when the databases are read back from the cache."""
    pytest.importorskip("hyperscan")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    subprocess.run(
        [sys.executable, "-m", "failpedia.cli", "index", "--out", str(tmp_path / "data")],
        capture_output=True,
        check=True,
    )
    index = tmp_path / "data" / "signatures.json"
    data = json.loads(index.read_text())
    [view] = [
        item for item in data["entries"] if item["id"] == "view-size-not-compatible-with-stride"
    ]
    crowded = tmp_path / "crowded.log"
    lines = [
        f"[rank{number % 8}]: near miss: {view['patterns'][0]['literals'][0]}"
        for number in range(300)
    ]
    for number in (5, 77, 298):
        lines[number] = f"[rank{number % 8}]: {VIEW}"
    crowded.write_text("\n".join(lines) + "\n")

    found_any = False
    for log in [*corpus_logs(), crowded]:
        fast = diagnose_json("--index", str(index), str(log), env=env)
        literal = diagnose_json("--engine", "literal", "--index", str(index), str(log))
        assert _without_run_details(fast) == _without_run_details(literal), log.name
        cached = diagnose_json("--index", str(index), str(log), env=env)
        assert _without_run_details(cached) == _without_run_details(fast), log.name
        found_any = found_any or bool(fast["findings"])
    assert found_any
    [finding] = diagnose_json("--index", str(index), str(crowded), env=env)["findings"]
    assert [item["line"] for item in finding["locations"]] == [6, 78, 299]
    assert list((tmp_path / "cache" / "failpedia").glob("hs-literals-*.db"))


@pytest.mark.slow
def test_exit_codes_and_text_output(tmp_path: Path) -> None:
    corpus = {path.name: path for path in corpus_logs()}
    found = run_diagnose(str(corpus["ddp-dataloader-oom.log"]))
    assert found.returncode == 0
    text = found.stdout.decode()
    assert "dataloader-worker-killed-by-signal" in text
    assert "https://failpedia.github.io/failpedia/data/dataloader-worker-killed-by-signal/" in text
    assert "seen 3 times on ranks 2-3" in text
    nothing = run_diagnose(str(corpus["no-known-failure.log"]))
    assert nothing.returncode == 1
    assert "No known failure" in nothing.stdout.decode()
    assert "ValueError: bad schedule" in nothing.stdout.decode()
    missing = run_diagnose(str(tmp_path / "nope.log"))
    assert missing.returncode == 2
    assert b"nope.log: no such file or folder" in missing.stderr
    assert b"Traceback" not in missing.stderr
    broken = tmp_path / "broken.log.gz"
    broken.write_bytes(gzip.compress(b"x" * 10000)[:40])
    result = run_diagnose(str(broken), str(corpus["ddp-dataloader-oom.log"]))
    assert result.returncode == 2
    assert b"broken.log.gz" in result.stderr and b"Traceback" not in result.stderr
    assert b"dataloader-worker-killed-by-signal" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("damage", [20, 40, 100, -12], ids=lambda at: f"bytes-at-{at}")
def test_a_damaged_gzip_log_is_reported_not_raised(tmp_path: Path, damage: int) -> None:
    """A corrupt deflate stream, a bad distance, a bad checksum: each is one error line
    naming the file, and the other inputs are still read."""
    packed = bytearray(gzip.compress(b"[rank0]: step 1 loss 2.1\n" * 50_000))
    packed[damage : damage + 8 or None] = b"\xff" * 8
    broken = tmp_path / "damaged.log.gz"
    broken.write_bytes(bytes(packed))
    good = corpus_logs()[0]
    result = run_diagnose(str(broken), str(good))
    assert result.returncode == 2
    stderr = result.stderr.decode()
    assert "damaged.log.gz: cannot decompress" in stderr and "Traceback" not in stderr
    assert result.stdout  # the good log's findings are still printed


@pytest.mark.slow
def test_a_truncated_gzip_log_reports_what_was_read_before_the_damage(tmp_path: Path) -> None:
    """A gzip log cut off in the middle (a copy interrupted, a node that died writing it):
    the lines before the cut are read, matched and counted, and the cut is an error."""
    lines = [f"[rank0]: step {number} loss 2.1" for number in range(1, 100_001)]
    lines[99] = "[rank0]: " + MATMUL.format(100)
    data = ("\n".join(lines) + "\n").encode()
    packed = gzip.compress(data)
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    result = run_diagnose("--json", str(cut))
    assert result.returncode == 2
    assert f"error: {cut}: cannot decompress" in result.stderr.decode()
    found = json.loads(result.stdout)
    [summary] = found["inputs"]
    read = data[: summary["bytes"]]
    assert len(data) // 4 < len(read) < len(data)
    assert summary["lines"] == read.count(b"\n") + (not read.endswith(b"\n"))
    [finding] = found["findings"]
    assert finding["first"]["line"] == 100
    text = run_diagnose(str(cut)).stdout.decode().splitlines()[0]
    assert text.startswith("1 known failure in 1 log, ") and "0 bytes" not in text
    assert text.endswith(f"{summary['lines']:,} lines; the one that started it first.")


def test_per_rank_log_folder_takes_ranks_from_folder_names(tmp_path: Path) -> None:
    """torchrun --log-dir keeps <run>/attempt_0/<local_rank>/stderr.log, without prefixes."""
    source = CORPUS / "srun-resume-size-mismatch.log"
    lines = source.read_text().splitlines()
    for rank in (0, 1):
        folder = tmp_path / "run" / "attempt_0" / str(rank)
        folder.mkdir(parents=True)
        mine = [line[3:] for line in lines if line.startswith(f"{rank}: ")]
        (folder / "stderr.log").write_text("\n".join(mine) + "\n")
        (folder / "stdout.log").write_text("")
    result = diagnose_json(str(tmp_path / "run"))
    [finding] = result["findings"]
    assert finding["id"] == "load-state-dict-size-mismatch"
    assert finding["ranks"] == ["0", "1"]
    assert finding["count"] == 2
    assert len(result["inputs"]) == 4


def _unprivileged_cli(env: dict[str, str]) -> tuple[list[str], dict[str, Any]]:
    """The command line of the CLI, and how to run it, such that file permissions apply:
    as it is, or, for root, as the user nobody, with a Python that nobody can run (this
    one may live in root's home). Skipped where root cannot run anything as nobody."""
    if os.geteuid() != 0:
        return [sys.executable, "-m", "failpedia.cli"], {}
    as_nobody: dict[str, Any] = {"user": 65534, "group": 65534, "extra_groups": []}
    for python in (sys.executable, "/usr/bin/python3"):
        try:
            probe = subprocess.run(
                [python, "-c", "import failpedia.cli"], env=env, capture_output=True, **as_nobody
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if probe.returncode == 0:
            return [python, "-m", "failpedia.cli"], as_nobody
    pytest.skip("running as root, and no Python the user nobody can run")


@pytest.mark.slow
def test_unreadable_files_in_a_log_folder_are_reported() -> None:
    """A torchrun log folder where one rank's folder, one file and one link cannot be read:
    each is named on an error line and the exit is 2, as for a named file, and what can
    be read is still diagnosed."""
    base = Path(tempfile.mkdtemp(prefix="failpedia-unreadable-"))
    try:
        base.chmod(0o755)  # the unprivileged user must reach it
        (base / "cache").mkdir(mode=0o777)
        (base / "cache").chmod(0o777)
        env = {
            **os.environ,
            "PYTHONPATH": str(Path(failpedia.__file__).parent.parent),
            "XDG_CACHE_HOME": str(base / "cache"),
        }
        command, how = _unprivileged_cli(env)
        # The index compiled once into the cache, as a user's earlier call leaves it: the
        # unprivileged run reads it (the Python it may run need not compile one).
        (base / "empty.log").write_text("")
        warm = subprocess.run(
            [sys.executable, "-m", "failpedia.cli", "diagnose", str(base / "empty.log")],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert warm.returncode == 1, warm.stderr
        for folder, _, files in os.walk(base / "cache"):
            os.chmod(folder, 0o777)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o666)
        ranks = base / "run" / "attempt_0"
        for rank in range(4):
            (ranks / str(rank)).mkdir(parents=True)
            (ranks / str(rank) / "stderr.log").write_text(MATMUL.format(rank) + "\n")
        (ranks / "1").chmod(0)
        (ranks / "2" / "stderr.log").chmod(0)
        (ranks / "3" / "stderr.log").unlink()
        (ranks / "3" / "stderr.log").symlink_to(base / "gone.log")
        done = subprocess.run(
            [*command, "diagnose", "--json", str(base / "run")],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            **how,
        )
        errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
        assert errors == [
            f"error: {ranks / '1'}: cannot read: Permission denied",
            f"error: {ranks / '2' / 'stderr.log'}: cannot read: Permission denied",
            f"error: {ranks / '3' / 'stderr.log'}: cannot read: No such file or directory",
        ]
        assert done.returncode == 2
        [finding] = json.loads(done.stdout)["findings"]
        assert finding["ranks"] == ["0"]
    finally:
        for folder, _, _ in os.walk(base):
            os.chmod(folder, 0o755)
        shutil.rmtree(base)


def test_rank_prefixes_timestamps_and_root_cause_order(tmp_path: Path) -> None:
    """A downstream line printed earlier does not outrank the failure torchrun names."""
    log = tmp_path / "mixed.log"
    log.write_text(
        "[rank1]:[2024-06-11 03:00:00,000] RuntimeError: DataLoader worker (pid(s) 9) exited "
        "unexpectedly\n"
        "0: [2024-06-11 03:00:05,000] RuntimeError: mat1 and mat2 shapes cannot be multiplied "
        "(4x8 and 16x2)\n"
        "node3:4411:4411 [2] RuntimeError: view size is not compatible with input tensor's size "
        "and stride (at least one dimension spans across two contiguous subspaces). Use "
        ".reshape(...) instead.\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        "  time      : 2024-06-11_03:00:09\n"
        "  rank      : 7 (local_rank: 3)\n"
        "==================================================\n"
        "[default3]:RuntimeError: view size is not compatible with input tensor's size and "
        "stride (at least one dimension spans across two contiguous subspaces). Use "
        ".reshape(...) instead.\n"
    )
    findings = diagnose_json(str(log))["findings"]
    by_id = {item["id"]: item for item in findings}
    view = by_id["view-size-not-compatible-with-stride"]
    assert view["ranks"] == ["3", "node3:4411"]
    assert view["root_cause"] is True
    assert findings[0]["id"] == "view-size-not-compatible-with-stride"
    assert by_id["matmul-shapes-cannot-be-multiplied"]["first"]["rank"] == "0"
    assert by_id["matmul-shapes-cannot-be-multiplied"]["first"]["time"] == "2024-06-11T03:00:05Z"


# Every C0 control but tab and newline, DEL and every C1 control: what a terminal acts on.
TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


@pytest.mark.slow
def test_terminal_controls_in_a_log_are_shown_not_executed(tmp_path: Path) -> None:
    """Escape sequences that survive the ANSI stripping (ESC c resets the terminal), C0
    and C1 controls, backspaces and DEL, in the matched line, its context, an error-like
    line and a file name, are printed visibly (^[, ^H, ^?, M-^[ as ``cat -v`` shows
    them), never as themselves; the JSON output keeps them exactly."""
    hostile = "\x1bc\x08\x08\x7f\u009b2J\x07\x00"
    log = tmp_path / "ev\x1bil\x08\x9b.log"
    log.write_text(
        f"[rank0]: before {hostile}\n"
        f"[rank0]:{MATMUL.format(8)} {hostile}\n"
        f"[rank0]: after {hostile}\n",
        encoding="utf-8",
    )
    shown = run_diagnose(str(log)).stdout.decode()
    assert not TERMINAL_CONTROLS.findall(shown.replace("\n", ""))
    assert "^[c^H^H^?M-^[2J^G^@" in shown
    assert f"> 2 | {MATMUL.format(8)} ^[c^H^H^?M-^[2J^G^@" in shown
    assert "  1 | [rank0]: before ^[c" in shown and "ev^[il^HM-^[.log" in shown
    [finding] = diagnose_json(str(log))["findings"]
    assert finding["first"]["text"] == f"{MATMUL.format(8)} {hostile}"
    assert finding["first"]["after"] == [f"[rank0]: after {hostile}"]

    unmatched = tmp_path / "unmatched.log"
    unmatched.write_text(f"ValueError: bad schedule {hostile}\n", encoding="utf-8")
    shown = run_diagnose(str(unmatched)).stdout.decode()
    assert "ValueError: bad schedule ^[c^H^H^?M-^[2J^G^@" in shown
    assert not TERMINAL_CONTROLS.findall(shown.replace("\n", ""))


def test_lines_are_capped_before_matching(tmp_path: Path) -> None:
    message = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 16x2)"
    log = tmp_path / "long.log"
    log.write_text("x" * 5000 + message + "\n" + message + "\n")
    for engine in ("hyperscan", "literal"):
        [finding] = diagnose_json("--engine", engine, str(log))["findings"]
        assert finding["count"] == 1 and finding["first"]["line"] == 2


@pytest.mark.slow
def test_a_dot_matches_a_character_that_takes_several_bytes(tmp_path: Path) -> None:
    """A pattern's ``.`` stands for one character, however many bytes UTF-8 spends on it:
    a line pasted through a web page with a curly apostrophe is found as its straight form
    is, by both engines (the validator accepts such lines too)."""
    straight = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
    log = tmp_path / "curly.log"
    log.write_text(straight.replace("'", "\u2018") + "\n" + straight + "\n", encoding="utf-8")
    for engine in ("hyperscan", "literal"):
        [finding] = diagnose_json("--engine", engine, str(log))["findings"]
        assert finding["id"] == "nvidia-smi-cannot-communicate"
        assert finding["count"] == 2 and finding["first"]["line"] == 1


def _python(script: str, log: Path) -> subprocess.CompletedProcess[bytes]:
    """Run ``script`` in a fresh interpreter with the log's path as its argument."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(log)], capture_output=True, timeout=300
    )
    assert done.returncode == 0, done.stderr.decode()
    return done


def _peak_rss_kib(log: Path) -> int:
    script = (
        "import resource, sys\n"
        "from failpedia.cli.main import main\n"
        "code = main(['diagnose', '--json', sys.argv[1]])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    return int(_python(script, log).stderr.decode().strip().splitlines()[-1])


def _write_log(path: Path, megabytes: int) -> None:
    bar = "[default1]: 12%|#2        | 120/1000 [00:12<01:28,  9.95it/s]\r" * 20 + "\n"
    chunk = (bar + "[default1]:[2024-06-11 03:00:00,000] INFO step 1200 loss 2.113\n") * 2000
    with path.open("w") as handle:
        for _ in range(megabytes * 1_000_000 // len(chunk) + 1):
            handle.write(chunk)
        handle.write("RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 16x2)\n")


def test_memory_stays_flat_as_the_log_grows(tmp_path: Path) -> None:
    """Six times the log, about the same peak memory: the file is streamed, never held."""
    small, large = tmp_path / "small.log", tmp_path / "large.log"
    _write_log(small, 20)
    _write_log(large, 120)
    growth_kib = _peak_rss_kib(large) - _peak_rss_kib(small)
    assert growth_kib < 30_000, f"peak memory grew by {growth_kib} KiB for 100 MB more log"


def _write_matching_log(path: Path, megabytes: int) -> int:
    """A log where every line is a failure, on one of 64 ranks, padded to about a kilobyte
    (many hits, yet few enough to match quickly); returns its line count."""
    lines = 0
    with path.open("w") as handle:
        while handle.tell() < megabytes * 1_000_000:
            handle.write(
                "".join(
                    f"[rank{number % 64}]: RuntimeError: mat1 and mat2 shapes cannot be "
                    f"multiplied (4x{number} and 16x2) {'.' * (900 + number % 100)}\n"
                    for number in range(lines, lines + 1000)
                )
            )
            lines += 1000
    return lines


@pytest.mark.slow
def test_memory_stays_flat_when_every_line_matches(tmp_path: Path) -> None:
    """Ten times as many matches, about the same peak memory: a finding keeps its counts,
    ranks, first occurrence and a bounded list of locations, not every occurrence, and
    the hits wait for the matcher in bounded batches. (16 MB keeps up to eight scanning
    threads busy, as the larger log does.)"""
    small, large = tmp_path / "small.log", tmp_path / "large.log"
    _write_matching_log(small, 16)
    lines = _write_matching_log(large, 160)
    growth_kib = _peak_rss_kib(large) - _peak_rss_kib(small)
    assert growth_kib < 30_000, f"peak memory grew by {growth_kib} KiB for 144 MB more matches"
    [finding] = diagnose_json(str(large))["findings"]
    assert finding["count"] == lines
    assert finding["ranks"] == [str(rank) for rank in range(64)]
    assert finding["first"]["line"] == 1
    assert [item["line"] for item in finding["locations"]] == list(range(1, 51))


@pytest.mark.parametrize(("year", "view_first"), [(2024, 122), (2023, 121)])
def test_counts_ranks_and_the_true_first_past_the_listed_locations(
    tmp_path: Path, year: int, view_first: int
) -> None:
    """Only MAX_LOCATIONS occurrences are listed, yet the count, the ranks and the first by
    the ordering rules are those of every occurrence: the earliest time, wherever it is,
    with a year-less time read in the year the log's other times give (on the 29th of
    February, before the 1st of March in a leap year, the same day otherwise)."""
    log = tmp_path / "many.log"
    log.write_text(many_occurrences_log(year))
    by_id = {item["id"]: item for item in diagnose_json(str(log))["findings"]}
    matmul = by_id["matmul-shapes-cannot-be-multiplied"]
    assert matmul["count"] == 120 and matmul["ranks"] == ["0", "1", "2", "3"]
    assert [item["line"] for item in matmul["locations"]] == list(range(1, 51))
    assert (matmul["first"]["line"], matmul["first"]["time"]) == (119, f"{year}-06-11T03:00:00Z")
    view = by_id["view-size-not-compatible-with-stride"]
    assert view["count"] == 80 and view["ranks"] == ["1", "2"]
    assert view["first"]["line"] == view_first
    assert view["locations"][-1]["line"] == 170


MATMUL = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x{} and 16x2)"
TARGET = "IndexError: Target {} is out of bounds."
VIEW = (
    "RuntimeError: view size is not compatible with input tensor's size and stride (at "
    "least one dimension spans across two contiguous subspaces). Use .reshape(...) instead."
)
MEBIBYTE = 1 << 20


def _filler(number: int) -> str:
    """An ordinary line that names its own line number; every seventh is coloured."""
    if number % 7 == 0:
        return f"\x1b[33m[W] filler line {number}\x1b[0m padding {'.' * (number % 90)}"
    return f"[rank{number % 8}]: filler line {number} loss 2.1 {'.' * (number % 90)}"


def _write_edge_log(path: Path) -> dict[str, list[int]]:
    """About 6 MiB of numbered lines with failures planted on the lines near each MiB
    boundary (300 bytes either side), a coloured one, and one at the end of a progress-bar
    line longer than a MiB. Returns the line numbers of each planted message kind."""
    planted: dict[str, list[int]] = {"matmul": [], "target": [], "view": []}
    offset, number = 0, 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        while offset < 6 * MEBIBYTE:
            number += 1
            boundary = max(1, round(offset / MEBIBYTE)) * MEBIBYTE
            if number == 30_000:
                line = "train: 5%|#|\r" * (3 * MEBIBYTE // 26) + TARGET.format(number)
                planted["target"].append(number)
            elif number == 20_000:
                line = "\x1b[31m" + VIEW + "\x1b[0m"
                planted["view"].append(number)
            elif boundary - 300 <= offset + 150 and offset <= boundary + 300:
                line = MATMUL.format(number)
                planted["matmul"].append(number)
            else:
                line = _filler(number)
            handle.write(line + "\n")
            offset += len(line.encode()) + 1
    return planted


def _without_run_details(result: dict) -> Any:
    """The result without what differs by how it was read: engine, warnings, file names."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                key: "LOG" if key in ("file", "name") else strip(item)
                for key, item in value.items()
                if key not in ("engine", "warnings")
            }
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value

    return strip(result)


@pytest.mark.slow
def test_block_edges_keep_line_numbers_context_and_colour(tmp_path: Path) -> None:
    """Lines on and around every MiB boundary, a line longer than a block and coloured
    lines come out with the right numbers and context, whichever way the log is read."""
    log = tmp_path / "edges.log"
    planted = _write_edge_log(log)
    assert len(planted["matmul"]) >= 10
    result = diagnose_json("--context", "2", str(log))
    by_id = {item["id"]: item for item in result["findings"]}
    matmul = by_id["matmul-shapes-cannot-be-multiplied"]
    assert matmul["count"] == len(planted["matmul"])
    assert [item["line"] for item in matmul["locations"]] == planted["matmul"]
    first = planted["matmul"][0]
    assert matmul["first"]["line"] == first
    assert matmul["first"]["before"] == [
        re.sub("\x1b\\[[0-9;]*m", "", _filler(number)) for number in (first - 2, first - 1)
    ]
    view = by_id["view-size-not-compatible-with-stride"]["first"]
    assert (view["line"], view["text"]) == (20_000, VIEW)
    assert [line.split(" loss")[0] for line in view["after"]] == [
        "[rank1]: filler line 20001",
        "[rank2]: filler line 20002",
    ]
    target = by_id["cross-entropy-target-out-of-bounds"]["first"]
    assert (target["line"], target["text"]) == (30_000, TARGET.format(30_000))
    assert result["inputs"][0]["lines"] == sum(1 for _ in log.open("rb"))

    packed = tmp_path / "edges.log.gz"
    packed.write_bytes(gzip.compress(log.read_bytes(), compresslevel=1))
    expected = _without_run_details(result)
    assert _without_run_details(diagnose_json("--context", "2", str(packed))) == expected
    stdin = diagnose_json("--context", "2", "-", stdin=log.read_bytes())
    assert _without_run_details(stdin) == expected
    literal = diagnose_json("--engine", "literal", "--context", "2", str(log))
    assert _without_run_details(literal) == expected


def test_without_the_compiled_reader_the_results_are_the_same(tmp_path: Path) -> None:
    """Where the C helpers could not be built, diagnose reads in Python, says so, and
    finds the same things."""
    log = tmp_path / "edges.log"
    _write_edge_log(log)
    script = (
        "import sys\n"
        "sys.modules['failpedia.diagnose._logbytes'] = None  # as if it had not been built\n"
        "from failpedia.cli.main import main\n"
        "sys.exit(main(['diagnose', '--json', sys.argv[1]]))\n"
    )
    done = _python(script, log)
    pure = json.loads(done.stdout)
    assert any("compiled log reader" in warning for warning in pure["warnings"])
    assert b"compiled log reader" in done.stderr
    compiled = diagnose_json(str(log))
    assert not any("compiled log reader" in warning for warning in compiled["warnings"])
    assert _without_run_details(pure) == _without_run_details(compiled)


def test_a_block_crowded_with_near_misses_finds_only_the_matches(tmp_path: Path) -> None:
    """Hundreds of lines that hold a signature's literal text but do not match it (so the
    fast literal pass is not enough and the block is scanned again with whole patterns),
    among a few that do."""
    near_miss = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (AxB and CxD)"
    lines = [near_miss] * 400
    for number in (17, 150, 151, 399):
        lines[number] = MATMUL.format(number + 1)
    log = tmp_path / "crowded.log"
    log.write_text("\n".join(lines) + "\n")
    result = diagnose_json(str(log))
    [finding] = result["findings"]
    assert finding["count"] == 4
    assert [item["line"] for item in finding["locations"]] == [18, 151, 152, 400]
    literal = diagnose_json("--engine", "literal", str(log))
    assert _without_run_details(literal) == _without_run_details(result)


SMALL_BLOCKS = r"""
import contextlib, gzip, io, json, sys
from pathlib import Path
import failpedia.diagnose.blocks as blocks
import failpedia.diagnose.stretches as ranges
from failpedia.cli.main import main
# Blocks of a few lines, stretches of three blocks, two hits held per waiting stretch:
# nearly every line lies near a block or stretch edge.
blocks.BLOCK_SIZE, blocks.MAX_CARRY = 96, 1 << 16
ranges.STRETCH_BLOCKS, ranges.BUFFERED_HITS = 3, 2
log = Path(sys.argv[1])
packed = log.with_name(log.name + ".gz")
packed.write_bytes(gzip.compress(log.read_bytes()))
results = []
for path in (log, packed, None):
    if path is None:
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.BytesIO(log.read_bytes())))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["diagnose", "--json", "--context", "3", str(path or "-")])
    results.append(json.loads(out.getvalue()))
print(json.dumps(results))
"""


def _write_small_block_log(path: Path, seed: int) -> dict[str, list[int]]:
    """Lines from a few bytes to several blocks long (some coloured, some progress bars),
    failures and a torchrun root-cause block among them. Returns each failure's lines."""
    rng = random.Random(seed)
    planted: dict[str, list[int]] = {"matmul": [], "target": [], "view": []}
    lines: list[str] = []
    while len(lines) < 400:
        roll = rng.random()
        if roll < 0.06:
            planted["matmul"].append(len(lines) + 1)
            lines.append(MATMUL.format(len(lines) + 1))
        elif roll < 0.08:
            planted["target"].append(len(lines) + 1)
            lines.append(TARGET.format(len(lines) + 1))
        elif roll < 0.09:
            planted["view"].append(len(lines) + 1)
            lines.append("\x1b[31m" + VIEW + "\x1b[0m")
        elif roll < 0.1:
            lines += [
                "Root Cause (first observed failure):",
                "[0]:",
                f"  rank      : {rng.randint(0, 7)} (local_rank: 0)",
                "=" * 60,
            ]
        elif roll < 0.2:
            lines.append("step 3%|#|\r" * rng.randint(1, 60) + f"line {len(lines) + 1}")
        else:
            lines.append(_filler(len(lines) + 1)[: rng.randint(0, 120)])
    path.write_text("\n".join(lines) + ("\n" if seed % 2 else ""), encoding="utf-8")
    return planted


@pytest.mark.parametrize("seed", range(8))
def test_stretches_read_in_parallel_give_what_one_stream_gives(tmp_path: Path, seed: int) -> None:
    """A plain file is scanned in stretches on several threads, a gzip file or standard
    input as one stream: with blocks of a few lines, so that hits, their context and
    torchrun's root-cause block fall across block and stretch edges, all three agree,
    and the failures are found on the lines they were written to."""
    log = tmp_path / "small-blocks.log"
    planted = _write_small_block_log(log, seed)
    plain, packed, piped = json.loads(_python(SMALL_BLOCKS, log).stdout)
    by_id = {item["id"]: item for item in plain["findings"]}
    for kind, entry in (
        ("matmul", "matmul-shapes-cannot-be-multiplied"),
        ("target", "cross-entropy-target-out-of-bounds"),
        ("view", "view-size-not-compatible-with-stride"),
    ):
        found = [item["line"] for item in by_id[entry]["locations"]] if entry in by_id else []
        assert found == planted[kind]
    assert plain["inputs"][0]["lines"] == len(log.read_bytes().rstrip(b"\n").split(b"\n"))
    assert _without_run_details(packed) == _without_run_details(plain)
    piped.pop("unmatched"), plain.pop("unmatched")  # standard input also looks for them
    assert _without_run_details(piped) == _without_run_details(plain)


@pytest.mark.slow
def test_a_time_without_a_year_is_shown_as_written_never_in_a_made_up_year(
    tmp_path: Path,
) -> None:
    """glog times carry no year: the text and the JSON show them as the log wrote them,
    with no sortable time, while a time with its year keeps its ISO form."""
    log = tmp_path / "watchdog.log"
    log.write_text(downstream_only_log())
    done = run_diagnose(str(log))
    text = done.stdout.decode()
    assert "rank 1, 0902 14:10:01.512345 (no year in the log)" in text
    assert "1970" not in text
    [finding] = diagnose_json(str(log))["findings"]
    assert finding["first"]["time"] is None
    assert finding["first"]["time_text"] == "0902 14:10:01.512345"
    assert [item["time_text"] for item in finding["locations"]] == [
        "0902 14:10:03.512345",
        "0902 14:10:01.512345",
        "0902 14:10:02.512345",
    ]
    assert {item["time"] for item in finding["locations"]} == {None}
    dated = tmp_path / "dated.log"
    dated.write_text("[2023-05-01 10:00:00,250] ERROR " + MATMUL_LINE.format(8) + "\n")
    log.write_text(downstream_only_log() + dated.read_text())
    by_id = {item["id"]: item for item in diagnose_json(str(log))["findings"]}
    matmul = by_id["matmul-shapes-cannot-be-multiplied"]["first"]
    assert (matmul["time"], matmul["time_text"]) == (
        "2023-05-01T10:00:00.250Z",
        "2023-05-01 10:00:00,250",
    )
    # The year another line gives orders the glog times, but is not printed for them.
    assert by_id["nccl-watchdog-timeout"]["first"]["time"] is None
    assert "2023-09-02" not in run_diagnose(str(log)).stdout.decode()


@pytest.mark.slow
def test_first_at_is_the_earliest_match(tmp_path: Path) -> None:
    """A traceback's last line, without a time, comes before the logger's lines that repeat
    it with times: it is the first. Between lines with times, the earliest time is, in one
    log and across the logs of several ranks."""
    log = tmp_path / "train.log"
    log.write_text(traceback_first_log(width=10))
    [finding] = diagnose_json(str(log))["findings"]
    assert (finding["first"]["line"], finding["first"]["time"]) == (4, None)
    assert "first at " + str(log) + ":4\n" in run_diagnose(str(log)).stdout.decode()
    timed = tmp_path / "timed.log"
    timed.write_text("".join(traceback_first_log(width=10).splitlines(keepends=True)[4:]))
    [finding] = diagnose_json(str(timed))["findings"]
    assert (finding["first"]["line"], finding["first"]["time"]) == (2, "2024-06-11T03:00:01Z")
    ranks = tmp_path / "ranks"
    for rank, second in ((0, 9), (1, 4), (2, 6)):
        (ranks / str(rank)).mkdir(parents=True)
        (ranks / str(rank) / "stderr.log").write_text(
            f"step 1\n[2024-06-11 03:00:0{second},000] ERROR {MATMUL_LINE.format(rank)}\n"
        )
    [finding] = diagnose_json(str(ranks))["findings"]
    assert (finding["first"]["rank"], finding["first"]["time"]) == ("1", "2024-06-11T03:00:04Z")


@pytest.mark.slow
def test_a_log_of_downstream_failures_only_points_to_the_other_ranks(tmp_path: Path) -> None:
    log = tmp_path / "survivor.log"
    log.write_text(downstream_only_log())
    first_line = run_diagnose(str(log)).stdout.decode().splitlines()[0]
    assert first_line.endswith(
        "; it follows from another failure. The initiating failure is not in this log; "
        "look at the other ranks' logs."
    )
    assert "the one that started it" not in first_line
    log.write_text(downstream_only_log() + MATMUL_LINE.format(8) + "\n")
    first_line = run_diagnose(str(log)).stdout.decode().splitlines()[0]
    assert first_line.endswith("; the one that started it first.")


OOM_LINE = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
    "total capacity of 79.11 GiB of which 1.06 GiB is free."
)


def _damage_log(size: str) -> bytes:
    """A log whose first line and last line are known failures: a few lines, or 2 MB."""
    filler = 1 if size == "small" else 100_000
    lines = [MATMUL.format(1), *(f"[rank0]: step {n} loss 2.1" for n in range(filler)), OOM_LINE]
    return ("\n".join(lines) + "\n").encode()


def _errors(stderr: bytes) -> list[str]:
    return [line for line in stderr.decode().splitlines() if line.startswith("error: ")]


@pytest.mark.parametrize("size", ["small", "large"])
@pytest.mark.parametrize("cut", [8, 4, 1], ids=lambda cut: f"last-{cut}-bytes-cut")
def test_a_gzip_log_cut_in_its_trailer_is_read_whole(tmp_path: Path, size: str, cut: int) -> None:
    """A copy stopped a few bytes short leaves every line in the file: all are diagnosed,
    and the cut is named on an error line."""
    data = _damage_log(size)
    cut_log = tmp_path / "cut.log.gz"
    cut_log.write_bytes(gzip.compress(data)[:-cut])
    result = run_diagnose("--json", str(cut_log))
    assert result.returncode == 2
    assert _errors(result.stderr) == [
        f"error: {cut_log}: cannot decompress: cut short in its gzip trailer, after all of "
        "its text (which was read); its checksum could not be checked"
    ]
    found = json.loads(result.stdout)
    assert found["inputs"][0]["bytes"] == len(data)
    ids = {item["id"] for item in found["findings"]}
    assert {"matmul-shapes-cannot-be-multiplied", "cuda-oom"} <= ids


@pytest.mark.parametrize("size", ["small", "large"])
def test_a_gzip_log_cut_in_its_data_is_read_up_to_the_cut(tmp_path: Path, size: str) -> None:
    data = _damage_log(size)
    packed = gzip.compress(data)
    cut_log = tmp_path / "cut.log.gz"
    cut_log.write_bytes(packed[: len(packed) - 12])
    result = run_diagnose("--json", str(cut_log))
    assert result.returncode == 2
    [error] = _errors(result.stderr)
    assert error.startswith(f"error: {cut_log}: cannot decompress: the file ends at byte ")
    assert error.endswith(
        "inside its compressed text (cut short, or damaged near its end); read up to there"
    )
    found = json.loads(result.stdout)
    assert len(data) - 4096 < found["inputs"][0]["bytes"] < len(data)
    assert found["findings"][0]["id"] == "matmul-shapes-cannot-be-multiplied"


@pytest.mark.parametrize("size", ["small", "large"])
@pytest.mark.parametrize("at", [-10, -11, -14], ids=lambda at: f"byte-{at}")
def test_a_gzip_log_damaged_near_its_end_is_read_up_to_the_damage(
    tmp_path: Path, size: str, at: int
) -> None:
    """A byte changed in the compressed text just before the trailer: what decompresses
    before the damage is diagnosed (its first line's failure too, in a file of two lines),
    and the damage is named on an error line."""
    data = _damage_log(size)
    packed = bytearray(gzip.compress(data))
    packed[at] ^= 0xFF
    damaged = tmp_path / "damaged.log.gz"
    damaged.write_bytes(bytes(packed))
    result = run_diagnose("--json", str(damaged))
    assert result.returncode == 2
    [error] = _errors(result.stderr)
    assert error.startswith(f"error: {damaged}: cannot decompress: ")
    assert "damaged" in error
    assert "Traceback" not in result.stderr.decode()
    found = json.loads(result.stdout)
    assert found["inputs"][0]["bytes"] > len(data) - 4096
    assert found["findings"][0]["id"] == "matmul-shapes-cannot-be-multiplied"


def test_a_gzip_log_followed_by_other_bytes_is_read_and_the_rest_named(tmp_path: Path) -> None:
    """Two gzip members one after the other are one log; bytes after them that are not
    gzip are named on an error line, after every line before them was read."""
    data = _damage_log("small")
    joined = tmp_path / "joined.log.gz"
    joined.write_bytes(gzip.compress(data[:40]) + gzip.compress(data[40:]) + b"\0\0junk")
    result = run_diagnose("--json", str(joined))
    assert result.returncode == 2
    offset = len(gzip.compress(data[:40]) + gzip.compress(data[40:])) + 2
    assert _errors(result.stderr) == [
        f"error: {joined}: cannot decompress: damaged: bytes at byte {offset:,} are not gzip "
        "data; the text before them was read"
    ]
    found = json.loads(result.stdout)
    assert found["inputs"][0]["bytes"] == len(data)


def test_a_binary_file_in_a_log_folder_is_named_as_skipped(tmp_path: Path) -> None:
    """A core dump or a checkpoint beside the logs is not read, and a line says so; the
    logs are diagnosed and the exit status is theirs."""
    run_folder = tmp_path / "run"
    (run_folder / "0").mkdir(parents=True)
    (run_folder / "0" / "stderr.log").write_text(MATMUL.format(1) + "\n")
    (run_folder / "0" / "core").write_bytes(b"\x7fELF\x02\x01\x01\0" + bytes(range(256)) * 8)
    result = run_diagnose("--json", str(run_folder))
    assert result.returncode == 0, result.stderr
    stderr = result.stderr.decode()
    assert "Traceback" not in stderr
    assert stderr.splitlines() == [
        f"skipped: {run_folder / '0' / 'core'}: binary (it holds NUL bytes), not a log"
    ]
    found = json.loads(result.stdout)
    assert [item["name"] for item in found["inputs"]] == [str(run_folder / "0" / "stderr.log")]
    assert found["skipped"] == [
        f"{run_folder / '0' / 'core'}: binary (it holds NUL bytes), not a log"
    ]
    assert [item["id"] for item in found["findings"]] == ["matmul-shapes-cannot-be-multiplied"]


def test_a_log_folder_nested_deeply_is_read_without_a_traceback(tmp_path: Path) -> None:
    """A folder 1,500 levels deep (deeper than Python recurses) beside the logs: the logs
    are diagnosed, and the walk neither recurses out of stack nor raises."""
    run_folder = tmp_path / "run"
    (run_folder / "0").mkdir(parents=True)
    (run_folder / "0" / "stderr.log").write_text(MATMUL.format(1) + "\n")
    descriptor = os.open(run_folder, os.O_RDONLY)
    try:
        for _ in range(1500):
            os.mkdir("d", dir_fd=descriptor)
            deeper = os.open("d", os.O_RDONLY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = deeper
    finally:
        os.close(descriptor)
    try:
        result = run_diagnose("--json", str(run_folder))
    finally:
        while (run_folder / "d" / "d").is_dir():  # removed a level at a time, from the top
            os.rename(run_folder / "d" / "d", run_folder / "up")
            os.rmdir(run_folder / "d")
            os.rename(run_folder / "up", run_folder / "d")
    assert "Traceback" not in result.stderr.decode(), result.stderr.decode()[-2000:]
    assert result.returncode == 0
    found = json.loads(result.stdout)
    assert [item["id"] for item in found["findings"]] == ["matmul-shapes-cannot-be-multiplied"]
