"""Reproducer for dataloader-prefetch-factor-without-workers.

`python repro.py`: a data pipeline written for torch 1.x passes `prefetch_factor=2`
(torch 1.x's default, which 1.x accepted with no workers) to every `DataLoader`, and the
run asks for `num_workers=0` (debugging, a notebook, Windows). Since torch 2.0
`DataLoader.__init__` refuses a prefetch factor without worker processes: `ValueError:
prefetch_factor option could only be specified in multiprocessing.let num_workers > 0
to enable multiprocessing, otherwise set prefetch_factor to None.`
`python repro.py --fixed`: the prefetch factor is passed only with workers (`None`
otherwise). The check compares every batch with the dataset batched by hand.
"""

import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv[1:]

N, BATCH = 10, 4
dataset = TensorDataset(torch.arange(N, dtype=torch.float32).mul(0.5), torch.arange(N))
num_workers = 0  # from the command line: load in the main process
loader_options = {"batch_size": BATCH, "num_workers": num_workers, "prefetch_factor": 2}
if FIXED:
    # --- fix: start
    loader_options["prefetch_factor"] = 2 if num_workers > 0 else None  # only workers prefetch
    # --- fix: end

loader = DataLoader(dataset, **loader_options)
batches = [(value.clone(), index.clone()) for value, index in loader]
print(f"{len(batches)} batches, {sum(len(i) for _, i in batches)} samples")

# --- check: start
values, indices = dataset.tensors  # the dataset batched by hand, in order
reference = [(values[s : s + BATCH], indices[s : s + BATCH]) for s in range(0, N, BATCH)]
assert len(batches) == len(reference), (len(batches), len(reference))
for (value, index), (ref_value, ref_index) in zip(batches, reference):
    assert torch.equal(value, ref_value) and torch.equal(index, ref_index)
print(f"check: all {N} samples loaded in {len(reference)} batches equal to the dataset's own")
# --- check: end
