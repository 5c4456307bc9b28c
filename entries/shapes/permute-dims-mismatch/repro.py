"""Reproducer for permute-dims-mismatch.

`python repro.py`: an image pipeline turns every decoded image (height, width, channels)
into the (channels, height, width) layout a convolution takes with `.permute(2, 0, 1)`.
One image of the folder is grayscale and decodes to a 2-D array (height, width), so the
three dims given to `permute` do not match its two: `RuntimeError: permute(sparse_coo):
number of dimensions in the tensor input does not match the length of the desired
ordering of dimensions i.e. input.dim() = 2 is not equal to len(dims) = 3` (torch 1.12
and earlier: `number of dims don't match in permute`).
`python repro.py --fixed`: a 2-D image gets its channel axis first (repeated to the three
channels the model takes, as converting it to RGB does), so every image has rank 3 when
it is permuted. The check compares every output pixel with the decoded image, read
element by element.
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
rng = np.random.default_rng(0)

# What an image decoder returns: (H, W, 3) for colour files, (H, W) for a grayscale one.
images = [
    rng.integers(0, 256, (6, 8, 3), dtype=np.uint8),
    rng.integers(0, 256, (6, 8), dtype=np.uint8),  # the grayscale file
    rng.integers(0, 256, (6, 8, 3), dtype=np.uint8),
]


def with_channels(image: np.ndarray) -> np.ndarray:
    return image  # assumes every file is colour


if FIXED:
# --- fix: start
    def with_channels(image: np.ndarray) -> np.ndarray:
        """Give a 2-D (grayscale) image the three channel axis the model expects."""
        if image.ndim == 2:
            image = np.repeat(image[:, :, None], 3, axis=2)  # as converting to RGB does
        return image
# --- fix: end


def to_chw(image: np.ndarray) -> torch.Tensor:
    """(H, W, C) uint8 array to a (C, H, W) float tensor in [0, 1]."""
    return torch.from_numpy(with_channels(image)).permute(2, 0, 1).float() / 255


batch = torch.stack([to_chw(image) for image in images])
conv = nn.Conv2d(3, 4, kernel_size=3, padding=1)
features = conv(batch)
print(f"batch {tuple(batch.shape)}, features {tuple(features.shape)}")

# --- check: start
# Reference: every pixel read from the decoded arrays one element at a time.
assert batch.shape == (3, 3, 6, 8), batch.shape
for n, image in enumerate(images):
    for c in range(3):
        for y in range(6):
            for x in range(8):
                value = image[y, x, c] if image.ndim == 3 else image[y, x]
                assert round(batch[n, c, y, x].item() * 255) == int(value), (n, c, y, x)
assert features.shape == (3, 4, 6, 8), features.shape
print("check: all 3 images became (3, 6, 8); every value equals the decoded pixel (the grayscale one in all 3 channels)")
# --- check: end
