"""Reproducer for tensor-from-ndarray-list-slow.

`python repro.py`: a replay buffer stores each observation as its own NumPy array and
builds a training batch with `torch.tensor(list_of_arrays)`. PyTorch warns
`UserWarning: Creating a tensor from a list of numpy.ndarrays is extremely slow. Please
consider converting the list to a single numpy.ndarray with numpy.array() before
converting to a tensor.`: it walks the list as nested Python sequences and converts every
element one by one, so assembling each batch costs far more than the copy itself.
`python repro.py --fixed`: the arrays are stacked into one array with `np.stack` and
turned into a tensor with `torch.from_numpy`, one contiguous copy; no warning. The check
compares every batch with one filled row by row from the stored arrays. Both modes print
how long batch assembly took, for information only.
"""

import sys
import time

import numpy as np
import torch

FIXED = "--fixed" in sys.argv[1:]
rng = np.random.default_rng(0)

# 512 stored observations, each a float32 array of shape (4, 84) (four stacked frames).
buffer = [rng.standard_normal((4, 84), dtype=np.float32) for _ in range(512)]


def to_batch(observations: list) -> torch.Tensor:
    return torch.tensor(observations)  # a Python list of arrays, converted element by element


if FIXED:
# --- fix: start
    def to_batch(observations: list) -> torch.Tensor:
        """Stack the arrays into one array first, then share it with a tensor."""
        return torch.from_numpy(np.stack(observations))
# --- fix: end


indices = [rng.integers(0, len(buffer), 128) for _ in range(20)]
start = time.perf_counter()
batches = [to_batch([buffer[i] for i in batch]) for batch in indices]
print(f"20 batches of {tuple(batches[0].shape)} assembled in {time.perf_counter() - start:.3f} s")

# --- check: start
# Reference: each batch filled row by row from the stored arrays.
for batch, chosen in zip(batches, indices):
    expected = torch.empty(len(chosen), 4, 84, dtype=torch.float32)
    for row, i in enumerate(chosen):
        expected[row] = torch.from_numpy(buffer[i])
    assert batch.dtype == torch.float32, batch.dtype
    assert torch.equal(batch, expected)
print("check: all 20 batches hold exactly the sampled observations, in order, as float32")
# --- check: end
