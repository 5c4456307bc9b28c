"""Reproducer for dim-out-of-range.

`python repro.py`: a fully convolutional classifier returns scores of shape `(N, 5, 1, 1)`.
The prediction code drops the two trailing 1-sized dimensions with `.squeeze()` and takes
`softmax(dim=1)` over the classes. It works on full batches of 4, but the 9 images end in a
batch of one: `.squeeze()` also drops the batch dimension, the scores become 1-D `(5,)`,
and `dim=1` does not exist: `IndexError: Dimension out of range (expected to be in range
of [-1, 0], but got 1)`.
`python repro.py --fixed`: the scores are flattened from dimension 1 on, `flatten(1)`,
which keeps the batch dimension for any batch size, `(N, 5)`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
    nn.Conv2d(8, 5, 1), nn.AdaptiveAvgPool2d(1),  # (N, 5, 1, 1): one score per class
).eval()
images = torch.randn(9, 3, 8, 8)
batch_size = 4  # batches of 4, 4 and 1


def class_scores(out: torch.Tensor) -> torch.Tensor:
    return out.squeeze()  # (N, 5, 1, 1) -> (N, 5), but (1, 5, 1, 1) -> (5,)


if FIXED:
# --- fix: start
    def class_scores(out: torch.Tensor) -> torch.Tensor:
        """(N, 5, 1, 1) -> (N, 5) for every N, 1 included."""
        return out.flatten(1)  # or out.squeeze(-1).squeeze(-1): name the dimensions to drop
# --- fix: end

probabilities = []
with torch.no_grad():
    for start in range(0, len(images), batch_size):
        scores = class_scores(model(images[start:start + batch_size]))
        probabilities.append(scores.softmax(dim=1))
        print(f"batch at {start}: probabilities {tuple(probabilities[-1].shape)}")
probabilities = torch.cat(probabilities)

# --- check: start
# Reference: each image on its own, its 5 scores read by index and normalized by hand.
with torch.no_grad():
    rows = []
    for image in images:
        s = model(image[None])[0, :, 0, 0]
        rows.append(torch.exp(s - s.max()) / torch.exp(s - s.max()).sum())
expected = torch.stack(rows)
assert probabilities.shape == (len(images), 5), probabilities.shape
torch.testing.assert_close(probabilities, expected)
print(f"check: all {len(images)} images, the last batch of one included, get their own class probabilities")
# --- check: end
