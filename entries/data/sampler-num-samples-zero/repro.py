"""Reproducer for sampler-num-samples-zero.

`python repro.py`: a dataset lists `*.pt` files in the folder it is given. The script
gives it the data root, which holds none (the files sit one level deeper, in `train/`),
so the dataset has length 0 and `DataLoader(shuffle=True)` builds a `RandomSampler` over
it, which refuses `num_samples=0` with ValueError.
`python repro.py --fixed`: the dataset is pointed at the `train/` folder that holds the
files; it finds all six, and the shuffled loop loads each one once.
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

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        return torch.load(self.files[index])


with tempfile.TemporaryDirectory() as data_root:
    os.makedirs(os.path.join(data_root, "train"))
    for i in range(6):
        torch.save(torch.full((3,), float(i)), os.path.join(data_root, "train", f"{i}.pt"))

    train_dir = data_root  # the bug: the dataset root, but the files sit in its train/ folder
    if FIXED:
# --- fix: start
        train_dir = os.path.join(data_root, "train")  # the folder that holds the *.pt files
# --- fix: end
    print("reading", os.path.relpath(train_dir, data_root), "under the data root")
    dataset = FolderDataset(train_dir)
    print("dataset length:", len(dataset))
    loader = DataLoader(dataset, batch_size=2, shuffle=True)
    samples = []
    for batch in loader:
        print("batch:", tuple(batch.shape))
        samples.extend(batch)

    # --- check: start
    saved = sorted(glob.glob(os.path.join(data_root, "**", "*.pt"), recursive=True))
    loaded = sorted(int(sample[0]) for sample in samples)
    assert loaded == list(range(len(saved))), loaded  # each saved sample once
    assert all(torch.equal(sample, torch.full((3,), sample[0].item())) for sample in samples)
    print(f"check: the epoch loaded each of the {len(saved)} saved samples once")
    # --- check: end
