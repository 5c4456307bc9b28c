"""Reproducer for autograd-numpy-requires-grad.

`python repro.py`: a training loop logs the loss and a NumPy metric (accuracy of the
predicted probabilities) each step by calling `.numpy()` on tensors that are still part
of the autograd graph. `Tensor.numpy()` refuses a tensor that requires grad while grad
mode is on, so logging crashes the run at the first step.
`python repro.py --fixed`: the logging helper converts with `.detach().cpu().numpy()`
(and `.item()` for the scalar loss), so NumPy gets plain arrays and training runs.
"""

import sys

import numpy as np
import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]


def log_metrics(step: int, loss: torch.Tensor, probs: torch.Tensor, y: torch.Tensor) -> None:
    """Logging written against tensors that are still in the graph."""
    acc = np.mean((probs.numpy() > 0.5) == y.numpy())
    print(f"step {step}: loss {loss.numpy():.4f} acc {acc:.3f}")


# --- fix: start
def log_metrics_detached(
    step: int, loss: torch.Tensor, probs: torch.Tensor, y: torch.Tensor
) -> None:
    """Leave the graph before NumPy: .item() for a scalar, .detach().cpu().numpy() for arrays."""
    acc = np.mean((probs.detach().cpu().numpy() > 0.5) == y.cpu().numpy())
    print(f"step {step}: loss {loss.item():.4f} acc {acc:.3f}")
# --- fix: end


torch.manual_seed(0)
print("torch", torch.__version__, "numpy", np.__version__)
model = nn.Linear(5, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
criterion = nn.BCELoss()
log = log_metrics_detached if FIXED else log_metrics

for step in range(3):
    x = torch.randn(64, 5)
    y = (x[:, 0] > 0).float()
    probs = torch.sigmoid(model(x)).squeeze(1)
    loss = criterion(probs, y)
    print(f"probs.requires_grad={probs.requires_grad} loss.requires_grad={loss.requires_grad}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    log(step, loss, probs, y)
