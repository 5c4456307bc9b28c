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
import torch.nn.functional as F
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

to_head_grid = nn.Identity()  # flatten whatever grid the convolutions produce
if FIXED:
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
    to_head_grid,
    nn.Flatten(),
    nn.Linear(16 * 8 * 8, 10),  # in_features computed for 32x32 inputs
)

results = []
for size in (32, 64):
    images = torch.randn(4, 3, size, size)
    logits = model(images)
    print(f"{size}x{size} images -> logits {tuple(logits.shape)}")
    results.append((images, logits))

# --- check: start
# Reference: the convolutions, then 2x2 average pooling by hand for 64x64 (none for 32x32),
# then the same head. 32x32 images must get exactly the logits the head was sized for.
convolutions, head = model[:6], model[-1]
for images, logits in results:
    grid = convolutions(images)  # (4, 16, size / 4, size / 4)
    factor = grid.shape[-1] // 8
    expected = head(F.avg_pool2d(grid, factor).flatten(1))
    torch.testing.assert_close(logits, expected)
print("check: 32x32 logits unchanged, 64x64 logits equal the hand-pooled 8x8 grid's")
# --- check: end
