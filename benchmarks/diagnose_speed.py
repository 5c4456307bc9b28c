"""Measure `failpedia diagnose` against `grep -E -f` with the same patterns, in one run.

Writes a synthetic training log (rank prefixes, tqdm carriage-return bars, ANSI colour,
NCCL chatter, Python logging, tracebacks, near-misses of real signatures, and a few
hundred true matches) of `--megabytes` (default 300 and 1000), and times, as whole
processes with the log in the page cache, on each log:

- `LC_ALL=C grep -E -c -f PATTERNS LOG`, the catalog's patterns in POSIX ERE;
- `failpedia diagnose --json LOG` from the checkout with a cold cache (a fresh
  `XDG_CACHE_HOME`: the index compiled from the entries, the Hyperscan database compiled);
- the same with a warm cache (the index and the database read from the cache);
- `failpedia diagnose --json LOG` from an installed wheel (built here with `pip wheel`,
  installed in a virtual environment in the temporary folder; run outside any project,
  so it reads the index the wheel ships), its Hyperscan database cached.

Then the start-up, `failpedia diagnose` of an empty log from a checkout with a warm cache,
at the current catalog and at `--sizes` synthetic entries (default 1,000 and 5,000:
projects generated as `build_speed.py` generates them), with the cold first call of
each reported apart.

grep and failpedia run in turn, each timed run preceded by reading the input into the
page cache; the medians of `--runs` are reported. The package's modules are
byte-compiled first, as pip does when it installs the wheel.

    python benchmarks/diagnose_speed.py [--megabytes 300 1000] [--sizes 1000 5000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "generator"))

from failpedia.catalog.catalog import Catalog  # noqa: E402
from failpedia.catalog.index_build import build_index  # noqa: E402
from failpedia.project.index_compile import quick_check, usable_catalog  # noqa: E402
from failpedia.settings import read_settings  # noqa: E402
from failpedia.signatures.dialect import DOT  # noqa: E402

WORDS = (
    "tensor",
    "grad",
    "rank",
    "shard",
    "bucket",
    "optimizer",
    "allreduce",
    "stream",
    "kernel",
    "dtype",
    "buffer",
    "param",
    "layer",
    "cache",
    "graph",
    "device",
)


def to_ere(canonical: str) -> str:
    """The canonical pattern in grep's POSIX ERE (no (?: groups, no lazy quantifiers; a
    backslash in brackets is a literal backslash there, so ``[\\-...]`` becomes ``[-...]``)."""
    text = canonical.replace(DOT, "[^\r]").replace("(?:", "(")
    text = re.sub(r"([*+?}])\?", r"\1", text)
    text = text.replace("[\\-", "[-")
    return text.replace("\\t", "\t").replace("\\/", "/")


def project_catalog() -> Catalog:
    """The checkout's valid entries, as ``diagnose`` compiles them."""
    return usable_catalog(quick_check(read_settings(REPO)))[0]


def noise_block(rng: random.Random, near_misses: list[str]) -> str:
    """About 1 MB of ordinary log lines, including near-misses of real signatures."""
    out: list[str] = []
    size = 0
    while size < 1_000_000:
        rank = rng.randint(0, 63)
        kind = rng.random()
        if kind < 0.3:
            bar = "".join(
                f"\r[default{rank % 8}]:Epoch 2: {p:3d}%|{'#' * (p // 10):<10}| "
                f"{p * 12}/1200 [01:{p % 60:02d}<02:00, 9.9it/s]"
                for p in range(0, 100, 9)
            )
            line = bar[1:]
        elif kind < 0.5:
            line = (
                f"node{rank // 8:02d}:{4000 + rank}:{4100 + rank} [{rank % 8}] NCCL INFO "
                f"Channel {rng.randint(0, 31):02d}/32 : {rank} {(rank + 1) % 64} via P2P/IPC"
            )
        elif kind < 0.7:
            line = (
                f"[rank{rank}]:2024-06-11 03:{rng.randint(0, 59):02d}:"
                f"{rng.randint(0, 59):02d},{rng.randint(0, 999):03d} INFO "
                f"train.py:{rng.randint(10, 400)} step "
                f"{rng.randint(1, 99999)} loss {rng.random() * 3:.4f} lr 3.0e-4"
            )
        elif kind < 0.8:
            line = (
                f"\x1b[33m[W{rng.randint(1000, 1231)} 03:00:00.{rng.randint(0, 999999):06d} "
                f"{rng.randint(100, 9999)} torch/_dynamo/utils.py:{rng.randint(10, 999)}]"
                f"\x1b[0m {rng.choice(WORDS)} {rng.choice(WORDS)} recompiled"
            )
        elif kind < 0.9:
            line = (
                f'  File "/opt/conda/lib/python3.11/site-packages/torch/'
                f'{rng.choice(WORDS)}.py", line {rng.randint(1, 3000)}, '
                f"in {rng.choice(WORDS)}_{rng.choice(WORDS)}"
            )
        else:
            line = f"[rank{rank}]:" + rng.choice(near_misses)
        out.append(line)
        size += len(line) + 1
    return "\n".join(out) + "\n"


