"""Reproducer for tensor-copy-construct-warning.

`python repro.py`: a model's inputs pass through a helper, `to_tensor(x) =
torch.tensor(x, dtype=torch.float32)`, written for the Python lists a loader returns. The
model's learnable offset `bias` goes through the same helper, and `torch.tensor` on a
tensor copies it *detached* from the autograd graph: PyTorch warns `UserWarning: To copy
construct from a tensor, it is recommended to use sourceTensor.detach().clone() or
sourceTensor.detach().clone().requires_grad_(True), rather than
torch.tensor(sourceTensor).`, `bias` never receives a gradient, and the optimizer never
changes it. The check then fails.
`python repro.py --fixed`: the helper uses `torch.as_tensor`, which converts lists and
returns a tensor that already has the dtype as it is, graph included; no warning. The
check compares the fitted bias and weight with the least-squares solution.
"""

import sys

import torch

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


def to_tensor(x) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float32)  # copies a tensor argument, detached


if FIXED:
# --- fix: start
    def to_tensor(x) -> torch.Tensor:
        """A float32 tensor of `x`: lists are converted, float32 tensors returned as they are."""
        return torch.as_tensor(x, dtype=torch.float32)
# --- fix: end


# The loader returns plain Python lists: y = 2 x + 3 plus a little noise.
xs = torch.linspace(-1, 1, 50)
ys = 2 * xs + 3 + 0.05 * torch.randn(50)
batches = [(xs[i : i + 10].tolist(), ys[i : i + 10].tolist()) for i in range(0, 50, 10)]

weight = torch.zeros(1, requires_grad=True)
bias = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.SGD([weight, bias], lr=0.1)
for _epoch in range(300):
    for x, y in batches:
        optimizer.zero_grad()
        prediction = to_tensor(x) * weight + to_tensor(bias)
        loss = ((prediction - to_tensor(y)) ** 2).mean()
        loss.backward()
        optimizer.step()
print(f"weight {weight.item():.4f}, bias {bias.item():.4f}")

# --- check: start
# Reference: the least-squares line through the same 50 points.
design = torch.stack([xs, torch.ones(50)], dim=1)
solution = torch.linalg.lstsq(design, ys[:, None]).solution.flatten()
torch.testing.assert_close(weight.detach(), solution[:1], atol=2e-2, rtol=0)
torch.testing.assert_close(bias.detach(), solution[1:], atol=2e-2, rtol=0)
print("check: the fitted weight and bias equal the least-squares line's (the bias was trained too)")
# --- check: end
