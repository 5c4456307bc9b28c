"""Reproducer for layer-norm-normalized-shape-mismatch.

`python repro.py`: a ConvNeXt-style block normalises the channels of a conv feature map
with `nn.LayerNorm(channels)`, but the feature map is (batch, channels, height, width)
and LayerNorm normalises the last axes, so it raises "Given normalized_shape=[8],
expected input with shape [*, 8], but got input of size[2, 8, 5, 5]".
`python repro.py --fixed`: the block moves the channels last (channels-last layout)
around the LayerNorm and back, so each pixel's 8 channels are normalised.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
BATCH, CHANNELS, SIZE = 2, 8, 5
conv = nn.Conv2d(3, CHANNELS, kernel_size=3, padding=1)
norm = nn.LayerNorm(CHANNELS)
with torch.no_grad():
    norm.weight.uniform_(0.5, 1.5)
    norm.bias.uniform_(-0.5, 0.5)
images = torch.randn(BATCH, 3, SIZE, SIZE)


def channel_norm(features: torch.Tensor) -> torch.Tensor:
    """Normalise each pixel's channels, as the block means to."""
    return norm(features)  # features are (batch, channels, height, width)


if FIXED:
# --- fix: start
    def channel_norm(features: torch.Tensor) -> torch.Tensor:
        # LayerNorm normalises the last axis: put the channels there and back
        return norm(features.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
# --- fix: end

with torch.no_grad():
    features = conv(images)
    out = channel_norm(features)
print("normalised feature map:", tuple(out.shape))

# --- check: start
# reference: the per-pixel channel statistics computed by hand over axis 1
mean = features.mean(dim=1, keepdim=True)
var = features.var(dim=1, unbiased=False, keepdim=True)
expected = (features - mean) / torch.sqrt(var + norm.eps)
expected = expected * norm.weight.view(1, -1, 1, 1) + norm.bias.view(1, -1, 1, 1)
assert out.shape == features.shape, out.shape
torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
print("check: every pixel's 8 channels were normalised, as the hand-computed reference")
# --- check: end
