"""Reproducer for autograd-anomaly-nan-in-backward.

`python repro.py`: pairwise Euclidean distances are written as
`sqrt(((a - b) ** 2).sum(-1))`. The matrix includes each embedding's distance to itself,
which is exactly 0: the forward pass is finite, but the derivative of sqrt at 0 is inf and
the chain rule multiplies it by the derivative of `(a - b) ** 2`, which is 0 there, and
inf * 0 is nan. With anomaly detection on, the autograd engine checks every backward
node's outputs and raises at the first that holds a NaN:
`Function 'PowBackward0' returned nan values in its 0th output.`
`python repro.py --fixed`: the squared distance is clamped to a small eps before sqrt, so
the sqrt's derivative stays finite and the clamp passes a zero gradient at the diagonal.
"""

import sys

import torch

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)
torch.autograd.set_detect_anomaly(True)

# --- fix: start
def safe_sqrt(x: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """sqrt whose gradient stays finite at 0: clamp first, so d/dx is 0 below eps."""
    return torch.sqrt(x.clamp_min(eps))
# --- fix: end

embeddings = torch.randn(4, 8, requires_grad=True)
diff = embeddings[:, None, :] - embeddings[None, :, :]
squared = (diff**2).sum(-1)  # diagonal is exactly 0
distances = safe_sqrt(squared) if FIXED else torch.sqrt(squared)
loss = distances.mean()
print(f"loss: {loss.item():.4f} (finite forward pass)")
loss.backward()
print("all gradients finite:", torch.isfinite(embeddings.grad).all().item())
