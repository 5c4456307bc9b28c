"""Reproducer for dist-env-var-not-set.

`python repro.py`: a DDP training script calls `dist.init_process_group("gloo")` with no
`init_method`, which means `env://`: rank, world size and the address of rank 0's store
are read from `RANK`, `WORLD_SIZE`, `MASTER_ADDR` and `MASTER_PORT`. The script is started
as a plain `python train.py`, so no launcher has set them, and the rendezvous fails with
`Error initializing torch.distributed using env:// rendezvous: environment variable RANK
expected, but not set`.
`python repro.py --fixed`: the same training function is started by torchrun
(`python -m torch.distributed.run`, two processes, static rendezvous on 127.0.0.1 and a
free port). torchrun sets the four variables for each process it starts, both ranks
initialize, and a DDP step runs.
"""

import random
import socket
import subprocess
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

FIXED = "--fixed" in sys.argv[1:]


def train() -> None:
    # env:// (the default init_method): RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    rank, world = dist.get_rank(), dist.get_world_size()
    model = DDP(torch.nn.Linear(4, 1))
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    print(f"rank {rank}/{world}: one DDP step done, loss {loss.item():.4f}", flush=True)
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


def launch_with_torchrun() -> None:
    # --- fix: start
    # Start the script through torchrun, which sets RANK, LOCAL_RANK, WORLD_SIZE,
    # MASTER_ADDR and MASTER_PORT for every process. On the command line this is:
    #   torchrun --nproc-per-node=2 --master-addr=127.0.0.1 --master-port=<free port> train.py
    cmd = [
        sys.executable, "-m", "torch.distributed.run",
        "--nnodes=1", "--nproc-per-node=2",
        "--master-addr=127.0.0.1", f"--master-port={free_port()}",
        __file__, "--worker",
    ]
    subprocess.run(cmd, check=True, timeout=100)
    # --- fix: end


if __name__ == "__main__":
    if "--worker" in sys.argv[1:] or not FIXED:
        train()  # the bug: run directly, nothing has set the env:// variables
    else:
        launch_with_torchrun()
