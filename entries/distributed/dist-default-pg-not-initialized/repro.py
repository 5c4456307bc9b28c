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


def main() -> None:
    if FIXED:
        # --- fix: start
        # Create the default process group before anything distributed runs, whether or
        # not torchrun started the script.
        if "RANK" in os.environ:  # torchrun set RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
            dist.init_process_group("gloo", timeout=timedelta(seconds=30))
        else:  # plain `python train.py`: a group of one process
            dist.init_process_group(
                "gloo",
                init_method=f"tcp://127.0.0.1:{free_port()}",
                rank=0,
                world_size=1,
                timeout=timedelta(seconds=30),
            )
        # --- fix: end
    samples = 32
    dataset = TensorDataset(torch.arange(samples), torch.randn(samples, 4), torch.randn(samples, 1))
    sampler = DistributedSampler(dataset, shuffle=True)  # asks for the world size and rank
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    trained_on = []
    for index, x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        trained_on += index.tolist()
        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss)  # average the logged loss across ranks
        mean_loss /= dist.get_world_size()
        print(f"rank {dist.get_rank()}/{dist.get_world_size()}: loss {mean_loss.item():.4f}")

    # --- check: start
    per_rank = [None] * dist.get_world_size()
    dist.all_gather_object(per_rank, trained_on)
    trained_on_by_all = sorted(i for indices in per_rank for i in indices)
    assert trained_on_by_all == list(range(samples)), trained_on_by_all
    print(f"check: every one of the {samples} samples was trained on, once")
    # --- check: end
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
