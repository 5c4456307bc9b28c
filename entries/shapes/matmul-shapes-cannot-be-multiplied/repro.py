"""Reproducer for matmul-shapes-cannot-be-multiplied.

`python repro.py`: a small CNN whose classifier head was sized for 32x32 images
(`nn.Linear(16 * 8 * 8, 10)`, after two 2x poolings) is then fed 64x64 images. The
flattened features now have 16 * 16 * 16 = 4096 columns instead of 1024, and the head's
matmul refuses them: `mat1 and mat2 shapes cannot be multiplied (4x4096 and 1024x10)`.
`python repro.py --fixed`: an `nn.AdaptiveAvgPool2d((8, 8))` before the flatten pools any
resolution to the same 8x8 grid, so the same head serves 32x32 and 64x64 images.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

# --- fix: start
# Pool to a fixed grid before flattening: the head always sees 16 * 8 * 8 features.
to_head_grid = nn.AdaptiveAvgPool2d((8, 8))
# --- fix: end

model = nn.Sequential(
    nn.Conv2d(3, 16, kernel_size=3, padding=1),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Conv2d(16, 16, kernel_size=3, padding=1),
    nn.ReLU(),
    nn.MaxPool2d(2),
    to_head_grid if FIXED else nn.Identity(),
    nn.Flatten(),
    nn.Linear(16 * 8 * 8, 10),  # in_features computed for 32x32 inputs
)

for size in (32, 64):
    images = torch.randn(4, 3, size, size)
    logits = model(images)
    print(f"{size}x{size} images -> logits {tuple(logits.shape)}")
