"""Reproducer for ddp-different-model-across-ranks.

`python repro.py`: two-rank data-parallel training (gloo, CPU, started with
`torch.multiprocessing.spawn`). Each rank builds its model from a pretrained checkpoint
in its node-local cache; only rank 0 has the file (rank 0 downloaded it, the other node
did not), so rank 1's loader falls back to the base model, which has one layer where the
checkpoint has two. DDP's constructor compares
the parameters of every rank and fails: `RuntimeError: DDP expects same model across all
ranks, but Rank 0 has 4 params, while rank 1 has inconsistent 2 params.`
`python repro.py --fixed`: rank 0 reads the checkpoint and broadcasts it
(`dist.broadcast_object_list`), so every rank builds the same model from the same
weights. The check compares both ranks' trained weights with the same training run in
one process on the whole batch (DDP averages the two half-batch gradients into the
full-batch gradient).
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


def pretrained_state() -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 10), nn.Tanh(), nn.Linear(10, 3)).state_dict()


def model_from_state(state: dict[str, torch.Tensor] | None) -> nn.Sequential:
    """Build the layers the checkpoint describes (no checkpoint: the base one-layer model)."""
    if state is None:
        return nn.Sequential(nn.Linear(6, 3))
    layers: list[nn.Module] = []
    for i in sorted({int(k.split(".")[0]) for k in state}):
        out_f, in_f = state[f"{i}.weight"].shape
        if layers:
            layers.append(nn.Tanh())
        layers.append(nn.Linear(in_f, out_f))
    model = nn.Sequential(*layers)
    model.load_state_dict(state)  # Linear layers at 0, 2, ... as in the checkpoint
    return model


def read_checkpoint(path: str) -> dict[str, torch.Tensor] | None:
    # the bug: a rank whose node lacks the file goes on with the base model
    return torch.load(path) if os.path.exists(path) else None


def load_model(rank: int, cache: str) -> nn.Sequential:
    return model_from_state(read_checkpoint(os.path.join(cache, f"node{rank}", "model.pt")))


if FIXED:
    # --- fix: start
    def load_model(rank: int, cache: str) -> nn.Sequential:
        # Rank 0 reads the checkpoint and sends it to every rank: all build the same model.
        box = [read_checkpoint(os.path.join(cache, "node0", "model.pt")) if rank == 0 else None]
        dist.broadcast_object_list(box, src=0)
        return model_from_state(box[0])
    # --- fix: end


def data() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    return torch.randn(STEPS, 8, 6, generator=g), torch.randn(STEPS, 8, 3, generator=g)


def worker(rank: int, port: int, folder: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE)
    model = load_model(rank, folder)
    ddp_model = DDP(model)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.3)
    xs, ys = data()
    half = xs.shape[1] // WORLD_SIZE
    for step in range(STEPS):
        part = slice(rank * half, (rank + 1) * half)  # each rank trains on its half
        loss = nn.functional.mse_loss(ddp_model(xs[step, part]), ys[step, part])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0:
            print(f"step {step}: loss {loss.item():.5f}", flush=True)
    torch.save(model.state_dict(), os.path.join(folder, f"rank{rank}.pt"))
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
    os.makedirs(os.path.join(folder, "node0"))  # only rank 0's node downloaded the weights
    torch.save(pretrained_state(), os.path.join(folder, "node0", "model.pt"))
    mp.spawn(worker, args=(free_port(), folder), nprocs=WORLD_SIZE)

    # --- check: start
    # reference: one process, the whole batch, no DDP, built straight from the weights
    reference = nn.Sequential(nn.Linear(6, 10), nn.Tanh(), nn.Linear(10, 3))
    reference.load_state_dict(pretrained_state())
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.3)
    xs, ys = data()
    for step in range(STEPS):
        loss = nn.functional.mse_loss(reference(xs[step]), ys[step])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    for rank in range(WORLD_SIZE):
        saved = torch.load(os.path.join(folder, f"rank{rank}.pt"))
        assert saved.keys() == reference.state_dict().keys(), f"rank {rank}: {sorted(saved)}"
        for name, value in reference.state_dict().items():
            torch.testing.assert_close(saved[name], value, msg=f"rank {rank}: {name}")
    print("check: both ranks' weights equal one-process full-batch training")
    # --- check: end
