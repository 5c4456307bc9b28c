"""Reproducer for torchrun-unrecognized-local-rank.

`python repro.py`: launches this script as a two-rank training job with
`python -m torch.distributed.launch --nproc-per-node 2` on 127.0.0.1 (gloo, CPU). The
launcher appends `--local-rank=<n>` (dashed, since torch 2.0) to each worker's command
line, but the training script's argparse declares only `--local_rank` (underscore, what
torch 1.x passed), so every worker stops in `parse_args` with
`train.py: error: unrecognized arguments: --local-rank=0` and exit code 2, and the
launcher reports the failed workers.
`python repro.py --fixed`: the parser accepts both spellings into `local_rank` and falls
back on the `LOCAL_RANK` environment variable (what torchrun sets); both ranks run their
step, and the check compares each rank's parsed local rank and all-reduced result with
what the launcher assigned.

Everything the launcher started is killed before the script exits, also on its deadline.
"""

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]
DEADLINE = 100  # seconds for the launch
WORLD_SIZE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="train.py")
    parser.add_argument("--local_rank", type=int, default=0)  # torch 1.x spelling only
    return parser


if FIXED:
# --- fix: start
    def build_parser() -> argparse.ArgumentParser:
        """Accept the dashed (torch 2.0+) and underscored spellings, else LOCAL_RANK."""
        parser = argparse.ArgumentParser(prog="train.py")
        parser.add_argument(
            "--local-rank", "--local_rank", dest="local_rank", type=int,
            default=int(os.environ.get("LOCAL_RANK", 0)),
        )
        return parser
# --- fix: end


def worker(argv: list[str]) -> None:
    """The training script: parse its arguments, then one distributed step."""
    parser = build_parser()
    parser.add_argument("--worker", required=True, metavar="FOLDER")
    parser.add_argument("mode", nargs="*")  # the reproducer's own flags, after "--"
    args = parser.parse_args(argv)

    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    value = torch.tensor([float(args.local_rank + 1)])
    dist.all_reduce(value)  # sum over ranks of (local rank + 1)
    print(f"[rank {rank}] local_rank={args.local_rank} all_reduce={value.item()}", flush=True)
    with open(os.path.join(args.worker, f"rank-{rank}.json"), "w") as f:
        json.dump({"local_rank": args.local_rank, "env": os.environ["LOCAL_RANK"], "sum": value.item()}, f)
    dist.destroy_process_group()


def free_port() -> int:
    """A free port below Linux's ephemeral range, so no other socket takes it meanwhile."""
    for port in random.Random().sample(range(20000, 32000), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 20000 and 32000")


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (the launcher starts each worker in a session of its own)."""
    parent_of = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent_of[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [p for p, pp in parent_of.items() if pp == parent]
        found += children
        frontier += children
    return found


def launch(folder: str) -> int:
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", MASTER_ADDR="127.0.0.1")
    command = [
        sys.executable, "-m", "torch.distributed.launch",
        "--nproc-per-node", str(WORLD_SIZE), "--master-port", str(free_port()),
        __file__, "--worker", folder, "--", *sys.argv[1:],
    ]
    launcher = subprocess.Popen(command, env=env)
    try:
        return launcher.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        print(f"launcher still running after {DEADLINE} s: stopping it")
        return 1
    finally:
        if launcher.poll() is None:
            for pid in [*descendants(launcher.pid), launcher.pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            launcher.wait()


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(sys.argv[1:])
        sys.exit(0)
    folder = tempfile.mkdtemp(prefix="repro-local-rank-")
    exit_code = launch(folder)
    print(f"launcher exited {exit_code}")

    # --- check: start
    assert exit_code == 0, exit_code
    expected_sum = float(sum(range(1, WORLD_SIZE + 1)))  # every rank took part once
    for rank in range(WORLD_SIZE):
        with open(os.path.join(folder, f"rank-{rank}.json")) as f:
            result = json.load(f)
        assert result["local_rank"] == rank == int(result["env"]), (rank, result)
        assert result["sum"] == expected_sum, (rank, result)
    print(f"check: both ranks parsed their own local rank and all-reduced {expected_sum}")
    # --- check: end
    shutil.rmtree(folder, ignore_errors=True)
