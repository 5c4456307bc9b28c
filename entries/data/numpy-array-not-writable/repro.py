"""Reproducer for numpy-array-not-writable.

`python repro.py`: a dataset keeps its records as one `bytes` blob (as read from a file
or a database) and decodes each sample with `np.frombuffer`, which returns a read-only
view of those bytes, then `torch.from_numpy`. PyTorch warns `UserWarning: The given NumPy
array is not writable, and PyTorch does not support non-writable tensors. This means
writing to this tensor will result in undefined behavior. ...`. The transform then
normalises the sample in place (`sub_`, `div_`), which writes through the tensor into the
supposedly immutable blob: the stored data is changed, and the second epoch normalises
already-normalised samples. The check then fails.
`python repro.py --fixed`: each sample is copied out of the blob (`.copy()`), a writable
array that the tensor owns; no warning, and the blob stays as it was. The check compares
every sample of both epochs with the normalisation of the original records.
"""

import sys

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
rng = np.random.default_rng(0)
N, D = 12, 5
MEAN, STD = 10.0, 4.0

records = (MEAN + STD * rng.standard_normal((N, D))).astype(np.float32)
original = records.copy()  # kept apart, for the check only
blob = records.tobytes()  # what the dataset receives: immutable bytes


def decode(blob: bytes, index: int) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32, count=D, offset=index * D * 4)  # read-only view


if FIXED:
# --- fix: start
    def decode(blob: bytes, index: int) -> np.ndarray:
        """The record as a writable array of its own, copied out of the read-only blob."""
        return np.frombuffer(blob, dtype=np.float32, count=D, offset=index * D * 4).copy()
# --- fix: end


class Records(Dataset):
    def __len__(self) -> int:
        return N

    def __getitem__(self, index: int) -> torch.Tensor:
        x = torch.from_numpy(decode(blob, index))
        return x.sub_(MEAN).div_(STD)  # in-place normalisation


loader = DataLoader(Records(), batch_size=4)
epochs = [torch.cat(list(loader)) for _ in range(2)]
print(f"epoch means {[round(e.mean().item(), 3) for e in epochs]}")

# --- check: start
# Reference: the original records, normalised once.
expected = torch.from_numpy((original - MEAN) / STD)
for epoch in epochs:
    torch.testing.assert_close(epoch, expected)
assert np.frombuffer(blob, dtype=np.float32).tolist() == original.flatten().tolist(), "the stored records changed"
print("check: both epochs equal the normalised original records, and the stored blob is unchanged")
# --- check: end
