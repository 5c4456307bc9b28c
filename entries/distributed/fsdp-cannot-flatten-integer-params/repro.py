"""Reproducer for fsdp-cannot-flatten-integer-params.

`python repro.py`: two CPU ranks (gloo, 127.0.0.1) wrap a small QLoRA model with
`FullyShardedDataParallel` (FSDP1), one FSDP unit per block (`ModuleWrapPolicy`, as
Accelerate's `TRANSFORMER_BASED_WRAP` does) and `use_orig_params=True` (frozen and
trainable parameters in one unit). Each block is a bitsandbytes `Linear4bit` (NF4,
frozen) with float32 LoRA adapters beside it. bitsandbytes packs the 4-bit weights into
`uint8` by default, and the block's first parameter is that packed weight, so FSDP refuses
to build the block's `FlatParameter`:
`ValueError: Cannot flatten integer dtype tensors`.
`python repro.py --fixed`: the same 4-bit weights are stored in float32
(`quant_storage=torch.float32`, what `BitsAndBytesConfig(bnb_4bit_quant_storage=...)`
sets), the dtype of the rest of the model, so every `FlatParameter` has one float dtype;
FSDP shards and gathers the packed bytes without changing them.
The check compares each rank's losses, trained adapters and packed 4-bit weights with a
plain one-process run of the same model with bitsandbytes' default `uint8` storage, on
both ranks' batches, the gradient averaged as FSDP averages it.
"""

import os
import random
import socket
import sys
import tempfile
from datetime import timedelta

import bitsandbytes as bnb
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import ModuleWrapPolicy

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
STEPS = 3
DIM = 64

# The bug: bitsandbytes' default storage for packed 4-bit weights, an integer dtype.
QUANT_STORAGE = torch.uint8

if FIXED:
    # --- fix: start
    # Store the packed 4-bit weights in the model's float dtype (here float32; bfloat16
    # for a bf16 model): `BitsAndBytesConfig(..., bnb_4bit_quant_storage=torch.float32)`.
    QUANT_STORAGE = torch.float32
    # --- fix: end


class LoraLinear4bit(torch.nn.Module):
    """A frozen NF4 linear layer with trainable LoRA adapters, as PEFT builds it."""

    def __init__(self, quant_storage: torch.dtype) -> None:
        super().__init__()
        self.base_layer = bnb.nn.Linear4bit(
            DIM,
            DIM,
            bias=False,
            compute_dtype=torch.float32,
            quant_type="nf4",
            quant_storage=quant_storage,
        )
        self.lora_A = torch.nn.Linear(DIM, 4, bias=False)
        self.lora_B = torch.nn.Linear(4, DIM, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base_layer(x) + self.lora_B(self.lora_A(x))


class Block(torch.nn.Module):
    def __init__(self, quant_storage: torch.dtype) -> None:
        super().__init__()
        self.proj = LoraLinear4bit(quant_storage)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + torch.tanh(self.proj(h))


class Net(torch.nn.Module):
    def __init__(self, quant_storage: torch.dtype) -> None:
        super().__init__()
        self.embed = torch.nn.Linear(8, DIM)
        self.blocks = torch.nn.ModuleList([Block(quant_storage) for _ in range(2)])
        self.head = torch.nn.Linear(DIM, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h)


def build_model(quant_storage: torch.dtype) -> Net:
    """The same weights every time; `.to("cpu")` quantizes them to NF4, and only the
    LoRA adapters train, as in QLoRA."""
    torch.manual_seed(0)
    model = Net(quant_storage)
    for name, param in model.named_parameters():
        if "lora_B" in name:  # nonzero, so that every adapter gets a gradient
            torch.nn.init.normal_(param, std=0.02)
    model = model.to("cpu")
    for name, param in model.named_parameters():
        param.requires_grad_("lora_" in name)
    return model


def batch(step: int, rank: int) -> torch.Tensor:
    """Rank `rank`'s input at `step`, the same wherever it is computed."""
    return torch.randn(4, 8, generator=torch.Generator().manual_seed(100 * step + rank))


def train(model: torch.nn.Module, rank: int) -> list:
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(trainable, lr=0.1)
    losses = []
    for step in range(STEPS):
        loss = model(batch(step, rank)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def worker(rank: int, port: int, folder: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=WORLD_SIZE,
        timeout=timedelta(seconds=30),
    )
    model = FSDP(
        build_model(QUANT_STORAGE),
        device_id=torch.device("cpu"),
        auto_wrap_policy=ModuleWrapPolicy({Block}),
        use_orig_params=True,
    )
    losses = train(model, rank)
    print(f"rank {rank}: losses {[round(x, 4) for x in losses]}", flush=True)
    with FSDP.summon_full_params(model):
        weights = {name: p.detach().clone() for name, p in model.named_parameters()}
    torch.save({"losses": losses, "weights": weights}, os.path.join(folder, f"rank{rank}.pt"))
    dist.destroy_process_group()


def train_without_fsdp() -> tuple:
    """The reference: one process, bitsandbytes' default uint8 storage, no FSDP; each
    step's gradient averaged over both ranks' batches."""
    model = build_model(torch.uint8)
    initial = {name: p.detach().clone() for name, p in model.named_parameters()}
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    losses = {rank: [] for rank in range(WORLD_SIZE)}
    for step in range(STEPS):
        optimizer.zero_grad()
        for rank in range(WORLD_SIZE):
            loss = model(batch(step, rank)).pow(2).mean()
            (loss / WORLD_SIZE).backward()
            losses[rank].append(loss.item())
        optimizer.step()
    weights = {name: p.detach().clone() for name, p in model.named_parameters()}
    return initial, weights, losses


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
    # fork: the ranks inherit torch and bitsandbytes already imported (seconds each).
    folder = tempfile.mkdtemp()
    mp.start_processes(
        worker, args=(free_port(), folder), nprocs=WORLD_SIZE, join=True, start_method="fork"
    )
    print("training finished on both ranks")

    # --- check: start
    initial, expected, expected_losses = train_without_fsdp()
    for rank in range(WORLD_SIZE):
        result = torch.load(os.path.join(folder, f"rank{rank}.pt"))
        trained = result["weights"]
        assert trained.keys() == expected.keys(), sorted(trained)
        torch.testing.assert_close(result["losses"], expected_losses[rank])
        for name, tensor in expected.items():
            if "base_layer" in name:
                # The packed NF4 bytes, whatever dtype holds them, are the reference's.
                assert torch.equal(trained[name].view(torch.uint8).flatten(), tensor.flatten())
            else:
                torch.testing.assert_close(trained[name], tensor)
            if "lora_" in name:
                assert not torch.equal(tensor, initial[name]), f"{name} did not train"
    print("check: both ranks' losses, adapters and 4-bit weights equal training without FSDP")
    # --- check: end
