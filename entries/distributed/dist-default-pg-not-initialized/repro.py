"""Reproducer for dist-default-pg-not-initialized.

`python repro.py`: a training script written for `torchrun` (a `DistributedSampler`, and
an `all_reduce` to average the loss across ranks) started as a plain `python train.py`.
Nothing calls `init_process_group`, so the first call that needs the default process
group, `dist.get_world_size()` inside `DistributedSampler.__init__`, raises
`Default process group has not been initialized, please make sure to call
init_process_group.`
`python repro.py --fixed`: the script initializes the process group before anything
distributed runs: from the variables torchrun sets (`RANK`, `WORLD_SIZE`, `MASTER_ADDR`,
`MASTER_PORT`) when they are there, otherwise as a one-process group on 127.0.0.1. The
sampler and the `all_reduce` then work in both launch modes.
"""

import os
import random
import socket
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

FIXED = "--fixed" in sys.argv[1:]


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


# --- fix: start
def setup_distributed() -> None:
    """Create the default process group once, whether or not torchrun started us."""
    if dist.is_initialized():
        return
    timeout = timedelta(seconds=30)
    if "RANK" in os.environ:  # launched by torchrun: it set RANK, WORLD_SIZE, MASTER_*
        dist.init_process_group("gloo", timeout=timeout)
    else:  # plain `python train.py`: a group of one process
        dist.init_process_group(
            "gloo",
            init_method=f"tcp://127.0.0.1:{free_port()}",
            rank=0,
            world_size=1,
            timeout=timeout,
        )
# --- fix: end


def main() -> None:
    if FIXED:
        setup_distributed()
    dataset = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
    sampler = DistributedSampler(dataset, shuffle=True)  # asks for the world size and rank
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss)  # average the logged loss across ranks
        mean_loss /= dist.get_world_size()
        print(f"rank {dist.get_rank()}/{dist.get_world_size()}: loss {mean_loss.item():.4f}")
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
