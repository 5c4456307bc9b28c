"""Reproducer for fsdp-unexpected-training-state.

`python repro.py`: two CPU ranks (gloo, 127.0.0.1) train a small model wrapped in
`FullyShardedDataParallel` (FSDP1, one unit per block, default `FULL_SHARD`) with a
feature-matching loss: the hidden state after block 1 is taken with a forward hook and
regressed onto a target, and the model's own output is thrown away. FSDP moves a unit
into its backward state only when a gradient reaches a tensor that unit's forward
returned; the root's output never gets one, yet the root's parameters (the embedding) do,
so its post-backward hook finds it still idle:
`ValueError: expected to be in states [<TrainingState.FORWARD_BACKWARD: 2>] but current
state is TrainingState.IDLE`.
`python repro.py --fixed`: the model returns the hidden state from its forward
(`return_features=True`) and the loss starts from that output, so FSDP's pre-backward
hook runs on it before any gradient reaches the parameters.
The check compares each rank's losses and the trained parameters with a plain one-process
run of the same model without FSDP, which takes the features with the forward hook as the
broken run meant to, on both ranks' batches, the gradient averaged as FSDP averages it.
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
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import ModuleWrapPolicy

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
STEPS = 3
DIM = 16
FEATURE_BLOCK = 1  # the loss matches the hidden state after this block


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(DIM, DIM)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + torch.tanh(self.fc(h))


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Linear(8, DIM)
        self.blocks = torch.nn.ModuleList([Block() for _ in range(3)])
        self.head = torch.nn.Linear(DIM, 1)

    def forward(self, x: torch.Tensor, return_features: bool = False):
        h = self.embed(x)
        features = None
        for index, block in enumerate(self.blocks):
            h = block(h)
            if index == FEATURE_BLOCK:
                features = h
        out = self.head(h)
        return (out, features) if return_features else out


def features_from_hook(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Run the model and take the block's output with a forward hook; the model's
    output is discarded."""
    captured = []
    inner = model.module if isinstance(model, FSDP) else model
    handle = inner.blocks[FEATURE_BLOCK].register_forward_hook(
        lambda module, args, output: captured.append(output)
    )
    model(x)
    handle.remove()
    return captured[0]


# The bug: the loss is computed on a tensor taken out of the model by a forward hook.
get_features = features_from_hook

if FIXED:
    # --- fix: start
    def get_features(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
        # Take the features from what the FSDP-wrapped forward returns (`Net.forward`
        # returns them with `return_features=True`), so the loss starts from a tensor
        # FSDP registered its pre-backward hook on.
        _, features = model(x, return_features=True)
        return features

    # --- fix: end


def build_model() -> Net:
    torch.manual_seed(0)
    return Net()


def batch(step: int, rank: int) -> tuple:
    """Rank `rank`'s input and feature target at `step`, the same wherever computed."""
    generator = torch.Generator().manual_seed(100 * step + rank)
    return torch.randn(4, 8, generator=generator), torch.randn(4, DIM, generator=generator)


def feature_loss(features: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.mse_loss(features, target)


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
        build_model(),
        device_id=torch.device("cpu"),
        auto_wrap_policy=ModuleWrapPolicy({Block}),
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(STEPS):
        x, target = batch(step, rank)
        loss = feature_loss(get_features(model, x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    print(f"rank {rank}: losses {[round(x, 4) for x in losses]}", flush=True)
    with FSDP.summon_full_params(model):
        weights = {name: p.detach().clone() for name, p in model.named_parameters()}
    torch.save({"losses": losses, "weights": weights}, os.path.join(folder, f"rank{rank}.pt"))
    dist.destroy_process_group()


def train_without_fsdp() -> tuple:
    """The reference: one process, no FSDP, features taken with the forward hook; each
    step's gradient averaged over both ranks' batches."""
    model = build_model()
    initial = {name: p.detach().clone() for name, p in model.named_parameters()}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = {rank: [] for rank in range(WORLD_SIZE)}
    for step in range(STEPS):
        optimizer.zero_grad()
        for rank in range(WORLD_SIZE):
            x, target = batch(step, rank)
            loss = feature_loss(features_from_hook(model, x), target)
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
            torch.testing.assert_close(trained[name], tensor)
        for name in ("embed.weight", f"blocks.{FEATURE_BLOCK}.fc.weight"):
            assert not torch.equal(expected[name], initial[name]), f"{name} did not train"
    print("check: both ranks' losses and trained parameters equal training without FSDP")
    # --- check: end
