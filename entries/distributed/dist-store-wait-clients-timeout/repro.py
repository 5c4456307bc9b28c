"""Reproducer for dist-store-wait-clients-timeout.

`python repro.py`: a two-rank job started by hand, one command per rank, the way jobs are
started across two machines (`RANK`, `WORLD_SIZE=2`, `MASTER_ADDR`, `MASTER_PORT` set per
command). Only rank 0's command runs: rank 1's is never started (a second node whose
launch failed, a forgotten terminal, a scheduler that gave fewer processes than
`WORLD_SIZE`). Rank 0 starts the TCPStore server in `init_process_group` and waits for
`WORLD_SIZE` clients; after the 20-second timeout it raises `Timed out after 21 seconds
waiting for clients. 1/2 clients joined.`
`python repro.py --fixed`: every rank of the world size is started (here as two local
processes on 127.0.0.1); both join the store and an `all_reduce` over the two ranks runs.
The check reads what each rank computed: the sum 1 + 2 over a group of two.
"""

import os
import random
import socket
import subprocess
import sys
import tempfile
from datetime import timedelta

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2  # what the job is configured for
STORE_TIMEOUT_S = 20  # init_process_group(timeout=...); default 30 minutes (NCCL: 10)


def worker() -> None:
    import torch
    import torch.distributed as dist

    # env://: RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT come from the launch command.
    dist.init_process_group("gloo", timeout=timedelta(seconds=STORE_TIMEOUT_S))
    t = torch.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(t)
    print(f"rank {dist.get_rank()}: all_reduce over {dist.get_world_size()} ranks -> {t.item()}", flush=True)
    with open(os.path.join(os.environ["RESULTS"], f"rank{dist.get_rank()}.txt"), "w") as f:
        f.write(f"{dist.get_world_size()} {t.item()}")
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


def launch(ranks: list[int], folder: str) -> int:
    """Start one process per rank, like one command per node; return the worst exit code."""
    port = free_port()
    procs = []
    for rank in ranks:
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(WORLD_SIZE),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RESULTS=folder)
        procs.append(subprocess.Popen([sys.executable, __file__, "--worker"], env=env))
    codes = []
    for proc in procs:
        try:
            codes.append(proc.wait(timeout=90))
        except subprocess.TimeoutExpired:
            proc.kill()
            codes.append(proc.wait())
    return max(codes, key=abs)


if __name__ == "__main__":
    if "--worker" in sys.argv[1:]:
        worker()
        sys.exit(0)
    ranks_started = [0]  # the bug: rank 1's command never runs
    if FIXED:
        # --- fix: start
        # Start every rank of WORLD_SIZE (or let torchrun / mp.spawn start them together),
        # so the number of processes that reach init_process_group equals WORLD_SIZE.
        ranks_started = list(range(WORLD_SIZE))
        # --- fix: end
    print(f"WORLD_SIZE={WORLD_SIZE}, starting ranks {ranks_started}", flush=True)
    folder = tempfile.mkdtemp()
    exit_code = launch(ranks_started, folder)
    print(f"worst exit code: {exit_code}", flush=True)

    # --- check: start
    assert exit_code == 0, exit_code
    for rank in range(WORLD_SIZE):
        with open(os.path.join(folder, f"rank{rank}.txt")) as f:
            world_size, total = f.read().split()
        assert int(world_size) == WORLD_SIZE and float(total) == sum(range(1, WORLD_SIZE + 1))
    print(f"check: all {WORLD_SIZE} ranks summed 1 + 2 = 3 in one group")
    # --- check: end
