"""Measure what `failpedia run` adds to a command that prints 1 GB, in one run.

Writes the synthetic training log of `diagnose_speed.py` (rank prefixes, tqdm bars
redrawn with carriage returns, ANSI colour, NCCL chatter, tracebacks, near-misses of every
real signature and planted true matches), then times, as whole processes, each of two
commands that print it:

- `cat LOG`: the whole log as fast as a pipe takes it, the worst case for a wrapper;
- `python printer.py LOG`: the log printed line by line with `print`, each line one
  write (as with `PYTHONUNBUFFERED=1`), as a training program's logging does;

each run four ways, in turn, with its standard output on /dev/null:

- bare: `COMMAND > /dev/null`;
- piped: `COMMAND | cat > /dev/null`, the cheapest way to read what a command prints;
- tee: `COMMAND | tee FILE > /dev/null`, what a training command is often wrapped in to
  keep its output (FILE in the same temporary folder as `failpedia run`'s spool);
- failpedia: `failpedia run -- COMMAND > /dev/null`, which passes every byte through and
  diagnoses it (its stderr, the diagnosis, is kept to check what it found).

For each it reports the median wall time, the CPU seconds of the whole process tree (user
+ system, which do not count waiting for a CPU and so are steadier on a busy machine), and
the peak memory of `failpedia run` and its matcher. The log is read into the page cache
before every timed run; the package is byte-compiled and the matcher's database compiled
(and cached) before the first.

    python benchmarks/run_overhead.py [--megabytes 1000] [--runs 3]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS))

from diagnose_speed import REPO, byte_compile_package, write_log  # noqa: E402
from failpedia.project.index_compile import quick_check, usable_catalog  # noqa: E402
from failpedia.settings import read_settings  # noqa: E402

# Each line is one write, as with PYTHONUNBUFFERED=1, which training jobs often set so
# that their logs are current: the most writes a pipe reader gets for the bytes.
PRINTER = """\
import sys
sys.stdout.reconfigure(write_through=True)
with open(sys.argv[1], encoding="utf-8", newline="") as log:
    for line in log:
        print(line, end="")
