"""Reproducer for collate-unsupported-type.

`python repro.py`: a Dataset returns a custom `Sample` object (as a dataset returning a
PIL image without a ToTensor transform does); the DataLoader's `default_collate` does
not know how to batch it and raises TypeError.
`python repro.py --fixed`: the dataset's transform converts the object to a tensor in
`__getitem__`, before it is returned, so `default_collate` can stack the batch.
"""

import sys

import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]


class Sample:
    """Stands in for a PIL image or any other non-tensor object a dataset may return."""

    def __init__(self, values):
        self.values = values


transform = None  # the pipeline ends at the object: no ToTensor step
if FIXED:
# --- fix: start
    def to_tensor(sample: Sample) -> torch.Tensor:
        """Convert the object to a tensor inside __getitem__, like transforms.ToTensor()."""
        return torch.tensor(sample.values, dtype=torch.float32)

    transform = to_tensor
# --- fix: end


class Pairs(Dataset):
    def __init__(self, transform=None):
        self.transform = transform

    def __len__(self):
        return 8

    def __getitem__(self, index):
        sample = Sample([index, index + 1, index + 2])
        if self.transform is not None:
            sample = self.transform(sample)
        return sample, index % 2


batches = []
for images, labels in DataLoader(Pairs(transform), batch_size=4):
    print("batch:", tuple(images.shape), labels.tolist())
    batches.append((images, labels))

# --- check: start
images = torch.cat([images for images, _ in batches])
labels = torch.cat([labels for _, labels in batches])
expected = torch.tensor([[i, i + 1, i + 2] for i in range(8)], dtype=torch.float32)
assert torch.equal(images, expected), images
assert labels.tolist() == [i % 2 for i in range(8)], labels
print("check: all 8 samples were batched with their own values and labels")
# --- check: end
