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


train_loss = eval_loss  # the training step reuses the validation helper
if FIXED:
    # --- fix: start
    def train_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The same loss without @torch.no_grad(), so autograd records the graph."""
        return F.mse_loss(model(x), y)
    # --- fix: end


torch.manual_seed(0)
print("torch", torch.__version__)
model = nn.Linear(4, 1)
lr = 0.1
optimizer = torch.optim.SGD(model.parameters(), lr=lr)
x, y = torch.randn(8, 4), torch.randn(8, 1)
w0, b0 = model.weight.detach().clone(), model.bias.detach().clone()

loss = train_loss(model, x, y)
print(f"loss.requires_grad={loss.requires_grad} loss.grad_fn={loss.grad_fn}")
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("weight.grad is None:", model.weight.grad is None)

# --- check: start
residual = x @ w0.T + b0 - y
expected_grad = 2 * residual.T @ x / len(x)  # d/dW of mean((xW^T + b - y)^2)
torch.testing.assert_close(model.weight.grad, expected_grad)
torch.testing.assert_close(model.weight.detach(), w0 - lr * expected_grad)  # the step used it
print("check: weight.grad equals the analytic MSE gradient and SGD applied it")
# --- check: end
