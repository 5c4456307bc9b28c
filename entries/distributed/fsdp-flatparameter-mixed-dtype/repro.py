"""Reproducer for fsdp-flatparameter-mixed-dtype.

`python repro.py`: two CPU ranks (gloo, 127.0.0.1) wrap a small model with
`FullyShardedDataParallel` (FSDP1, the default `use_orig_params=False`). The model is
stored in bfloat16 except one submodule, a router, kept in float32 for numerical
stability, as Hugging Face's `_keep_in_fp32_modules` and PEFT's fp32 adapters do. FSDP
flattens all parameters of one wrapped module into a single `FlatParameter`, which has one
dtype, so wrapping the whole model in one unit fails at construction:
`ValueError: Must flatten tensors with uniform dtype but got torch.bfloat16 and torch.float32`.
`python repro.py --fixed`: an auto-wrap policy gives the float32 router its own FSDP unit
(`ModuleWrapPolicy({Router})`), so each `FlatParameter` holds tensors of one dtype, and the
router stays in float32.
The check compares both ranks' trained weights (gathered in full, dtypes included) with a
plain one-process training run of the same model on both ranks' batches, the gradient
averaged as FSDP averages it.
"""

import functools
import os
import random
import socket
import sys
import tempfile
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.fsdp import FullStateDictConfig, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
STEPS = 3


class Router(torch.nn.Module):
    """A layer kept in float32 while the rest of the model is bfloat16."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = torch.nn.Linear(16, 16)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.gate(h.float())).to(h.dtype) * h


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = torch.nn.Linear(8, 16)
        self.router = Router()
        self.head = torch.nn.Linear(16, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.stem(x.to(self.stem.weight.dtype)))
        return self.head(self.router(h)).float()


def build_model() -> Net:
    """Loaded in bfloat16, with the router kept in float32 (`_keep_in_fp32_modules`)."""
    torch.manual_seed(0)
    model = Net().to(torch.bfloat16)
    model.router.float()
    return model


def batch(step: int, rank: int) -> torch.Tensor:
    """Rank `rank`'s input at `step`, the same wherever it is computed."""
    return torch.randn(4, 8, generator=torch.Generator().manual_seed(100 * step + rank))


def train_without_fsdp() -> dict:
    """The reference: one process, the gradient averaged over the ranks' batches."""
    model = build_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        optimizer.zero_grad()
        for rank in range(WORLD_SIZE):
            (model(batch(step, rank)).pow(2).mean() / WORLD_SIZE).backward()
        optimizer.step()
    return model.state_dict()


# The bug: the whole model is one FSDP unit, one FlatParameter for all its parameters.
wrap = functools.partial(FSDP, device_id=torch.device("cpu"))

if FIXED:
    # --- fix: start
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy

    # The float32 module gets its own FSDP unit; every FlatParameter has one dtype.
    wrap = functools.partial(
        FSDP, device_id=torch.device("cpu"), auto_wrap_policy=ModuleWrapPolicy({Router})
    )
    # --- fix: end


def worker(rank: int, port: int, folder: str) -> None:
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=WORLD_SIZE,
        timeout=timedelta(seconds=30),
    )
    model = wrap(build_model())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        loss = model(batch(step, rank)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0:
            print(f"step {step}: loss {loss.item():.4f}", flush=True)
    config = FullStateDictConfig(offload_to_cpu=False, rank0_only=False)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, config):
        state = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    torch.save(state, os.path.join(folder, f"rank{rank}.pt"))
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
    expected = train_without_fsdp()
    assert expected["router.gate.weight"].dtype == torch.float32
    assert expected["stem.weight"].dtype == torch.bfloat16
    for rank in range(WORLD_SIZE):
        trained = torch.load(os.path.join(folder, f"rank{rank}.pt"))
        assert trained.keys() == expected.keys(), sorted(trained)
        for name, tensor in expected.items():
            assert trained[name].dtype == tensor.dtype, (name, trained[name].dtype)
        torch.testing.assert_close(trained, expected)
    print("check: both ranks' weights and dtypes equal plain training on both ranks' batches")
    # --- check: end
