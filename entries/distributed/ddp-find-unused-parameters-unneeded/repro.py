"""Reproducer for ddp-find-unused-parameters-unneeded.

`python repro.py`: two CPU ranks (gloo, 127.0.0.1) train a small classifier under
`DistributedDataParallel(find_unused_parameters=True)`, a flag copied from a recipe.
Every parameter of this model takes part in every forward pass, so the flag buys
nothing: after each forward pass DDP walks the whole autograd graph looking for unused
parameters, finds none, and warns "find_unused_parameters=True was specified in DDP
constructor, but did not find any unused parameters in the forward pass. ...".
`python repro.py --fixed`: the model is wrapped without the flag (the default,
`find_unused_parameters=False`): no graph traversal, no warning.
The check compares both ranks' final weights with a plain one-process training run on
the same batches (the gradient averaged over the ranks' batches, as DDP averages it).
"""

import os
import random
import socket
import sys
import tempfile
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
STEPS = 4


def build() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))


def wrap(model: torch.nn.Module) -> DDP:
    # every parameter is used in every forward pass, yet the flag is set
    return DDP(model, find_unused_parameters=True)


if FIXED:
# --- fix: start
    def wrap(model: torch.nn.Module) -> DDP:
        # all parameters get a gradient every step: keep the default, no graph search
        return DDP(model, find_unused_parameters=False)
# --- fix: end


def batch(step: int, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The input and target of rank `rank` at `step`, the same wherever computed."""
    g = torch.Generator().manual_seed(100 * step + rank)
    return torch.randn(4, 8, generator=g), torch.randint(0, 3, (4,), generator=g)


def train_without_ddp() -> dict:
    """The reference: one process, the gradient averaged over both ranks' batches."""
    model = build()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        optimizer.zero_grad()
        for rank in range(WORLD_SIZE):
            x, y = batch(step, rank)
            (torch.nn.functional.cross_entropy(model(x), y) / WORLD_SIZE).backward()
        optimizer.step()
    return model.state_dict()


def worker(rank: int, port: int, folder: str) -> None:
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=WORLD_SIZE,
        timeout=timedelta(seconds=30),
    )
    model = wrap(build())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        x, y = batch(step, rank)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0:
            print(f"step {step}: loss {loss.item():.4f}", flush=True)
    torch.save(model.module.state_dict(), os.path.join(folder, f"rank{rank}.pt"))
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


if __name__ == "__main__":
    folder = tempfile.mkdtemp()
    mp.spawn(worker, args=(free_port(), folder), nprocs=WORLD_SIZE, join=True)
    print("training finished on both ranks")

    # --- check: start
    expected = train_without_ddp()
    for rank in range(WORLD_SIZE):
        trained = torch.load(os.path.join(folder, f"rank{rank}.pt"))
        torch.testing.assert_close(trained, expected)
    print("check: both ranks' weights equal plain training on both ranks' batches")
    # --- check: end
