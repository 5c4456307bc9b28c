"""Reproducer for normalize-channel-count-mismatch.

`python repro.py`: an MNIST-style dataset yields one-channel (grayscale) images, and
its transform pipeline was copied from an RGB example: `Normalize` with three means and
three standard deviations. The `Normalize` below does what torchvision's does
(`torchvision/transforms/_functional_tensor.py`, `normalize`): it views the means as
`[3, 1, 1]` and calls `tensor.sub_(mean).div_(std)` in place. A `[1, 28, 28]` image
minus a `[3, 1, 1]` mean broadcasts to `[3, 28, 28]`, which an in-place op cannot store
in its `[1, 28, 28]` self: `RuntimeError: output with shape [1, 28, 28] doesn't match
the broadcast shape [3, 28, 28]`, raised from the DataLoader's first batch.
`python repro.py --fixed`: one mean and one std per channel of the image, so the
normalized batch keeps one channel; the check recomputes it from the raw pixels.
"""

import sys

import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]

N, SIDE, BATCH = 6, 28, 4
generator = torch.Generator().manual_seed(0)
PIXELS = torch.randint(0, 256, (N, SIDE, SIDE), dtype=torch.uint8, generator=generator)
LABELS = torch.arange(N) % 10


def to_tensor(image: torch.Tensor) -> torch.Tensor:
    """What ToTensor does for a grayscale ('L') image: [H, W] uint8 -> [1, H, W] in [0, 1]."""
    return image.unsqueeze(0).to(torch.float32).div(255)


class Normalize:
    """torchvision's tensor Normalize: out of place by cloning, then sub_ and div_ in place."""

    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def __call__(self, tensor: torch.Tensor) -> torch.Tensor:
        tensor = tensor.clone()
        mean = torch.as_tensor(self.mean, dtype=tensor.dtype).view(-1, 1, 1)
        std = torch.as_tensor(self.std, dtype=tensor.dtype).view(-1, 1, 1)
        return tensor.sub_(mean).div_(std)


class GrayscaleDigits(Dataset):
    def __init__(self, transform):
        self.transform = transform

    def __len__(self) -> int:
        return N

    def __getitem__(self, index: int):
        return self.transform(PIXELS[index]), LABELS[index]


normalize = Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))  # copied from an RGB (CIFAR-10) example
if FIXED:
    # --- fix: start
    normalize = Normalize((0.5,), (0.5,))  # one mean and one std: MNIST images have one channel
    # --- fix: end


def transform(image: torch.Tensor) -> torch.Tensor:
    return normalize(to_tensor(image))


loader = DataLoader(GrayscaleDigits(transform), batch_size=BATCH, num_workers=0)
batches = [(images, labels) for images, labels in loader]
images = torch.cat([b[0] for b in batches])
labels = torch.cat([b[1] for b in batches])
print(f"{len(batches)} batches, images {tuple(images.shape)}")

# --- check: start
# Reference computed another way: pixel / 255 mapped from [0, 1] to [-1, 1], per pixel,
# keeping the single channel the images have.
reference = (PIXELS.to(torch.float64) / 255.0 * 2.0 - 1.0).unsqueeze(1).to(torch.float32)
assert images.shape == (N, 1, SIDE, SIDE), images.shape
torch.testing.assert_close(images, reference, rtol=0, atol=1e-6)
assert torch.equal(labels, LABELS)
print(f"check: all {N} images normalized to (x - 0.5) / 0.5 with their one channel, labels in order")
# --- check: end
