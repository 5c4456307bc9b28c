"""Reproducer for input-smaller-than-kernel.

`python repro.py`: a LeNet-style classifier built for 32x32 RGB images (two 5x5
convolutions, each followed by 2x2 max pooling, then a linear layer over the 16x5x5 feature
map) is given 12x12 thumbnails. The first convolution leaves 8x8, pooling 4x4, and the
second 5x5 convolution no longer fits: `RuntimeError: Calculated padded input size per
channel: (4 x 4). Kernel size: (5 x 5). Kernel size can't be greater than actual input size`.
`python repro.py --fixed`: the images are resized to the model's input size (bilinear,
32x32) before the forward pass, the way they are for the data the model was built for.
"""

import sys

import torch
import torch.nn.functional as F
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

model = nn.Sequential(
    nn.Conv2d(3, 6, 5), nn.ReLU(), nn.MaxPool2d(2),  # 32 -> 28 -> 14
    nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),  # 14 -> 10 -> 5
    nn.Flatten(), nn.Linear(16 * 5 * 5, 10),
).eval()
MODEL_INPUT_SIZE = (32, 32)
thumbnails = torch.rand(4, 3, 12, 12)  # a batch of 12x12 RGB images


def prepare(images: torch.Tensor) -> torch.Tensor:
    return images


if FIXED:
# --- fix: start
    def prepare(images: torch.Tensor) -> torch.Tensor:
        """Resize every image to the size the network was built for."""
        return F.interpolate(images, size=MODEL_INPUT_SIZE, mode="bilinear", align_corners=False)
# --- fix: end

with torch.no_grad():
    logits = model(prepare(thumbnails))
print(f"logits {tuple(logits.shape)}")

# --- check: start
# Reference: bilinear resizing written out as two interpolation matrices (rows, columns)
# in float64, then the same model on the 32x32 images.


def interpolation_matrix(n_in: int, n_out: int) -> torch.Tensor:
    m = torch.zeros(n_out, n_in, dtype=torch.float64)
    for o in range(n_out):
        src = max((o + 0.5) * n_in / n_out - 0.5, 0.0)
        i0 = min(int(src), n_in - 1)
        i1 = min(i0 + 1, n_in - 1)
        m[o, i0] += 1 - (src - i0)
        m[o, i1] += src - i0
    return m


rows = interpolation_matrix(thumbnails.shape[2], MODEL_INPUT_SIZE[0])
cols = interpolation_matrix(thumbnails.shape[3], MODEL_INPUT_SIZE[1])
resized = torch.einsum("oh,nchw,pw->ncop", rows, thumbnails.double(), cols).float()
with torch.no_grad():
    expected = model(resized)
assert logits.shape == (len(thumbnails), 10), logits.shape
torch.testing.assert_close(logits, expected)
print("check: logits of every image equal the model's output on its 32x32 bilinear resize")
# --- check: end
