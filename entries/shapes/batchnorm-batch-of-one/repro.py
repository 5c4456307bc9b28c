"""Reproducer for batchnorm-batch-of-one.

`python repro.py`: a small regressor with an `nn.BatchNorm1d` layer trains on 33 samples
with `batch_size=8` and `shuffle=True`. 33 = 4 * 8 + 1, so the last batch of every epoch
holds one sample, and in training mode batch norm cannot compute a batch variance from
one value per channel: `ValueError: Expected more than 1 value per channel when training,
got input size torch.Size([1, 16])`.
`python repro.py --fixed`: the loader's batch sampler folds a trailing batch of one into
the batch before it (8, 8, 8, 9), so every sample is still trained on in every epoch and
no batch is a singleton.
"""

import sys

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

num_samples, batch_size, epochs = 33, 8, 3
features = torch.randn(num_samples, 6)
targets = features.sum(dim=1, keepdim=True)
dataset = TensorDataset(torch.arange(num_samples), features, targets)  # index kept to count samples

model = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
generator = torch.Generator().manual_seed(0)
loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, generator=generator)

if FIXED:
# --- fix: start
    class NoSingletonBatchSampler(BatchSampler):
        """BatchSampler whose last batch, when it would hold one sample, joins the batch before it."""

        def __iter__(self):
            batches = list(super().__iter__())
            if len(batches) > 1 and len(batches[-1]) == 1:
                batches[-2].extend(batches.pop())
            return iter(batches)

        def __len__(self):
            n = len(self.sampler)
            return super().__len__() - (1 if n > 1 and n % self.batch_size == 1 else 0)

    sampler = RandomSampler(dataset, generator=generator)
    loader = DataLoader(dataset, batch_sampler=NoSingletonBatchSampler(sampler, batch_size, drop_last=False))
# --- fix: end

model.train()
trained_per_epoch, batch_sizes, steps = [], [], 0
for epoch in range(epochs):
    seen = []
    for index, x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        seen.extend(index.tolist())
        batch_sizes.append(len(index))
        steps += 1
    trained_per_epoch.append(seen)
    print(f"epoch {epoch}: {len(seen)} samples in {len(loader)} batches, last loss {loss.item():.4f}")

# --- check: start
# Reference: every sample of the dataset, exactly once per epoch, in batches of two or more.
for seen in trained_per_epoch:
    assert sorted(seen) == list(range(num_samples)), sorted(seen)
assert len(trained_per_epoch) == epochs
assert min(batch_sizes) >= 2, batch_sizes
assert model[1].num_batches_tracked.item() == steps  # batch norm updated its statistics on every step
assert all(torch.isfinite(p).all() for p in model.parameters())
print(f"check: all {num_samples} samples trained in each of {epochs} epochs; batch sizes {sorted(set(batch_sizes))}")
# --- check: end
