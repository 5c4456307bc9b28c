"""Reproducer for loss-target-double-dtype.

`python repro.py`: regression targets and soft labels come from NumPy, whose default float
dtype is float64, and `torch.from_numpy` keeps it; the model's outputs are float32. Two
common losses refuse the mix with `Found dtype Double but expected Float`:
`nn.HuberLoss` runs its forward but fails inside `loss.backward()`, and `nn.BCELoss`
fails in its forward.
`python repro.py --fixed`: the targets are built in the dtype of the model's outputs, so
both losses and their backward passes run.
"""

import sys
import traceback

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)
rng = np.random.default_rng(0)

features = torch.randn(16, 5)
regression_np = rng.normal(size=(16, 1))  # float64: NumPy's default
soft_labels_np = rng.uniform(size=(16, 1))  # float64 probabilities in [0, 1)
model = nn.Linear(5, 1)  # float32 parameters

regression_target = torch.from_numpy(regression_np)  # keeps float64
soft_labels = torch.from_numpy(soft_labels_np)  # keeps float64
if FIXED:
# --- fix: start
    # Build the targets in the dtype of the model's outputs (float32 here).
    regression_target = torch.as_tensor(regression_np, dtype=torch.float32)
    soft_labels = torch.as_tensor(soft_labels_np, dtype=torch.float32)
# --- fix: end
print(f"target dtypes: {regression_target.dtype}, {soft_labels.dtype}; output dtype: {model(features).dtype}")

losses = {
    "HuberLoss": lambda m, x, y, p: nn.HuberLoss()(m(x), y),
    "BCELoss": lambda m, x, y, p: nn.BCELoss()(torch.sigmoid(m(x)), p),
}
results = {}
for name, loss_fn in losses.items():
    print(f"--- {name}")
    model.zero_grad()
    try:
        loss = loss_fn(model, features, regression_target, soft_labels)
        loss.backward()
        results[name] = (loss.detach(), model.weight.grad.clone(), model.bias.grad.clone())
        print(f"ok, loss {loss.item():.6f} ({loss.dtype})")
    except RuntimeError:
        traceback.print_exc()  # torch's own traceback and message

# --- check: start
# Reference: the same losses and gradients computed in float64 throughout.
reference = nn.Linear(5, 1).double()
reference.load_state_dict(model.state_dict())
assert list(results) == list(losses), f"only {list(results)} ran"
for name, loss_fn in losses.items():
    reference.zero_grad()
    expected = loss_fn(reference, features.double(), torch.from_numpy(regression_np), torch.from_numpy(soft_labels_np))
    expected.backward()
    loss, weight_grad, bias_grad = results[name]
    assert loss.dtype == torch.float32, loss.dtype
    torch.testing.assert_close(loss.double(), expected.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(weight_grad.double(), reference.weight.grad, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(bias_grad.double(), reference.bias.grad, rtol=1e-5, atol=1e-6)
print("check: both losses and their gradients match the float64 computation")
# --- check: end
