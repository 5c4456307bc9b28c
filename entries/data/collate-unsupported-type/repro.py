"""Reproducer for collate-unsupported-type.

`python repro.py`: a Dataset returns a custom `Sample` object (as a dataset returning a
PIL image without a ToTensor transform does); the DataLoader's `default_collate` does
not know how to batch it and raises TypeError.
`python repro.py --fixed`: `__getitem__` converts the object to a tensor before
returning it, so `default_collate` can stack the batch.
"""

import sys

import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]


class Sample:
    """Stands in for a PIL image or any other non-tensor object a dataset may return."""

    def __init__(self, values):
        self.values = values


# --- fix: start
def to_tensor(sample: Sample) -> torch.Tensor:
    """Convert the object to a tensor inside __getitem__, like transforms.ToTensor()."""
    return torch.tensor(sample.values, dtype=torch.float32)
# --- fix: end


class Pairs(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, index):
        sample = Sample([index, index + 1, index + 2])
        label = index % 2
        return (to_tensor(sample) if FIXED else sample), label


loader = DataLoader(Pairs(), batch_size=4)
for images, labels in loader:
    print("batch:", tuple(images.shape), labels.tolist())
