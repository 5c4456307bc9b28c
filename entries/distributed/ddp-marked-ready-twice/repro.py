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
"""

import random
import socket
import sys
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
    if not FIXED:
        # The bug: reentrant checkpointing, the old default of torch.utils.checkpoint and
        # of many gradient_checkpointing_enable() implementations.
        return checkpoint(block, x, use_reentrant=True)
    # --- fix: start
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


def worker(rank: int, port: int) -> None:
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
        loss = model(torch.randn(4, 8)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0:
            print(f"step {step}: loss {loss.item():.4f}", flush=True)
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
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD_SIZE, join=True)
    print("training finished on both ranks")