def near_miss(line: str) -> str:
    """A signature line with one word changed, so literal prefilters fire but no regex."""
    words = line.split(" ")
    if len(words) > 3:
        words[len(words) // 2] = "qq" + words[len(words) // 2][::-1]
    return " ".join(words)


def project_catalog_lines() -> list[str]:
    """For each signature of the catalog, the line of its text its pattern matches."""
    return [line for item in project_catalog().entries for line in item.signature_lines()]


def write_log(path: Path, megabytes: int, matches: list[str], rng: random.Random) -> int:
    """About ``megabytes`` MB of ordinary lines with, every fifth MB, a line of a real
    signature and one of ``matches``; how many lines were planted."""
    real_lines = project_catalog_lines()
    blocks = [noise_block(rng, [near_miss(line) for line in real_lines]) for _ in range(8)]
    planted = 0
    with path.open("w", encoding="utf-8") as handle:
        for number in range(megabytes):
            handle.write(blocks[number % len(blocks)])
            if number % 5 == 0:
                handle.write(f"[rank{number % 64}]:{rng.choice(real_lines)}\n")
                handle.write(f"[default{number % 8}]:{rng.choice(matches)}\n")
                planted += 2
    return planted


def byte_compile_package() -> None:
    """Byte-compile the failpedia package that ``python -m failpedia.cli`` runs (an
    installed wheel's modules are compiled when pip installs it)."""
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import compileall, failpedia, os; "
            "compileall.compile_dir(os.path.dirname(failpedia.__file__), quiet=1)",
        ],
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )


def timed(
    command: list[str] | str,
    shell: bool = False,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> float:
    """Wall seconds of the whole process (or shell pipeline).

    Output goes to a pipe, not /dev/null: GNU grep notices /dev/null and stops at the first
    match, as with -q. Exit status 0 (found) and 1 (nothing found) are both full runs."""
    start = time.perf_counter()
    done = subprocess.run(
        command,
        shell=shell,
        capture_output=True,
        env={**os.environ, **(env or {}), "LC_ALL": "C"},
        check=False,
        cwd=cwd,
    )
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return seconds


def median_runs(
    grep_cmd: list[str] | str, ours: list[str], runs: int, warm: Path
) -> tuple[float, float]:
    """Median timings of grep and of failpedia, run in turn ``runs`` times each (so a
    change in the machine's load falls on both), the input read into the page cache
    before each run (the kernel may drop pages of a 1 GB file between runs)."""
    grep_times, our_times = [], []
    for _ in range(runs):
        for command, times in ((grep_cmd, grep_times), (ours, our_times)):
            subprocess.run(["cat", str(warm)], stdout=subprocess.DEVNULL, check=True)
            times.append(timed(command, shell=isinstance(command, str)))
    return statistics.median(grep_times), statistics.median(our_times)


def warm_page_cache(path: Path) -> None:
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)


