"""Reproducer for optimizer-non-leaf-tensor.

`python repro.py`: a regression fitted with `torch.optim.SGD`, its weights initialised
small the way many examples write it: `w = torch.randn(5, 1, requires_grad=True) * 0.01`.
The multiplication makes `w` the *result* of an operation (a non-leaf tensor), and an
optimizer only updates leaves, so building it fails: `ValueError: can't optimize a
non-leaf Tensor`.
`python repro.py --fixed`: the scaled tensor itself becomes the leaf, wrapped in
`nn.Parameter` after the multiplication. The check compares the fitted weights and bias
with the least-squares solution computed by `torch.linalg.lstsq` on the same data.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

X = torch.randn(200, 5)
true_w = torch.tensor([[1.5], [-2.0], [0.5], [3.0], [-1.0]])
y = X @ true_w + 0.7 + 0.1 * torch.randn(200, 1)

w = torch.randn(5, 1, requires_grad=True) * 0.01  # the bug: w is the product, not the leaf
b = torch.zeros(1, requires_grad=True)
if FIXED:
    # --- fix: start
    # Do the arithmetic first, then make the result the leaf the optimizer updates.
    w = nn.Parameter(torch.randn(5, 1) * 0.01)
    # --- fix: end

optimizer = torch.optim.SGD([w, b], lr=0.1)
for step in range(300):
    optimizer.zero_grad()
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    if step % 100 == 0:
        print(f"step {step}: loss {loss.item():.5f}")
print(f"fitted w {w.detach().flatten().tolist()}, b {b.item():.4f}")

# --- check: start
# Reference: the least-squares solution of the same problem.
design = torch.cat([X, torch.ones(200, 1)], dim=1)
solution = torch.linalg.lstsq(design, y).solution
torch.testing.assert_close(w.detach(), solution[:5], atol=1e-4, rtol=1e-4)
torch.testing.assert_close(b.detach(), solution[5], atol=1e-4, rtol=1e-4)
print("check: SGD reached the least-squares weights and bias")
# --- check: end
