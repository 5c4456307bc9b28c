"""Reproducer for autograd-derivative-not-implemented.

`python repro.py`: an RBF network, f(x) = sum_j a_j exp(-|x - c_j|^2), is trained with
a gradient penalty (the norm of df/dx pushed towards 1, as in WGAN-GP or Lipschitz
regularisation). The squared distances come from `torch.cdist(x, centers) ** 2`. The
penalty needs the gradient of a gradient, and the backward of `cdist`
(`_cdist_backward`) has no derivative of its own, so the second backward refuses.
`python repro.py --fixed`: the squared distances are written with elementwise ops,
whose backward can be differentiated again; the check compares the parameters'
gradients with central finite differences of the penalty computed from the
hand-derived df/dx, in float64.
"""

import sys

import torch

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)  # float64 so finite differences are exact enough
print("torch", torch.__version__)

x = torch.randn(6, 2)
centers = torch.randn(4, 2).requires_grad_()
weights = torch.randn(4).requires_grad_()


def squared_distances(points: torch.Tensor, cs: torch.Tensor) -> torch.Tensor:
    """|x_i - c_j|^2 for every point and centre."""
    return torch.cdist(points, cs) ** 2


if FIXED:
    # --- fix: start
    def squared_distances(points: torch.Tensor, cs: torch.Tensor) -> torch.Tensor:
        """|x_i - c_j|^2 from elementwise ops, which support double backward."""
        return (points[:, None, :] - cs[None, :, :]).pow(2).sum(-1)

    # --- fix: end


def rbf(points: torch.Tensor) -> torch.Tensor:
    """f(x) = sum_j a_j exp(-|x - c_j|^2)."""
    return (weights * torch.exp(-squared_distances(points, centers))).sum(-1)


inputs = x.clone().requires_grad_()
(dfdx,) = torch.autograd.grad(rbf(inputs).sum(), inputs, create_graph=True)
penalty = ((dfdx.norm(dim=1) - 1) ** 2).mean()
penalty.backward()  # needs the derivative of the first backward
print("gradient penalty", penalty.item())

# --- check: start
def penalty_by_hand(a: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """The same penalty from the hand-derived df/dx = sum_j a_j e_j (-2)(x - c_j)."""
    diff = x[:, None, :] - c[None, :, :]
    e = torch.exp(-diff.pow(2).sum(-1))
    grad_x = (a[None, :, None] * e[..., None] * (-2) * diff).sum(1)
    return ((grad_x.norm(dim=1) - 1) ** 2).mean()


def central_differences(fn, t: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """d fn / d t, one element at a time."""
    out = torch.zeros_like(t)
    for i in range(t.numel()):
        step = torch.zeros_like(t).view(-1)
        step[i] = eps
        step = step.view_as(t)
        out.view(-1)[i] = (fn(t + step) - fn(t - step)) / (2 * eps)
    return out


with torch.no_grad():
    a0, c0 = weights.detach(), centers.detach()
    torch.testing.assert_close(penalty.detach(), penalty_by_hand(a0, c0))
    fd_a = central_differences(lambda a: penalty_by_hand(a, c0), a0)
    fd_c = central_differences(lambda c: penalty_by_hand(a0, c), c0)
torch.testing.assert_close(weights.grad, fd_a, rtol=1e-5, atol=1e-8)
torch.testing.assert_close(centers.grad, fd_c, rtol=1e-5, atol=1e-8)
print("check: the penalty and its parameter gradients equal the hand-derived ones")
# --- check: end
