"""Reproducer for dist-collective-mismatch.

`python repro.py`: two CPU ranks (gloo, 127.0.0.1) run with
`TORCH_DISTRIBUTED_DEBUG=DETAIL`, which wraps the process group in c10d's
`ProcessGroupWrapper`: before every collective, the ranks exchange a fingerprint of it
(sequence number, op type, tensor shapes, dtypes, devices) and compare them. Each rank
counts its predictions per class with `torch.bincount(preds)` and sums the counts over the
ranks with `all_reduce`. `bincount` returns `max(preds) + 1` bins, so a rank that never
predicted the last class sends a shorter tensor than the others, and the wrapper stops the
all-reduce: `Detected mismatch between collectives on ranks`. Without the debug mode the
same all-reduce runs on mismatched buffers, and gloo aborts a rank (`Received data size
doesn't match expected size`) or, with other sizes, leaves a wrong sum on one rank.
`python repro.py --fixed`: `torch.bincount(preds, minlength=NUM_CLASSES)` gives every rank a
tensor of the same shape, whatever it predicted.
The check compares both ranks' summed counts with the counts of all ranks' predictions
computed in one process.
"""

import os

# The debug mode must be set before torch.distributed is imported (as when exported in
# the shell that starts the job); the spawned ranks inherit it.
os.environ["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"

import random
import socket
import sys
import tempfile
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
NUM_CLASSES = 5


def predictions(rank: int) -> torch.Tensor:
    """Rank `rank`'s predicted classes on its shard of the validation set. Rank 1's shard
    happens to contain nothing of the last class."""
    generator = torch.Generator().manual_seed(rank)
    top = NUM_CLASSES if rank == 0 else NUM_CLASSES - 1
    return torch.randint(0, top, (64,), generator=generator)


def class_counts(preds: torch.Tensor) -> torch.Tensor:
    # The bug: as many bins as the largest class this rank happened to predict.
    return torch.bincount(preds)


if FIXED:
    # --- fix: start
    def class_counts(preds: torch.Tensor) -> torch.Tensor:
        # One bin per class on every rank, so every rank all-reduces the same shape.
        return torch.bincount(preds, minlength=NUM_CLASSES)
    # --- fix: end


def worker(rank: int, port: int, folder: str) -> None:
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=WORLD_SIZE,
        timeout=timedelta(seconds=30),
    )
    counts = class_counts(predictions(rank))
    dist.all_reduce(counts)  # per-class totals over the whole validation set
    if rank == 0:
        print(f"predictions per class: {counts.tolist()}", flush=True)
    torch.save(counts, os.path.join(folder, f"rank{rank}.pt"))
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
    print("evaluation finished on both ranks")

    # --- check: start
    every_prediction = torch.cat([predictions(rank) for rank in range(WORLD_SIZE)])
    expected = torch.bincount(every_prediction, minlength=NUM_CLASSES)
    assert int(expected.sum()) == every_prediction.numel()
    for rank in range(WORLD_SIZE):
        summed = torch.load(os.path.join(folder, f"rank{rank}.pt"))
        torch.testing.assert_close(summed, expected, rtol=0, atol=0)
    print("check: both ranks hold the per-class counts of every rank's predictions")
    # --- check: end
