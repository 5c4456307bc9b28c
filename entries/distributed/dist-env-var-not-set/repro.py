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
initialize, and a DDP step runs. The check compares each rank's gradient after the DDP
step with the mean of the two ranks' own gradients computed in one process: both ranks
were in one group of two.
"""

import os
import random
import socket
import subprocess
import sys
import tempfile
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

FIXED = "--fixed" in sys.argv[1:]


def batch(rank: int) -> torch.Tensor:
    """Rank `rank`'s input, the same wherever it is computed."""
    return torch.randn(8, 4, generator=torch.Generator().manual_seed(rank))


def train() -> None:
    # env:// (the default init_method): RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    loss = model(batch(rank)).pow(2).mean()
    loss.backward()
    print(f"rank {rank}/{world}: one DDP step done, loss {loss.item():.4f}", flush=True)
    torch.save(model.module.weight.grad, os.path.join(os.environ["RESULTS_DIR"], f"grad{rank}.pt"))
    dist.destroy_process_group()


def averaged_gradient(world_size: int) -> torch.Tensor:
    """The reference: the mean of each rank's own gradient, computed in one process."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    for rank in range(world_size):
        (model(batch(rank)).pow(2).mean() / world_size).backward()
    return model.weight.grad


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


if __name__ == "__main__":
    if "--worker" in sys.argv[1:]:
        train()
        sys.exit(0)
    folder = os.environ["RESULTS_DIR"] = tempfile.mkdtemp()  # where each rank saves its gradient
    command = [sys.executable, __file__, "--worker"]  # the bug: plain `python train.py`
    if FIXED:
        # --- fix: start
        # Start the script through torchrun, which sets RANK, LOCAL_RANK, WORLD_SIZE,
        # MASTER_ADDR and MASTER_PORT for every process. On the command line:
        #   torchrun --nproc-per-node=2 --master-addr=127.0.0.1 --master-port=<free port> train.py
        command = [
            sys.executable, "-m", "torch.distributed.run",
            "--nnodes=1", "--nproc-per-node=2",
            "--master-addr=127.0.0.1", f"--master-port={free_port()}",
            __file__, "--worker",
        ]
        # --- fix: end
    subprocess.run(command, check=True, timeout=100)

    # --- check: start
    expected = averaged_gradient(world_size=2)
    for rank in range(2):
        gradient = torch.load(os.path.join(folder, f"grad{rank}.pt"))
        torch.testing.assert_close(gradient, expected)
    print("check: both ranks joined one group and DDP averaged their gradients")
    # --- check: end
