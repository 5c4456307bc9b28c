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
"""

import random
import socket
import sys
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
    if not FIXED:
        return DDP(model)
    # --- fix: start
    # Some parameters legitimately skip an iteration (task-specific heads): let DDP find
    # them after each forward pass and mark them ready instead of waiting for them.
    return DDP(model, find_unused_parameters=True)
    # --- fix: end


def worker(rank: int, port: int) -> None:
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
        task = "cls" if step % 2 == 0 else "reg"  # the batch's task decides the head
        x = torch.randn(4, 8)
        out = model(x, task)
        if task == "cls":
            loss = torch.nn.functional.cross_entropy(out, torch.randint(0, 3, (4,)))
        else:
            loss = torch.nn.functional.mse_loss(out.squeeze(1), torch.randn(4))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0:
            print(f"step {step} ({task}): loss {loss.item():.4f}", flush=True)
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
