"""Reproducer for dataloader-sampler-shuffle-exclusive.

`python repro.py`: a single-process training script built its DataLoader with
`shuffle=True`; made distributed, it passes a `DistributedSampler` too and keeps
`shuffle=True`, so `DataLoader.__init__` raises "sampler option is mutually exclusive with
shuffle". The two ranks run one after the other in this process (`num_replicas` and
`rank` given to the sampler, as a process group would report them), so no process group
is needed; the DataLoader check is the real one.
`python repro.py --fixed`: `shuffle` is left out (the sampler shuffles) and the loop calls
`sampler.set_epoch(epoch)`, so each epoch deals a new permutation across the ranks.
"""

import sys

import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

FIXED = "--fixed" in sys.argv[1:]

N, WORLD, EPOCHS, SEED = 12, 2, 3, 0
dataset = TensorDataset(torch.arange(N))


def build_loader(sampler: DistributedSampler) -> DataLoader:
    """The loader as the single-process script built it, plus the new sampler."""
    return DataLoader(dataset, batch_size=2, shuffle=True, sampler=sampler)


def start_epoch(sampler: DistributedSampler, epoch: int) -> None:
    """The epoch loop told the loader nothing."""


if FIXED:
# --- fix: start
    def build_loader(sampler: DistributedSampler) -> DataLoader:
        # no shuffle=: DistributedSampler(shuffle=True) does the shuffling
        return DataLoader(dataset, batch_size=2, sampler=sampler)

    def start_epoch(sampler: DistributedSampler, epoch: int) -> None:
        sampler.set_epoch(epoch)  # a new permutation each epoch, the same on every rank
# --- fix: end

seen: dict[tuple[int, int], list[int]] = {}
for rank in range(WORLD):  # what each rank's process runs
    sampler = DistributedSampler(dataset, num_replicas=WORLD, rank=rank, shuffle=True, seed=SEED)
    loader = build_loader(sampler)
    for epoch in range(EPOCHS):
        start_epoch(sampler, epoch)
        seen[epoch, rank] = [int(i) for (batch,) in loader for i in batch]
        print(f"epoch {epoch} rank {rank}: samples {seen[epoch, rank]}")

# --- check: start
orders = []
for epoch in range(EPOCHS):
    everyone = sorted(i for rank in range(WORLD) for i in seen[epoch, rank])
    assert everyone == list(range(N)), everyone  # every sample once per epoch, on one rank
    # reference: one permutation of the dataset per epoch, drawn from seed + epoch and
    # dealt round-robin to the ranks (the order DistributedSampler documents)
    generator = torch.Generator()
    generator.manual_seed(SEED + epoch)
    permutation = torch.randperm(N, generator=generator).tolist()
    for rank in range(WORLD):
        assert seen[epoch, rank] == permutation[rank::WORLD], (epoch, rank)
    orders.append(permutation)
assert len({tuple(order) for order in orders}) == EPOCHS  # each epoch in another order
print(f"check: {EPOCHS} epochs, each sample once per epoch across {WORLD} ranks, a new order each epoch")
# --- check: end