"""
# Runs `failpedia run` in this interpreter and records the peak memory of it and of its
# matcher: the largest of this process and the children it waited for (the matcher and
# the shell that runs the command, whose `cat` or printer is smaller than either).
MEASURED_RUN = """\
import resource, sys
from failpedia.cli.main import main
code = main(["run", "--", *sys.argv[2:]])
peak = max(resource.getrusage(who).ru_maxrss
           for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
with open(sys.argv[1], "w") as out:
    out.write(str(peak))
sys.exit(code)
"""


def timed(command: list[str] | str, stderr_path: Path | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (the whole process tree: children are waited for) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(stderr_path or os.devnull, "wb") as stderr:
        done = subprocess.run(
            command,
            shell=isinstance(command, str),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            check=False,
        )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{command} failed with {done.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def quoted(command: list[str]) -> str:
    return " ".join("'" + part.replace("'", "'\\''") + "'" for part in command)


def measure(producer: list[str], log: Path, runs: int, work: Path) -> dict[str, dict[str, float]]:
    memory_file = work / "peak-kib"
    ended_file = work / "command-ended"
    # Under failpedia the command notes when it ended: the diagnosis may follow later, as
    # the matcher catches up with output it spooled.
    noting_its_end = ["sh", "-c", quoted(producer) + f" && date +%s.%N > {ended_file}"]
    ways: dict[str, list[str] | str] = {
        "bare": producer,
        "piped": quoted(producer) + " | cat > /dev/null",
        # What a training command is often wrapped in to keep its output: a copy on disk.
        "tee": quoted(producer) + f" | tee {work / 'kept.log'} > /dev/null",
        "failpedia": [sys.executable, "-c", MEASURED_RUN, str(memory_file), *noting_its_end],
    }
    walls: dict[str, list[float]] = {name: [] for name in ways}
    cpus: dict[str, list[float]] = {name: [] for name in ways}
    ended: dict[str, list[float]] = {name: [] for name in ways}
    peaks: list[int] = []
    for _ in range(runs):
        for name, command in ways.items():
            subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL, check=True)
            diagnosis = work / "diagnosis.txt" if name == "failpedia" else None
            started = time.time()
            wall, cpu = timed(command, diagnosis)
            walls[name].append(wall)
            cpus[name].append(cpu)
            ended[name].append(wall)
            (work / "kept.log").unlink(missing_ok=True)
            if name == "failpedia":
                ended[name][-1] = float(ended_file.read_text()) - started
                peaks.append(int(memory_file.read_text()))
                text = (work / "diagnosis.txt").read_text(encoding="utf-8", errors="replace")
                if "known failure" not in text:
                    raise SystemExit(f"failpedia run found nothing:\n{text[-2000:]}")
    result: dict[str, dict[str, float]] = {
        name: {
            "command_ended_s": round(statistics.median(ended[name]), 3),
            "wall_s": round(statistics.median(walls[name]), 3),
            "cpu_s": round(statistics.median(cpus[name]), 3),
            "wall_runs": [round(value, 3) for value in walls[name]],
            "cpu_runs": [round(value, 3) for value in cpus[name]],
            "command_ended_runs": [round(value, 3) for value in ended[name]],
        }
        for name in ways
    }
    result["failpedia"]["peak_rss_mib"] = round(max(peaks) / 1024, 1)
    return result


def machine() -> dict[str, object]:
    revision = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    return {
        "cpus": len(os.sched_getaffinity(0)),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "revision": revision,
        "date": datetime.date.today().isoformat(),
        "load_average": os.getloadavg(),
    }


def table(results: dict[str, dict[str, dict[str, float]]], megabytes: int) -> str:
    rows = [
        "| Command | Way | Command ended (s) | vs piped | Wall (s) | CPU (s) | MB/s "
        "| Wall vs bare | Wall vs piped | Added CPU (s) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for producer, ways in results.items():
        bare, piped = ways["bare"], ways["piped"]
        for name, numbers in ways.items():
            wall, cpu, ended = numbers["wall_s"], numbers["cpu_s"], numbers["command_ended_s"]
            rows.append(
                f"| {producer} | {name} | {ended:.2f} | {ended / piped['command_ended_s']:.2f}x "
                f"| {wall:.2f} | {cpu:.2f} | {megabytes / wall:,.0f} "
                f"| {wall / bare['wall_s']:.2f}x | {wall / piped['wall_s']:.2f}x "
                f"| {cpu - bare['cpu_s']:+.2f} |"
            )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=str(BENCHMARKS / "results"))
    args = parser.parse_args()
    byte_compile_package()
    work = Path(tempfile.mkdtemp(prefix="failpedia-run-bench-"))
    try:
        project = usable_catalog(quick_check(read_settings(REPO)))[0]
        real_lines = [line for item in project.entries for line in item.signature_lines()]
        log = work / "train.log"
        planted = write_log(log, args.megabytes, real_lines, random.Random(7))
        printer = work / "printer.py"
        printer.write_text(PRINTER, encoding="utf-8")
        # Compile (and cache) the matcher before anything is timed.
        timed([sys.executable, "-m", "failpedia.cli", "run", "--", "true"])
        started = machine()
        results = {
            "cat": measure(["cat", str(log)], log, args.runs, work),
            "python print": measure([sys.executable, str(printer), str(log)], log, args.runs, work),
        }
        report = {
            "machine": started,
            "load_average_after": os.getloadavg(),
            "megabytes": round(log.stat().st_size / 1e6, 1),
            "planted_matches": planted,
            "runs": args.runs,
            "results": results,
        }
    finally:
        for path in work.iterdir():
            path.unlink()
        work.rmdir()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "run_overhead.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    text = table(results, report["megabytes"])  # type: ignore[arg-type]
    (out / "run_overhead.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
