"""Reproducer for conv-channel-mismatch.

`python repro.py`: a small CNN for RGB images (its first layer is `Conv2d(3, 16, 3)`) is fed
images the way image libraries return them: numpy arrays of shape `(H, W, C)`, stacked
into a batch of shape `(N, H, W, 3)`. `Conv2d` reads dimension 1 as the channels, finds 32
(the image height) instead of 3, and raises
`Given groups=1, weight of size [16, 3, 3, 3], expected input[4, 32, 32, 3] to have 3
channels, but got 32 channels instead`.
`python repro.py --fixed`: a `to_model_input` step moves the channel axis to dimension 1
(`permute(0, 3, 1, 2)`) and turns one-channel (grayscale) images into three channels, so
the RGB batch and a grayscale batch both reach the model as `(N, 3, H, W)`.
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)
rng = np.random.default_rng(0)

model = nn.Sequential(
    nn.Conv2d(3, 16, kernel_size=3, padding=1),  # built for RGB: weight [16, 3, 3, 3]
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(16, 10),
)

# What PIL / OpenCV / imageio give you: height x width x channels, uint8.
rgb_images = [rng.integers(0, 256, (32, 32, 3), dtype=np.uint8) for _ in range(4)]
gray_images = [rng.integers(0, 256, (32, 32, 1), dtype=np.uint8) for _ in range(4)]


def to_model_input(images: list[np.ndarray]) -> torch.Tensor:
    return torch.from_numpy(np.stack(images)).float() / 255.0  # (N, H, W, C): channels last


if FIXED:
# --- fix: start
    def to_model_input(images: list[np.ndarray]) -> torch.Tensor:
        """Stack HWC uint8 images into the NCHW float batch `nn.Conv2d` expects."""
        batch = torch.from_numpy(np.stack(images)).float() / 255.0  # (N, H, W, C)
        batch = batch.permute(0, 3, 1, 2).contiguous()  # (N, C, H, W): channels at dim 1
        if batch.shape[1] == 1:  # grayscale into an RGB model: repeat the channel
            batch = batch.expand(-1, 3, -1, -1)
        expected = model[0].in_channels
        assert batch.shape[1] == expected, f"model wants {expected} channels, batch has {batch.shape[1]}"
        return batch
# --- fix: end


outputs = {}
for name, images in [("rgb", rgb_images), ("grayscale", gray_images)]:
    batch = to_model_input(images)
    print(f"{name} batch {tuple(batch.shape)} -> first conv weight {tuple(model[0].weight.shape)}")
    outputs[name] = model(batch)
    print(f"{name} logits {tuple(outputs[name].shape)}")

# --- check: start
# Reference: each image on its own, channels moved first by NumPy, gray copied to R, G and B.
for name, images in [("rgb", rgb_images), ("grayscale", gray_images)]:
    for image, logits in zip(images, outputs[name]):
        chw = np.repeat(image, 3 // image.shape[2], axis=2).transpose(2, 0, 1)  # (3, H, W)
        expected = model(torch.from_numpy(chw.astype(np.float32) / 255)[None])[0]
        torch.testing.assert_close(logits, expected)
print("check: batched logits equal each image's own, fed channels-first")
# --- check: end
