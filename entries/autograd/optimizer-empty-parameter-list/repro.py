"""Reproducer for optimizer-empty-parameter-list.

`python repro.py`: an MLP keeps its layers in a plain Python list. `nn.Module` registers
only attributes that are modules, parameters or buffers, so the list's `nn.Linear` layers
are invisible to `model.parameters()`, which yields nothing, and
`torch.optim.SGD(model.parameters(), ...)` raises
`ValueError: optimizer got an empty parameter list`.
`python repro.py --fixed`: the layers are held in an `nn.ModuleList`, which registers each
one, so the optimizer receives every weight and bias. The check runs one training step and
compares every layer's new weights with the SGD update computed by hand from
`torch.autograd.grad` over the layers themselves.
"""

import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]


class MLP(nn.Module):
    def __init__(self, sizes: list[int]) -> None:
        super().__init__()
        self.layers = [nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])]  # a plain list: not registered

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return self.layers[-1](x)


if FIXED:
    # --- fix: start
    class MLP(nn.Module):
        def __init__(self, sizes: list[int]) -> None:
            super().__init__()
            # nn.ModuleList registers each layer, so model.parameters() yields their weights
            self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for layer in self.layers[:-1]:
                x = torch.relu(layer(x))
            return self.layers[-1](x)
    # --- fix: end


torch.manual_seed(0)
model = MLP([8, 16, 16, 1])
x, y = torch.randn(32, 8), torch.randn(32, 1)
print("parameters registered:", sum(p.numel() for p in model.parameters()))

lr = 0.1
optimizer = torch.optim.SGD(model.parameters(), lr=lr)
weights = [p for layer in model.layers for p in (layer.weight, layer.bias)]
before = [w.detach().clone() for w in weights]
grads = torch.autograd.grad(nn.functional.mse_loss(model(x), y), weights)

optimizer.zero_grad()
loss = nn.functional.mse_loss(model(x), y)
loss.backward()
optimizer.step()
print(f"one SGD step, loss {loss.item():.4f}")

# --- check: start
# Every layer's weight and bias took the SGD step w - lr * grad, computed here by hand.
for weight, start, grad in zip(weights, before, grads):
    torch.testing.assert_close(weight.detach(), start - lr * grad)
print(f"check: all {len(weights)} weights and biases of {len(model.layers)} layers took the SGD step")
# --- check: end
