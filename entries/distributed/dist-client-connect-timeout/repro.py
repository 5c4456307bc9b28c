"""Reproducer for dist-client-connect-timeout.

`python repro.py`: a two-rank gloo job started by a hand-written launcher that gives each
rank its environment. The launcher picks "a free port" separately for each rank, so rank
0 starts its rendezvous store (TCPStore) on one port and rank 1 is told another, where
nothing listens: the same situation as a wrong `MASTER_ADDR`/`MASTER_PORT` on a second
node, or a rank 0 that never started. Rank 1 keeps retrying its connection and, after
the 10-second timeout given to `init_process_group`, fails with
`torch.distributed.DistNetworkError: The client socket has timed out after 10000ms while
trying to connect to (127.0.0.1, PORT).` (rank 0 then gives up waiting for it).
`python repro.py --fixed`: the launcher chooses the address and port once and gives the
same `MASTER_ADDR`/`MASTER_PORT` to every rank; both join the store and an `all_reduce`
over the two ranks runs. The check reads what each rank computed: 1 + 2 = 3 in a group
of two.
"""

import os
import random
import socket
import subprocess
import sys
import tempfile
from datetime import timedelta

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
TIMEOUT_S = 10  # init_process_group(timeout=...); the default is 30 minutes (NCCL: 10)


def worker() -> None:
    import torch
    import torch.distributed as dist

    # env://: RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT come from the launcher.
    dist.init_process_group("gloo", timeout=timedelta(seconds=TIMEOUT_S))
    t = torch.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(t)
    print(f"rank {dist.get_rank()}: all_reduce over {dist.get_world_size()} ranks -> {t.item()}", flush=True)
    with open(os.path.join(os.environ["RESULTS"], f"rank{dist.get_rank()}.txt"), "w") as f:
        f.write(f"{dist.get_world_size()} {t.item()}")
    dist.destroy_process_group()


def free_port() -> int:
    # A free port below Linux's ephemeral range (32768-60999), where nothing listens.
    for port in random.Random().sample(range(20000, 32000), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 20000 and 32000")


def rendezvous_for(rank: int) -> tuple[str, int]:
    return "127.0.0.1", free_port()  # the bug: every rank gets its own port


if FIXED:
    # --- fix: start
    # Choose the rendezvous address once, in the launcher, and give it to every rank.
    ADDRESS = ("127.0.0.1", free_port())

    def rendezvous_for(rank: int) -> tuple[str, int]:
        return ADDRESS
    # --- fix: end


def launch(folder: str) -> int:
    procs = []
    for rank in range(WORLD_SIZE):
        addr, port = rendezvous_for(rank)
        print(f"rank {rank}: MASTER_ADDR={addr} MASTER_PORT={port}", flush=True)
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(WORLD_SIZE),
                   MASTER_ADDR=addr, MASTER_PORT=str(port), RESULTS=folder)
        procs.append(subprocess.Popen([sys.executable, __file__, "--worker"], env=env))
    codes = []
    for proc in procs:
        try:
            codes.append(proc.wait(timeout=60))
        except subprocess.TimeoutExpired:
            proc.kill()
            codes.append(proc.wait())
    return max(codes, key=abs)


if __name__ == "__main__":
    if "--worker" in sys.argv[1:]:
        worker()
        sys.exit(0)
    folder = tempfile.mkdtemp()
    exit_code = launch(folder)
    print(f"worst exit code: {exit_code}", flush=True)

    # --- check: start
    assert exit_code == 0, exit_code
    for rank in range(WORLD_SIZE):
        with open(os.path.join(folder, f"rank{rank}.txt")) as f:
            world_size, total = f.read().split()
        assert int(world_size) == WORLD_SIZE and float(total) == sum(range(1, WORLD_SIZE + 1))
    print(f"check: all {WORLD_SIZE} ranks joined one group and summed 1 + 2 = 3")
    # --- check: end
