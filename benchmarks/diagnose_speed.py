"""Measure `failpedia diagnose` against `grep -E -f` with the same patterns, in one run.

Writes a synthetic training log (rank prefixes, tqdm carriage-return bars, ANSI colour,
NCCL chatter, Python logging, tracebacks, near-misses of real signatures, and a few
hundred true matches), then times, as whole processes with the file in the page cache:

- `LC_ALL=C grep -E -c -f PATTERNS LOG` and `failpedia diagnose --json --index INDEX LOG`,
  with the project's signature set and with a synthetic set of 2,000 signatures;
- `zcat LOG.gz | grep -E -c -f PATTERNS` and `failpedia diagnose LOG.gz`;

grep and failpedia in turn, each timed run preceded by reading the input into the page
cache. The project set is timed ``--runs`` times (its grep runs take a minute), the
synthetic set three times as often; the medians are reported.

The Hyperscan database is compiled once before the timed runs (it is cached on disk, as
on a user's machine after the first run); the compile time is reported separately.
The package's modules are byte-compiled first, as pip does when it installs the wheel:
where PYTHONDONTWRITEBYTECODE is set (as on the benchmark machine) an editable install
would otherwise compile every module from source on every run, about 40 ms.

    python benchmarks/diagnose_speed.py [--megabytes 1000] [--synthetic 2000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "generator"))

from failpedia.catalog.index_build import build_index  # noqa: E402
from failpedia.cli.index_source import compile_catalog  # noqa: E402
from failpedia.signatures.dialect import DOT, compile_pattern  # noqa: E402
from failpedia.signatures.index_format import dump_json  # noqa: E402

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
    """The canonical pattern in grep's POSIX ERE (no (?: groups, no lazy quantifiers)."""
    text = canonical.replace(DOT, "[^\r]").replace("(?:", "(")
    text = re.sub(r"([*+?}])\?", r"\1", text)
    return text.replace("\\t", "\t").replace("\\/", "/")


def synthetic_index(count: int, rng: random.Random) -> tuple[dict, list[str]]:
    """``count`` signatures with a 15-60 character literal core and small variable parts,
    and one matching line for each."""
    entries, lines = [], []
    for number in range(count):
        words = [rng.choice(WORDS) + str(rng.randint(0, 999)) for _ in range(rng.randint(3, 8))]
        core = f"E{number:04d} " + " ".join(words)
        source = re.escape(core).replace("\\ ", " ") + r" at step \d+ \(size [\w.]+\)"
        compiled = compile_pattern(source)
        entries.append(
            {
                "id": f"synthetic-{number}",
                "title": core,
                "category": "synthetic",
                "kind": "crash",
                "role": "initiating",
                "url": f"synthetic/{number}/",
                "causes": [],
                "caused_by": [],
                "patterns": [{"source": compiled.canonical, "literals": list(compiled.literals)}],
            }
        )
        lines.append(f"RuntimeError: {core} at step {rng.randint(1, 99999)} (size 4.5)")
    index = build_index(compile_catalog(REPO / "entries")[0], "")
    index["entries"] = entries
    return index, lines


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


def write_log(path: Path, megabytes: int, matches: list[str], rng: random.Random) -> int:
    project = compile_catalog(REPO / "entries")[0]
    real_lines = [line for item in project.entries for line in item.signature_lines()]
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


def timed(command: list[str] | str, shell: bool = False) -> float:
    """Wall seconds of the whole process (or shell pipeline).

    Output goes to a pipe, not /dev/null: GNU grep notices /dev/null and stops at the first
    match, as with -q. Exit status 0 (found) and 1 (nothing found) are both full runs."""
    start = time.perf_counter()
    done = subprocess.run(
        command, shell=shell, capture_output=True, env={**os.environ, "LC_ALL": "C"}, check=False
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=1000)
    parser.add_argument("--synthetic", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results"))
    args = parser.parse_args()
    rng = random.Random(7)
    byte_compile_package()
    work = Path(tempfile.mkdtemp(prefix="failpedia-bench-"))
    try:
        catalog, settings = compile_catalog(REPO / "entries")
        project_index = build_index(catalog, settings.site_url)
        synthetic, synthetic_lines = synthetic_index(args.synthetic, rng)
        sets = {"project": project_index, f"synthetic-{args.synthetic}": synthetic}
        log = work / "train.log"
        planted = write_log(log, args.megabytes, synthetic_lines, rng)
        size_mb = log.stat().st_size / 1e6
        subprocess.run(f"gzip -1 -c {log} > {log}.gz", shell=True, check=True)
        rows = []
        for name, index in sets.items():
            index_file = work / f"{name}.json"
            index_file.write_text(dump_json(index))
            patterns = work / f"{name}.ere"
            patterns.write_text(
                "\n".join(to_ere(p["source"]) for e in index["entries"] for p in e["patterns"])
                + "\n"
            )
            cache = work / "cache"
            shutil.rmtree(cache, ignore_errors=True)
            failpedia = [
                sys.executable,
                "-m",
                "failpedia.cli",
                "diagnose",
                "--json",
                "--index",
                str(index_file),
            ]
            os.environ["XDG_CACHE_HOME"] = str(cache)
            small = work / "small.log"
            small.write_text("warm up\n")
            compile_seconds = timed([*failpedia, str(small)])
            for label, grep_cmd, ours, warm in (
                (
                    "plain",
                    ["grep", "-E", "-c", "-f", str(patterns), str(log)],
                    [*failpedia, str(log)],
                    log,
                ),
                (
                    "gzip",
                    f"zcat {log}.gz | grep -E -c -f {patterns}",
                    [*failpedia, f"{log}.gz"],
                    Path(f"{log}.gz"),
                ),
            ):
                # Runs under 5 s are cheap to repeat, and single ones vary by a third here.
                runs = args.runs if name == "project" else 3 * args.runs
                grep_s, ours_s = median_runs(grep_cmd, ours, runs, warm)
                rows.append(
                    {
                        "signatures": name,
                        "input": label,
                        "patterns": sum(len(e["patterns"]) for e in index["entries"]),
                        "grep_s": round(grep_s, 2),
                        "failpedia_s": round(ours_s, 2),
                        "grep_mb_s": round(size_mb / grep_s),
                        "failpedia_mb_s": round(size_mb / ours_s),
                        "speedup": round(grep_s / ours_s, 2),
                        "first_run_with_compile_s": round(compile_seconds, 2),
                        "runs": runs,
                    }
                )
        result = {
            "date": time.strftime("%Y-%m-%d"),
            "machine": f"{os.cpu_count()} cores, {platform.machine()}",
            "python": platform.python_version(),
            "log_mb": round(size_mb),
            "planted_matches": planted,
            "rows": rows,
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