def install_wheel(work: Path) -> Path:
    """Build the wheel of this checkout and install it in a virtual environment that sees
    the dependencies installed here; its Python."""
    wheels = work / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(REPO)],
        check=True,
    )
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    wheel = next(wheels.glob("failpedia-*.whl"))
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)],
        check=True,
    )
    where = subprocess.run(
        [str(python), "-c", "import failpedia; print(failpedia.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=work,
    ).stdout.strip()
    if not where.startswith(str(venv)):
        raise SystemExit(f"the wheel's package is not the one imported: {where}")
    return python


def patterns_file(work: Path) -> Path:
    """The catalog's patterns in POSIX ERE, one a line, for grep."""
    index = build_index(project_catalog(), "")
    path = work / "patterns.ere"
    path.write_text(
        "\n".join(to_ere(p["source"]) for e in index["entries"] for p in e["patterns"]) + "\n"
    )
    return path


def log_rows(
    log: Path, patterns: Path, wheel_python: Path, work: Path, runs: int
) -> dict[str, object]:
    """grep, diagnose from the checkout (cold and warm cache) and from the wheel on ``log``,
    each ``runs`` times in turn; medians in seconds."""
    checkout = [sys.executable, "-m", "failpedia.cli", "diagnose", "--json", str(log)]
    wheel = [str(wheel_python), "-m", "failpedia.cli", "diagnose", "--json", str(log)]
    warm_cache = {"XDG_CACHE_HOME": str(work / "warm-cache")}
    wheel_cache = {"XDG_CACHE_HOME": str(work / "wheel-cache")}
    timed(checkout, env=warm_cache, cwd=REPO)  # fill the caches once
    timed(wheel, env=wheel_cache, cwd=work)
    times: dict[str, list[float]] = {"grep": [], "cold": [], "warm": [], "wheel": []}
    for number in range(runs):
        cold_cache = {"XDG_CACHE_HOME": str(work / f"cold-cache-{log.name}-{number}")}
        for name, command, env, cwd in (
            ("grep", ["grep", "-E", "-c", "-f", str(patterns), str(log)], None, None),
            ("cold", checkout, cold_cache, REPO),
            ("warm", checkout, warm_cache, REPO),
            ("wheel", wheel, wheel_cache, work),
        ):
            warm_page_cache(log)
            times[name].append(timed(command, env=env, cwd=cwd))
        shutil.rmtree(work / f"cold-cache-{log.name}-{number}", ignore_errors=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    size_mb = log.stat().st_size / 1e6
    return {
        "log_mb": round(size_mb),
        "runs": runs,
        "grep_s": round(medians["grep"], 2),
        "checkout_cold_s": round(medians["cold"], 2),
        "checkout_warm_s": round(medians["warm"], 2),
        "wheel_s": round(medians["wheel"], 2),
        "warm_speedup_over_grep": round(medians["grep"] / medians["warm"], 2),
        "wheel_speedup_over_grep": round(medians["grep"] / medians["wheel"], 2),
    }


def cpu_seconds() -> float:
    """User and system seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def startup_row(root: Path, entries: int, empty: Path, work: Path, runs: int) -> dict[str, object]:
    """``diagnose`` of an empty log from the project in ``root``: the first call with an
    empty cache, then the median of ``runs`` calls with the cache warm, in wall seconds
    and in CPU seconds (which leave out waiting for a busy machine's CPUs and disk)."""
    command = [
        sys.executable,
        "-m",
        "failpedia.cli",
        "--root",
        str(root),
        "diagnose",
        "--json",
        str(empty),
    ]
    cache = {"XDG_CACHE_HOME": str(work / f"startup-cache-{entries}")}
    cold = timed(command, env=cache, cwd=work)
    walls, cpus = [], []
    for _ in range(runs):
        before = cpu_seconds()
        walls.append(timed(command, env=cache, cwd=work))
        cpus.append(cpu_seconds() - before)
    return {
        "entries": entries,
        "cold_first_call_s": round(cold, 2),
        "warm_s": round(statistics.median(walls), 3),
        "warm_cpu_s": round(statistics.median(cpus), 3),
        "runs": runs,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, nargs="*", default=[300, 1000])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 5000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results"))
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from build_speed import make_generator_project

    rng = random.Random(7)
    byte_compile_package()
    work = Path(tempfile.mkdtemp(prefix="failpedia-bench-"))
    try:
        wheel_python = install_wheel(work)
        patterns = patterns_file(work)
        catalog_size = len(project_catalog().entries)
        logs = []
        for megabytes in args.megabytes:
            log = work / f"train-{megabytes}.log"
            write_log(log, megabytes, project_catalog_lines(), rng)
            logs.append(log_rows(log, patterns, wheel_python, work, args.runs))
            log.unlink()
        empty = work / "empty.log"
        empty.write_bytes(b"")
        startup = [startup_row(REPO, catalog_size, empty, work, 5)]
        for size in args.sizes:
            project = work / f"synthetic-{size}"
            make_generator_project(project, size)
            startup.append(startup_row(project, size, empty, work, 5))
            shutil.rmtree(project, ignore_errors=True)
        result = {
            "date": time.strftime("%Y-%m-%d"),
            "machine": f"{os.cpu_count()} cores, {platform.machine()}",
            "python": platform.python_version(),
            "patterns": sum(1 for _ in patterns.read_text().splitlines()),
            "catalog_entries": catalog_size,
            "logs": logs,
            "startup": startup,
        }
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"diagnose-{result['date']}.json").write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
