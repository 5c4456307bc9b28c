"""Reproducer for matmul-dtype-mismatch.

`python repro.py`: tabular features come from NumPy, whose default float dtype is
float64, and `torch.from_numpy` keeps that dtype. The model's parameters are float32
(PyTorch's default), so the first `nn.Linear` hands addmm a Double input and a Float
weight and it refuses: `mat1 and mat2 must have the same dtype, but got Double and Float`.
`python repro.py --fixed`: the batch is built in the dtype of the model's parameters, so
input and weight agree and a training step runs.
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)
rng = np.random.default_rng(0)

features = rng.normal(size=(4, 20))  # float64: NumPy's default
labels = torch.from_numpy(rng.integers(0, 5, size=4))
model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5))  # float32 parameters

# --- fix: start
def to_model_dtype(array: np.ndarray, model: nn.Module) -> torch.Tensor:
    """Build the input tensor in the dtype of the model's parameters (float32 here)."""
    return torch.as_tensor(array, dtype=next(model.parameters()).dtype)
# --- fix: end

batch = to_model_dtype(features, model) if FIXED else torch.from_numpy(features)
print(f"input dtype: {batch.dtype}, weight dtype: {model[0].weight.dtype}")
loss = nn.functional.cross_entropy(model(batch), labels)
loss.backward()
print(f"loss: {loss.item():.4f}")
