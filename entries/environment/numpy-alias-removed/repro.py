"""Reproducer for numpy-alias-removed.

`python repro.py`: data-preparation code written for NumPy < 1.20 runs under a current
NumPy. Computing the normalisation statistics uses `np.float_` (removed in NumPy 2.0:
`` `np.float_` was removed in the NumPy 2.0 release``), and the dataset's `__getitem__`
uses `np.float` and `np.int` (removed in NumPy 1.24:
`AttributeError: module 'numpy' has no attribute 'float'.`). Both are printed with their
tracebacks and the script exits 1.
`python repro.py --fixed`: the same code with each alias replaced by what it meant
(`np.float64`, `float`, `int`); the statistics are computed and one epoch runs.
"""

import sys
import traceback

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]

rng = np.random.default_rng(0)
ROWS = rng.normal(size=(32, 4)).tolist()  # raw features as Python lists, e.g. parsed from CSV
LABELS = ["0", "1"] * 16  # labels read as strings


def feature_stats_legacy(rows):
    data = np.asarray(rows, dtype=np.float_)  # alias of np.float64 until NumPy 2.0
    return data.mean(axis=0), data.std(axis=0)


class LegacyDataset(Dataset):
    """`np.float` was the builtin `float`, `np.int` the builtin `int` (NumPy < 1.24)."""

    def __init__(self, rows, labels, mean, std):
        self.rows, self.labels, self.mean, self.std = rows, labels, mean, std

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        features = (np.asarray(self.rows[index], dtype=np.float) - self.mean) / self.std
        label = np.int(self.labels[index])
        return torch.from_numpy(features.astype(np.float32)), label


# --- fix: start
def feature_stats(rows):
    data = np.asarray(rows, dtype=np.float64)  # was np.float_
    return data.mean(axis=0), data.std(axis=0)


class PortedDataset(LegacyDataset):
    def __getitem__(self, index):
        features = (np.asarray(self.rows[index], dtype=np.float64) - self.mean) / self.std  # was np.float
        label = int(self.labels[index])  # was np.int
        return torch.from_numpy(features.astype(np.float32)), label
# --- fix: end


def train_one_epoch(dataset_class, mean, std):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(dataset_class(ROWS, LABELS, mean, std), batch_size=8, shuffle=True)
    for features, labels in loader:
        loss = torch.nn.functional.cross_entropy(model(features), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"numpy {np.__version__}: epoch done, last loss {loss.item():.4f}")


failed = False
stats, dataset_class = (feature_stats, PortedDataset) if FIXED else (feature_stats_legacy, LegacyDataset)
try:
    mean, std = stats(ROWS)
except AttributeError:
    failed = True
    traceback.print_exc()
    mean, std = np.zeros(4), np.ones(4)  # carry on to show the dataset's failure as well
try:
    train_one_epoch(dataset_class, mean, std)
except AttributeError:
    failed = True
    traceback.print_exc()
sys.exit(1 if failed else 0)
