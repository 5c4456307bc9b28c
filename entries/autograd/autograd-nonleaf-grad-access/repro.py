"""Reproducer for autograd-nonleaf-grad-access.

`python repro.py`: linear regression written by hand, with the weights initialised the
way many tutorials do it: `w = torch.randn(5, 1, requires_grad=True) * 0.01`. The
multiplication makes `w` the *result* of an operation (a non-leaf tensor); the leaf that
autograd fills is the unnamed `torch.randn(...)` tensor. After `loss.backward()`, reading
`w.grad` warns `UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is
being accessed. ...` and returns `None`, so the update step fails
(`TypeError: unsupported operand type(s) for *: 'float' and 'NoneType'`).
`python repro.py --fixed`: the scaled tensor itself becomes the leaf
(`(torch.randn(5, 1) * 0.01).requires_grad_()`), so `backward()` fills `w.grad`. The check
compares the fitted weights with the least-squares solution computed by
`torch.linalg.lstsq` on the same data.
"""

import sys

import torch

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

X = torch.randn(200, 5)
true_w = torch.tensor([[1.5], [-2.0], [0.5], [3.0], [-1.0]])
y = X @ true_w + 0.7 + 0.1 * torch.randn(200, 1)

w = torch.randn(5, 1, requires_grad=True) * 0.01  # the bug: w is the product, not the leaf
b = torch.zeros(1, requires_grad=True)
if FIXED:
    # --- fix: start
    # Make the tensor you train the leaf: scale first, then ask for gradients.
    w = (torch.randn(5, 1) * 0.01).requires_grad_()
    # --- fix: end

lr = 0.1
for step in range(300):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
    if step % 100 == 0:
        print(f"step {step}: loss {loss.item():.5f}")
print(f"fitted w {w.detach().flatten().tolist()}, b {b.item():.4f}")

# --- check: start
# reference: the least-squares solution of the same problem
design = torch.cat([X, torch.ones(200, 1)], dim=1)
solution = torch.linalg.lstsq(design, y).solution
torch.testing.assert_close(w.detach(), solution[:5], atol=1e-4, rtol=1e-4)
torch.testing.assert_close(b.detach(), solution[5], atol=1e-4, rtol=1e-4)
print("check: gradient descent reached the least-squares weights and bias")
# --- check: end
