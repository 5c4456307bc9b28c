"""Reproducer for dataloader-persistent-workers-no-workers.

`python repro.py`: a training script's loader settings hard-code
`persistent_workers=True`, and the run asks for `num_workers=0` (debugging, a CPU-only
machine, Windows), so `DataLoader.__init__` raises "persistent_workers option needs
num_workers > 0".
`python repro.py --fixed`: `persistent_workers` follows the worker count
(`num_workers > 0`), so the in-process loader is built and runs both epochs.
"""

import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv[1:]

N, EPOCHS = 10, 2
dataset = TensorDataset(torch.arange(N, dtype=torch.float32).mul(0.5), torch.arange(N))
num_workers = 0  # from the command line: load in the main process
loader_options = {"batch_size": 4, "num_workers": num_workers, "persistent_workers": True}
if FIXED:
# --- fix: start
    loader_options["persistent_workers"] = num_workers > 0  # only worker processes persist
# --- fix: end

loader = DataLoader(dataset, **loader_options)
epochs = []
for epoch in range(EPOCHS):
    values, indices = [], []
    for value, index in loader:
        values.extend(value.tolist())
        indices.extend(index.tolist())
    print(f"epoch {epoch}: {len(indices)} samples")
    epochs.append((values, indices))

# --- check: start
reference = [(float(value), int(index)) for value, index in dataset]  # the dataset read directly
for values, indices in epochs:
    assert list(zip(values, indices)) == reference  # every sample once, in order, unchanged
print(f"check: {EPOCHS} epochs each loaded all {N} samples as the dataset holds them")
# --- check: end
