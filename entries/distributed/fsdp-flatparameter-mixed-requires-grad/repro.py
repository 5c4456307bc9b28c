"""Reproducer for fsdp-flatparameter-mixed-requires-grad.

`python repro.py`: two CPU ranks (gloo, 127.0.0.1) fine-tune a small model with LoRA-style
adapters: the base weights are frozen (`requires_grad=False`) and each adapted layer adds
trainable low-rank matrices, as PEFT's `get_peft_model` does. The model is wrapped with
`FullyShardedDataParallel` (FSDP1) with the default `use_orig_params=False`, which flattens
all parameters of a wrapped module into one `FlatParameter`, with one `requires_grad`
flag. Frozen and trainable parameters in the same unit fail at construction:
`ValueError: Must flatten tensors with uniform requires_grad when use_orig_params=False`.
`python repro.py --fixed`: `use_orig_params=True`, which keeps the original parameters as
views into the flat one, each with its own `requires_grad` (torch 2.1 and later).
The check compares both ranks' trained weights with a plain one-process training run on
both ranks' batches (the gradient averaged as FSDP averages it), and the frozen base
weights with their initial values.
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


class LoRALinear(torch.nn.Module):
    """A frozen linear layer plus a trainable low-rank update, as PEFT's LoRA layer."""

    def __init__(self, features: int, rank: int = 2) -> None:
        super().__init__()
        self.base = torch.nn.Linear(features, features)
        self.base.requires_grad_(False)
        self.lora_A = torch.nn.Linear(features, rank, bias=False)
        self.lora_B = torch.nn.Linear(rank, features, bias=False)
        torch.nn.init.normal_(self.lora_B.weight, std=0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + self.lora_B(self.lora_A(x))


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer1 = LoRALinear(16)
        self.layer2 = LoRALinear(16)
        self.head = torch.nn.Linear(16, 1)
        self.head.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.layer2(torch.relu(self.layer1(x)))))


def build_model() -> Net:
    torch.manual_seed(0)
    return Net()


def batch(step: int, rank: int) -> torch.Tensor:
    """Rank `rank`'s input at `step`, the same wherever it is computed."""
    return torch.randn(4, 16, generator=torch.Generator().manual_seed(100 * step + rank))


def trainable(model: torch.nn.Module) -> list:
    return [p for p in model.parameters() if p.requires_grad]


def train_without_fsdp() -> dict:
    """The reference: one process, the gradient averaged over the ranks' batches."""
    model = build_model()
    optimizer = torch.optim.SGD(trainable(model), lr=0.1)
    for step in range(STEPS):
        optimizer.zero_grad()
        for rank in range(WORLD_SIZE):
            (model(batch(step, rank)).pow(2).mean() / WORLD_SIZE).backward()
        optimizer.step()
    return model.state_dict()


# The bug: FSDP1's default, one FlatParameter (one requires_grad) per wrapped module.
wrap = functools.partial(FSDP, device_id=torch.device("cpu"))

if FIXED:
    # --- fix: start
    # Original parameters stay visible, each with its own requires_grad.
    wrap = functools.partial(FSDP, device_id=torch.device("cpu"), use_orig_params=True)
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
    optimizer = torch.optim.SGD(trainable(model), lr=0.1)
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
    initial = build_model().state_dict()
    expected = train_without_fsdp()
    adapters = [name for name in expected if "lora_" in name]
    assert adapters and all(not torch.equal(expected[n], initial[n]) for n in adapters)
    for rank in range(WORLD_SIZE):
        trained = torch.load(os.path.join(folder, f"rank{rank}.pt"))
        assert trained.keys() == expected.keys(), sorted(trained)
        torch.testing.assert_close(trained, expected)
        for name in expected:
            if name not in adapters:  # frozen weights: bitwise unchanged
                assert torch.equal(trained[name], initial[name]), name
    print("check: adapters trained as plain training on both ranks' batches, frozen weights unchanged")
    # --- check: end
