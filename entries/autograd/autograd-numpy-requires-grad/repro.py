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


def log_metrics(
    step: int, loss: torch.Tensor, probs: torch.Tensor, y: torch.Tensor
) -> tuple[float, float]:
    """Logging written against tensors that are still in the graph."""
    loss_value, acc = loss.numpy(), np.mean((probs.numpy() > 0.5) == y.numpy())
    print(f"step {step}: loss {loss_value:.4f} acc {acc:.3f}")
    return float(loss_value), float(acc)


if FIXED:
    # --- fix: start
    def log_metrics(
        step: int, loss: torch.Tensor, probs: torch.Tensor, y: torch.Tensor
    ) -> tuple[float, float]:
        """Leave the graph before NumPy: .item() for a scalar, .detach().cpu().numpy() for arrays."""
        loss_value = loss.item()
        acc = np.mean((probs.detach().cpu().numpy() > 0.5) == y.cpu().numpy())
        print(f"step {step}: loss {loss_value:.4f} acc {acc:.3f}")
        return float(loss_value), float(acc)
    # --- fix: end


torch.manual_seed(0)
print("torch", torch.__version__, "numpy", np.__version__)
model = nn.Linear(5, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
criterion = nn.BCELoss()

logged, seen = [], []
for step in range(3):
    x = torch.randn(64, 5)
    y = (x[:, 0] > 0).float()
    probs = torch.sigmoid(model(x)).squeeze(1)
    loss = criterion(probs, y)
    print(f"probs.requires_grad={probs.requires_grad} loss.requires_grad={loss.requires_grad}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    logged.append(log_metrics(step, loss, probs, y))
    seen.append((loss.detach(), probs.detach(), y))

# --- check: start
assert len(logged) == 3
for (logged_loss, logged_acc), (loss, probs, y) in zip(logged, seen):
    assert abs(logged_loss - loss.item()) < 1e-6
    assert abs(logged_acc - ((probs > 0.5).float() == y).float().mean().item()) < 1e-6
print("check: every step was logged, with the loss and accuracy torch computes")
# --- check: end
