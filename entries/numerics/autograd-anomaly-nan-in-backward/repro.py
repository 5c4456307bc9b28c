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


def pairwise_distances(e: torch.Tensor) -> torch.Tensor:
    squared = ((e[:, None, :] - e[None, :, :]) ** 2).sum(-1)  # diagonal is exactly 0
    return torch.sqrt(squared)


if FIXED:
    # --- fix: start
    def pairwise_distances(e: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
        squared = ((e[:, None, :] - e[None, :, :]) ** 2).sum(-1)
        return torch.sqrt(squared.clamp_min(eps))  # below eps the clamp passes a 0 gradient
    # --- fix: end


embeddings = torch.randn(4, 8, requires_grad=True)
distances = pairwise_distances(embeddings)
loss = distances.mean()
print(f"loss: {loss.item():.4f} (finite forward pass)")
loss.backward()
print("all gradients finite:", torch.isfinite(embeddings.grad).all().item())

# --- check: start
e = embeddings.detach()
torch.testing.assert_close(distances.detach(), torch.cdist(e, e), atol=1e-5, rtol=1e-5)
diff = e[:, None, :] - e[None, :, :]
d = torch.cdist(e, e).fill_diagonal_(float("inf"))  # the diagonal contributes nothing
expected_grad = 2 * (diff / d[..., None]).sum(1) / distances.numel()  # d mean(d_ij) / d e_i
torch.testing.assert_close(embeddings.grad, expected_grad)
print("check: distances equal torch.cdist, gradients equal the analytic ones")
# --- check: end
