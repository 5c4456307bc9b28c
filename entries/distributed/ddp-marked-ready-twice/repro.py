"""Reproducer for ddp-marked-ready-twice.

`python repro.py`: two CPU ranks (gloo, 127.0.0.1) train a small model whose middle block
uses activation (gradient) checkpointing with the reentrant implementation
(`torch.utils.checkpoint.checkpoint(..., use_reentrant=True)`), wrapped in
`DistributedDataParallel(find_unused_parameters=True)`. After the forward pass DDP walks
the autograd graph from the outputs to find unused parameters; a reentrant checkpoint
hides its block's parameters from that graph, so DDP marks them "unused" and ready at
once. During backward the checkpoint recomputes the block and runs a nested backward
pass, the block's gradient hooks fire, and DDP marks the same parameters ready a second
time: `Expected to mark a variable ready only once`.
`python repro.py --fixed`: the block is checkpointed with `use_reentrant=False`, which
records the block's operations in the outer autograd graph. DDP sees the parameters as
used, each hook fires once, and training runs.
The check compares both ranks' final weights with a plain one-process training run on
the same batches (no DDP, no checkpointing, the gradient averaged over the ranks' batches as
DDP averages it): the fix must not change what is learned.
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
from torch.utils.checkpoint import checkpoint

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
STEPS = 3


def checkpointed(block: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    # The bug: reentrant checkpointing, the old default of torch.utils.checkpoint and of
    # many gradient_checkpointing_enable() implementations.
    return checkpoint(block, x, use_reentrant=True)


if FIXED:
    # --- fix: start
    def checkpointed(block: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
        # Non-reentrant checkpointing keeps the block's parameters in the outer autograd
        # graph, so DDP's unused-parameter search sees them and each hook fires once.
        return checkpoint(block, x, use_reentrant=False)
    # --- fix: end


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = torch.nn.Linear(8, 16)
        self.block = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.GELU())
        self.head = torch.nn.Linear(16, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.stem(x)
        h = checkpointed(self.block, h)  # recomputed during backward to save memory
        return self.head(h)


def batch(step: int, rank: int) -> torch.Tensor:
    """Rank `rank`'s input at `step`, the same wherever it is computed."""
    return torch.randn(4, 8, generator=torch.Generator().manual_seed(100 * step + rank))


def train_without_ddp() -> dict:
    """The reference: one process, no checkpointing, the gradient averaged over the ranks'
    batches as DDP averages it."""
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        optimizer.zero_grad()
        for rank in range(WORLD_SIZE):
            x = batch(step, rank)
            out = model.head(model.block(model.stem(x)))
            (out.pow(2).mean() / WORLD_SIZE).backward()
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
    torch.manual_seed(0)
    # find_unused_parameters=True is what HF Trainer, Lightning and many training scripts
    # turn on by default or after an earlier "Expected to have finished reduction" error.
    model = DDP(Net(), find_unused_parameters=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        loss = model(batch(step, rank)).pow(2).mean()
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
    # join=True: if a rank raises, the others are terminated and the error is re-raised here.
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
