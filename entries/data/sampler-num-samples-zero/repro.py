"""Reproducer for sampler-num-samples-zero.

`python repro.py`: a dataset lists `*.pt` files in a folder that holds none (the data
sits one level deeper, in `train/`), so it has length 0; `DataLoader(shuffle=True)`
builds a `RandomSampler` over it, which refuses `num_samples=0` with ValueError.
`python repro.py --fixed`: the dataset checks that it found files and fails early with
the path when it did not; pointed at the right folder, it loads and the loop runs.
"""

import glob
import os
import sys
import tempfile

import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]


class FolderDataset(Dataset):
    def __init__(self, root: str):
        self.files = sorted(glob.glob(os.path.join(root, "*.pt")))
# --- fix: start
        if FIXED and len(self.files) == 0:
            raise FileNotFoundError(f"no *.pt files found in {root!r}: check the data path")
# --- fix: end

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        return torch.load(self.files[index])


with tempfile.TemporaryDirectory() as tmp:
    os.makedirs(os.path.join(tmp, "train"))
    for i in range(6):
        torch.save(torch.full((3,), float(i)), os.path.join(tmp, "train", f"{i}.pt"))

    # The bug: the path points at the dataset root, not at its train/ folder.
    root = os.path.join(tmp, "train") if FIXED else tmp
    dataset = FolderDataset(root)
    print("dataset length:", len(dataset))
    loader = DataLoader(dataset, batch_size=2, shuffle=True)
    for batch in loader:
        print("batch:", tuple(batch.shape))
