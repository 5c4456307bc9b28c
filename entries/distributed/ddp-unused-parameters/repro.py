"""Reproducer for ddp-unused-parameters.

`python repro.py`: two CPU ranks (gloo, 127.0.0.1) train a multi-task model under
`DistributedDataParallel`. Each batch belongs to one task, and `forward` runs only that
task's head, so the other head's parameters get no gradient in that iteration. DDP's
reducer waits for every parameter's gradient hook before it finishes the gradient
all-reduce; the hooks of the idle head never fire, the reduction of step 0 never
finishes, and the forward pass of step 1 raises `Expected to have finished reduction in
the prior iteration before starting a new one`, listing the parameter indices that got
no gradient.
`python repro.py --fixed`: the same model wrapped with `find_unused_parameters=True`.
DDP now walks the autograd graph from the outputs after each forward pass, marks the
idle head's parameters ready itself, and all four steps complete.
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

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
STEPS = 4


class MultiTaskNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = torch.nn.Linear(8, 16)  # parameters 0 and 1
        self.cls_head = torch.nn.Linear(16, 3)  # parameters 2 and 3
        self.reg_head = torch.nn.Linear(16, 1)  # parameters 4 and 5

    def forward(self, x: torch.Tensor, task: str) -> torch.Tensor:
        features = torch.relu(self.backbone(x))
        # Only one head runs per batch: the other head's parameters get no gradient.
        return self.cls_head(features) if task == "cls" else self.reg_head(features)


def wrap(model: torch.nn.Module) -> DDP:
    return DDP(model)  # the bug: DDP waits for a gradient of every parameter


if FIXED:
    # --- fix: start
    def wrap(model: torch.nn.Module) -> DDP:
        # Some parameters legitimately skip an iteration (task-specific heads): let DDP
        # find them after each forward pass and mark them ready instead of waiting.
        return DDP(model, find_unused_parameters=True)
    # --- fix: end


def batch(step: int, rank: int) -> tuple[str, torch.Tensor, torch.Tensor]:
    """The task, input and target of rank `rank` at `step`, the same wherever computed."""
    g = torch.Generator().manual_seed(100 * step + rank)
    task = "cls" if step % 2 == 0 else "reg"  # the batch's task decides the head
    x = torch.randn(4, 8, generator=g)
    y = torch.randint(0, 3, (4,), generator=g) if task == "cls" else torch.randn(4, generator=g)
    return task, x, y


def loss_fn(task: str, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if task == "cls":
        return torch.nn.functional.cross_entropy(out, y)
    return torch.nn.functional.mse_loss(out.squeeze(1), y)


def train_without_ddp() -> dict:
    """The reference: one process, the gradient averaged over both ranks' batches."""
    torch.manual_seed(0)
    model = MultiTaskNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        optimizer.zero_grad()
        for rank in range(WORLD_SIZE):
            task, x, y = batch(step, rank)
            (loss_fn(task, model(x, task), y) / WORLD_SIZE).backward()
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
    model = wrap(MultiTaskNet())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        task, x, y = batch(step, rank)
        loss = loss_fn(task, model(x, task), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0:
            print(f"step {step} ({task}): loss {loss.item():.4f}", flush=True)
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
