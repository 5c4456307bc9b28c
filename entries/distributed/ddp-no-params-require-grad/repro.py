"""Reproducer for ddp-no-params-require-grad.

`python repro.py`: two-rank data-parallel training (gloo, CPU, started with
`torch.multiprocessing.spawn`) of a small image model with a perceptual loss. The loss
compares features of a frozen, pretrained feature extractor (every parameter
`requires_grad=False`, as for VGG perceptual losses or distillation teachers). The
training script wraps every module it builds in `DistributedDataParallel`, the frozen
extractor too, and DDP's constructor refuses it on every rank: `RuntimeError:
DistributedDataParallel is not needed when a module doesn't have any parameter that
requires a gradient.`
`python repro.py --fixed`: only the model that trains is wrapped in DDP; the frozen
extractor is used as it is (each rank holds the same copy). The check compares both
ranks' trained weights with the same training run in one process on the whole batch
(DDP averages the two half-batch gradients into the full-batch gradient), and asserts
that the extractor did not change.
"""

import os
import random
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
STEPS = 5


def build_models() -> tuple[nn.Module, nn.Module]:
    torch.manual_seed(0)  # same initial weights on every rank and in the reference
    model = nn.Sequential(nn.Linear(12, 24), nn.Tanh(), nn.Linear(24, 12))
    extractor = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 8))
    extractor.requires_grad_(False).eval()  # pretrained, frozen
    return model, extractor


def data() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    return torch.randn(STEPS, 8, 12, generator=g), torch.randn(STEPS, 8, 12, generator=g)


def perceptual_loss(model, extractor, x, target):
    return nn.functional.mse_loss(extractor(model(x)), extractor(target))


def wrap_for_ddp(model: nn.Module, extractor: nn.Module):
    return DDP(model), DDP(extractor)  # the bug: the frozen extractor is wrapped too


if FIXED:
    # --- fix: start
    def wrap_for_ddp(model: nn.Module, extractor: nn.Module):
        # Wrap only what trains; a frozen module has no gradients to synchronise.
        return DDP(model), extractor
    # --- fix: end


def worker(rank: int, port: int, folder: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE)
    model, extractor = build_models()
    ddp_model, ddp_extractor = wrap_for_ddp(model, extractor)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.5)
    xs, targets = data()
    half = xs.shape[1] // WORLD_SIZE
    for step in range(STEPS):
        part = slice(rank * half, (rank + 1) * half)  # each rank trains on its half
        loss = perceptual_loss(ddp_model, ddp_extractor, xs[step, part], targets[step, part])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0:
            print(f"step {step}: loss {loss.item():.5f}", flush=True)
    torch.save({"model": model.state_dict(), "extractor": extractor.state_dict()},
               os.path.join(folder, f"rank{rank}.pt"))
    dist.destroy_process_group()


def free_port() -> int:
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
    mp.spawn(worker, args=(free_port(), folder), nprocs=WORLD_SIZE)

    # --- check: start
    # reference: one process, the whole batch, no DDP
    model, extractor = build_models()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    xs, targets = data()
    for step in range(STEPS):
        loss = perceptual_loss(model, extractor, xs[step], targets[step])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    _, untouched = build_models()
    for rank in range(WORLD_SIZE):
        saved = torch.load(os.path.join(folder, f"rank{rank}.pt"))
        for name, value in model.state_dict().items():
            torch.testing.assert_close(saved["model"][name], value, msg=f"rank {rank}: {name}")
        for name, value in untouched.state_dict().items():
            assert torch.equal(saved["extractor"][name], value), f"rank {rank}: extractor {name} changed"
    print("check: both ranks' weights equal one-process full-batch training; extractor unchanged")
    # --- check: end
