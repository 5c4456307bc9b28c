"""Reproducer for zero-dim-tensor-index.

`python repro.py`: a training loop written for PyTorch 0.3 logs its loss with
`loss.data[0]`. Since 0.4 a reduced loss is a 0-dim tensor (a scalar with no dimension
to index), so indexing it fails: `IndexError: invalid index of a 0-dim tensor. Use
`tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a
number`.
`python repro.py --fixed`: the loss is read with `loss.item()`. The check recomputes
every logged loss from a copy of the weights saved before that step, with
`torch.func.functional_call`, and compares.
"""

import sys

import torch
import torch.nn.functional as F
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


def loss_value(loss: torch.Tensor) -> float:
    return loss.data[0]  # PyTorch 0.3 idiom: the loss was a 1-element tensor then


if FIXED:
# --- fix: start
    def loss_value(loss: torch.Tensor) -> float:
        """The value of a 0-dim (scalar) loss as a Python float."""
        return loss.item()
# --- fix: end


X, y = torch.randn(64, 3), torch.randn(64, 1)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
logged, snapshots = [], []
for step in range(5):
    snapshots.append({k: v.detach().clone() for k, v in model.state_dict().items()})
    optimizer.zero_grad()
    loss = F.mse_loss(model(X), y)
    loss.backward()
    optimizer.step()
    logged.append(loss_value(loss))
    print(f"step {step}: loss {logged[-1]:.5f}")

# --- check: start
# Reference: each step's loss recomputed from the weights it started from.
expected = [F.mse_loss(torch.func.functional_call(model, weights, (X,)), y).item() for weights in snapshots]
assert all(isinstance(value, float) for value in logged), [type(v) for v in logged]
torch.testing.assert_close(torch.tensor(logged), torch.tensor(expected))
assert logged[-1] < logged[0], logged  # the loop trained: the logged loss went down
print("check: every logged loss is a Python float equal to the loss recomputed from that step's weights")
# --- check: end
