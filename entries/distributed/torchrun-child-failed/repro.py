"""Reproducer for torchrun-child-failed.

`python repro.py`: launches this script as the worker with
`python -m torch.distributed.run --nproc-per-node 2 --master-port <free port>`, two gloo
ranks on 127.0.0.1. Rank 0 prepares the data (writes one shard file per rank, which
takes a few seconds, like tokenizing or downloading a data set); rank 1 opens its
shard right away, before rank 0 has written it, and dies with `FileNotFoundError`. The
elastic agent sees rank 1 exit with code 1, sends SIGTERM to rank 0, logs
`failed (exitcode: 1) local_rank: 1 (pid: N) of binary: ...` and raises
`torch.distributed.elastic.multiprocessing.errors.ChildFailedError` with rank 1 as the
`Root Cause (first observed failure)`.
`python repro.py --fixed`: the other ranks wait in `dist.barrier()` until rank 0 has
finished preparing the data, then load their shard; both ranks exit 0 and torchrun exits 0.
The check compares each rank's all-reduced gradient with one computed in a single process
from both shards rank 0 wrote: every rank trained on its shard.

Everything torchrun started is killed before the script exits, also on its deadline.
"""

import contextlib
import datetime
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

FIXED = "--fixed" in sys.argv[1:]
DEADLINE = 100  # seconds for the torchrun launch


def prepare_data(folder: str, world_size: int) -> None:
    """Rank 0 only: build and save one shard per rank (slow in real life)."""
    import torch

    time.sleep(5)  # tokenizing, downloading or decompressing
    for rank in range(world_size):
        torch.save(torch.randn(64, 16), os.path.join(folder, f"shard-{rank}.pt"))


def worker(folder: str) -> None:
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        prepare_data(folder, world_size)
    if FIXED:
        # --- fix: start
        dist.barrier()  # every rank waits here until rank 0 has written the shards
        # --- fix: end
    data = torch.load(os.path.join(folder, f"shard-{rank}.pt"))
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 1)
    model(data).pow(2).mean().backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
    print(f"[rank {rank}] trained on {len(data)} samples", flush=True)
    torch.save(model.weight.grad, os.path.join(folder, f"grad-{rank}.pt"))
    dist.destroy_process_group()


def free_port() -> int:
    # A free port below Linux's ephemeral range (32768-60999): no socket bound to port 0
    # in the meantime (gloo opens many) can take it before rank 0 listens on it.
    for port in random.Random().sample(range(20000, 32000), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 20000 and 32000")


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (torchrun starts each worker in a session of its own)."""
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
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    command = [
        sys.executable, "-m", "torch.distributed.run",
        "--nproc-per-node", "2", "--master-port", str(free_port()),
        __file__, *sys.argv[1:], "--worker", folder,
    ]
    torchrun = subprocess.Popen(command, env=env)
    try:
        return torchrun.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        print(f"torchrun still running after {DEADLINE} s: stopping it")
        return 1
    finally:
        if torchrun.poll() is None:
            for pid in [*descendants(torchrun.pid), torchrun.pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            torchrun.wait()


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(sys.argv[-1])
        sys.exit(0)
    import torch

    folder = tempfile.mkdtemp(prefix="repro-torchrun-")
    exit_code = launch(folder)
    print(f"torchrun exited {exit_code}")

    # --- check: start
    assert exit_code == 0, exit_code
    torch.manual_seed(0)
    reference = torch.nn.Linear(16, 1)  # one process, both shards, no torchrun
    for rank in range(2):
        shard = torch.load(os.path.join(folder, f"shard-{rank}.pt"))
        reference(shard).pow(2).mean().backward()
    for rank in range(2):
        summed = torch.load(os.path.join(folder, f"grad-{rank}.pt"))
        torch.testing.assert_close(summed, reference.weight.grad)
    print("check: each rank's summed gradient equals one computed from both shards")
    # --- check: end
    shutil.rmtree(folder, ignore_errors=True)
