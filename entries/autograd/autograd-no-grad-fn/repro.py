"""Reproducer for autograd-no-grad-fn.

`python repro.py`: the training step reuses a loss helper written for evaluation and
decorated with `@torch.no_grad()`. Autograd records nothing inside it, so the returned
loss has `requires_grad=False` and no `grad_fn`, and `loss.backward()` refuses it.
`python repro.py --fixed`: the training step uses the same loss without the decorator,
so the graph is recorded and backward fills the parameters' gradients.
"""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]


@torch.no_grad()
def eval_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Validation loss: no graph needed, so none is recorded."""
    return F.mse_loss(model(x), y)


# --- fix: start
def train_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The same loss without @torch.no_grad(), so autograd records the graph."""
    return F.mse_loss(model(x), y)
# --- fix: end


torch.manual_seed(0)
print("torch", torch.__version__)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)

loss_fn = train_loss if FIXED else eval_loss
loss = loss_fn(model, x, y)
print(f"loss.requires_grad={loss.requires_grad} loss.grad_fn={loss.grad_fn}")
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("weight.grad is None:", model.weight.grad is None)
