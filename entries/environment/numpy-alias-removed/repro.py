"""Reproducer for numpy-alias-removed.

`python repro.py`: data-preparation code written for NumPy < 1.20 runs under a current
NumPy. Computing the normalisation statistics uses `np.float_` (removed in NumPy 2.0:
`` `np.float_` was removed in the NumPy 2.0 release``), and the dataset's `__getitem__`
uses `np.float` and `np.int` (removed in NumPy 1.24:
`AttributeError: module 'numpy' has no attribute 'float'.`). Both are printed with their
tracebacks.
`python repro.py --fixed`: the same code with each alias replaced by what it meant
(`np.float64`, `float`, `int`); the statistics are computed and one epoch runs. The
check compares the statistics with torch's on the same rows and counts the samples the
epoch trained on.
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


def feature_stats(rows):
    data = np.asarray(rows, dtype=np.float_)  # alias of np.float64 until NumPy 2.0
    return data.mean(axis=0), data.std(axis=0)


def to_example(row, label, mean, std):
    """`np.float` was the builtin `float`, `np.int` the builtin `int` (NumPy < 1.24)."""
    features = (np.asarray(row, dtype=np.float) - mean) / std
    return torch.from_numpy(features.astype(np.float32)), np.int(label)


if FIXED:
    # --- fix: start
    def feature_stats(rows):
        data = np.asarray(rows, dtype=np.float64)  # was np.float_
        return data.mean(axis=0), data.std(axis=0)

    def to_example(row, label, mean, std):
        features = (np.asarray(row, dtype=np.float64) - mean) / std  # was np.float
        return torch.from_numpy(features.astype(np.float32)), int(label)  # was np.int
    # --- fix: end


class RowsDataset(Dataset):
    def __init__(self, rows, labels, mean, std):
        self.rows, self.labels, self.mean, self.std = rows, labels, mean, std

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        return to_example(self.rows[index], self.labels[index], self.mean, self.std)


def train_one_epoch(mean, std):
    """Train one epoch; return the labels of every sample it trained on."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(RowsDataset(ROWS, LABELS, mean, std), batch_size=8, shuffle=True)
    seen = []
    for features, labels in loader:
        loss = torch.nn.functional.cross_entropy(model(features), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        seen += labels.tolist()
    print(f"numpy {np.__version__}: epoch done, last loss {loss.item():.4f}")
    return seen


mean, std, trained_labels = None, None, []
try:
    mean, std = feature_stats(ROWS)
except AttributeError:
    traceback.print_exc()
    mean, std = np.zeros(4), np.ones(4)  # carry on to show the dataset's failure as well
try:
    trained_labels = train_one_epoch(mean, std)
except AttributeError:
    traceback.print_exc()

# --- check: start
reference = torch.tensor(ROWS, dtype=torch.float64)
torch.testing.assert_close(torch.from_numpy(mean), reference.mean(dim=0))
torch.testing.assert_close(torch.from_numpy(std), reference.std(dim=0, correction=0))
assert sorted(trained_labels) == sorted(int(label) for label in LABELS)  # all 32 samples
print("check: statistics equal torch's on the same rows; the epoch trained on all 32 samples")
# --- check: end
