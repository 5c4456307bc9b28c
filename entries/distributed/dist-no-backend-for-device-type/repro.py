"""Reproducer for dist-no-backend-for-device-type.

`python repro.py`: two ranks evaluate a classifier on their halves of a validation set
and sum their counts of correct predictions with `dist.all_reduce`, as every
distributed evaluation loop does. The counts are CPU tensors (`torch.tensor(n)`), but
the process group has a backend for CUDA tensors only: `nccl` on a machine with GPUs,
and here, without GPUs, `"cuda:gloo"`, which registers gloo for the `cuda` device type
and nothing for `cpu`, just as `init_process_group("nccl")` does. The `all_reduce`
fails with `RuntimeError: No backend type associated with device type cpu`.
`python repro.py --fixed`: the process group is created with a backend for each device
type (`"cpu:gloo,cuda:nccl"`, or `"cpu:gloo,cuda:gloo"` without NCCL), so CPU tensors go
through gloo. The check compares the summed count with the count over the whole
validation set computed in one process.
"""

import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
HAS_NCCL = dist.is_nccl_available() and torch.cuda.device_count() >= WORLD_SIZE

# What the training script asks for: a backend for CUDA tensors only.
BACKEND = "nccl" if HAS_NCCL else "cuda:gloo"
if FIXED:
    # --- fix: start
    # A backend for each device type: CPU tensors go through gloo, CUDA tensors through NCCL.
    BACKEND = "cpu:gloo,cuda:nccl" if HAS_NCCL else "cpu:gloo,cuda:gloo"
    # --- fix: end


def validation_set():
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 4)
    x, y = torch.randn(400, 16), torch.randint(0, 4, (400,))
    return model, x, y


def worker(rank: int, rendezvous: str, results) -> None:
    dist.init_process_group(BACKEND, init_method=f"file://{rendezvous}", rank=rank, world_size=WORLD_SIZE)
    model, x, y = validation_set()
    shard = slice(rank, None, WORLD_SIZE)  # this rank's half of the validation set
    with torch.no_grad():
        correct = (model(x[shard]).argmax(1) == y[shard]).sum()  # a CPU tensor
    dist.all_reduce(correct)  # sum over ranks
    results[rank] = int(correct)
    print(f"rank {rank}: {int(correct)} correct over all ranks, backend {BACKEND!r}")
    dist.destroy_process_group()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="repro-dist-") as tmp:
        results = mp.Manager().dict()
        mp.spawn(worker, args=(os.path.join(tmp, "rendezvous"), results), nprocs=WORLD_SIZE)

    # --- check: start
    # Reference: the same count over the whole validation set in one process.
    model, x, y = validation_set()
    with torch.no_grad():
        expected = int((model(x).argmax(1) == y).sum())
    assert dict(results) == {rank: expected for rank in range(WORLD_SIZE)}, (dict(results), expected)
    print(f"check: every rank holds the full count, {expected} correct of {len(y)}")
    # --- check: end
