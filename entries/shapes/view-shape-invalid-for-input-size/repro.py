"""Reproducer for view-shape-invalid-for-input-size.

`python repro.py`: a small CNN classifies 100 images in batches of 16. Its `forward`
flattens the feature map with the training batch size written in:
`x.view(BATCH_SIZE, -1)`. Full batches work, but 100 = 6 * 16 + 4, so the last batch holds
4 images, whose 4 * 5 * 3 * 3 = 180 values cannot be split into 16 rows:
`RuntimeError: shape '[16, -1]' is invalid for input of size 180`.
`python repro.py --fixed`: the flatten takes the batch size from the tensor,
`x.flatten(1)`, so every batch, the last included, keeps one row per image.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

BATCH_SIZE = 16
images = torch.randn(100, 1, 7, 7)
loader = DataLoader(TensorDataset(images), batch_size=BATCH_SIZE, shuffle=False)


def flatten_features(x: torch.Tensor) -> torch.Tensor:
    return x.view(BATCH_SIZE, -1)  # the batch size of the training config, written in


if FIXED:
# --- fix: start
    def flatten_features(x: torch.Tensor) -> torch.Tensor:
        """(N, C, H, W) -> (N, C * H * W) for any batch size N."""
        return x.flatten(1)  # same as x.view(x.size(0), -1)
# --- fix: end


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 5, 3, stride=2), nn.ReLU())  # (N, 1, 7, 7) -> (N, 5, 3, 3)
        self.classifier = nn.Linear(5 * 3 * 3, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(flatten_features(self.features(x)))


model = SmallCNN().eval()
outputs = []
with torch.no_grad():
    for (batch,) in loader:
        outputs.append(model(batch))
        print(f"batch of {len(batch)}: logits {tuple(outputs[-1].shape)}")
logits = torch.cat(outputs)

# --- check: start
# Reference: each image through the same layers on its own, its 45 features as one row.
with torch.no_grad():
    expected = torch.stack([
        model.classifier(model.features(image[None]).reshape(1, 5 * 3 * 3))[0] for image in images
    ])
assert logits.shape == (len(images), 4), logits.shape
assert outputs[-1].shape == (len(images) % BATCH_SIZE, 4), outputs[-1].shape  # the last, smaller batch
torch.testing.assert_close(logits, expected)
print(f"check: all {len(images)} images classified, the last batch of {len(outputs[-1])} included, each equal to its own forward pass")
# --- check: end
