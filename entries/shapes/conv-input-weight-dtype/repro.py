"""Reproducer for conv-input-weight-dtype.

A float32 convolutional model scores images from a preprocessing cache that stores them
as float16 to halve its size. `python repro.py`: the cached batch goes into the model as
it is, and on CPU `F.conv2d` refuses it with `Input type (c10::Half) and bias type (float)
should be the same` (on CUDA the same mistake reads `Input type (torch.cuda.HalfTensor) and
weight type (torch.cuda.FloatTensor) should be the same`). `python repro.py --fixed`: the
batch is cast to the dtype of the model's parameters before the forward pass, so the
convolution runs in float32 and the scores match the float32 computation on the original
images within float16 rounding.
"""

import os
import sys
import tempfile

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

model = nn.Sequential(
    nn.Conv2d(3, 8, kernel_size=3, padding=1),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(8, 4),
).eval()  # float32 parameters

# Preprocessing wrote the normalized images as float16; the scoring job reads them back.
images = torch.randn(6, 3, 16, 16)
cache = os.path.join(tempfile.mkdtemp(), "images_fp16.pt")
torch.save(images.half(), cache)
batch = torch.load(cache)
print(f"batch dtype: {batch.dtype}, conv weight dtype: {model[0].weight.dtype}")

if FIXED:
# --- fix: start
    # Cast the input to the dtype of the model's parameters (float32 here).
    batch = batch.to(next(model.parameters()).dtype)
# --- fix: end
with torch.no_grad():
    scores = model(batch)
print(f"scores: {tuple(scores.shape)} {scores.dtype}")

# --- check: start
# Reference: the float32 model on the original float32 images, before they were cached.
with torch.no_grad():
    expected = model(images)
assert scores.dtype == torch.float32 and scores.shape == expected.shape
torch.testing.assert_close(scores, expected, rtol=1e-3, atol=1e-4)
print("check: scores match the float32 model on the uncached images within float16 rounding")
# --- check: end
