"""Reproducer for autograd-function-invalid-gradient.

`python repro.py`: a fused linear layer written as a custom `torch.autograd.Function`
computes `x @ W.T + b` in forward, the bias broadcast over the batch. Its hand-written
backward reduces the output gradient for the bias over the wrong dimension
(`sum(1)`, the features, instead of `sum(0)`, the batch), so it returns a gradient of
shape [batch] for a bias of shape [out_features]. The engine checks every gradient a
backward returns against the shape of the input it belongs to and refuses this one.
`python repro.py --fixed`: the bias gradient is summed over the batch; the check runs
`torch.autograd.gradcheck` (finite differences in float64) on the Function and compares
its gradients with those of `torch.nn.functional.linear`.
"""

import sys

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
print("torch", torch.__version__)


def bias_grad(grad_out: torch.Tensor) -> torch.Tensor:
    """Gradient of the broadcast bias: the output gradient summed where it was broadcast."""
    return grad_out.sum(1)


if FIXED:
    # --- fix: start
    def bias_grad(grad_out: torch.Tensor) -> torch.Tensor:
        """The bias was broadcast over the batch (dimension 0): sum over it."""
        return grad_out.sum(0)

    # --- fix: end


class FusedLinear(torch.autograd.Function):
    """y = x @ W.T + b with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.t() + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return grad_out @ weight, grad_out.t() @ x, bias_grad(grad_out)


x = torch.randn(8, 5, requires_grad=True)
weight = torch.randn(3, 5, requires_grad=True)
bias = torch.randn(3, requires_grad=True)
out = FusedLinear.apply(x, weight, bias)
(out**2).sum().backward()
print("bias grad shape", tuple(bias.grad.shape))

# --- check: start
xd, wd, bd = (t.detach().double().requires_grad_() for t in (x, weight, bias))
assert torch.autograd.gradcheck(FusedLinear.apply, (xd, wd, bd))
x_ref, w_ref, b_ref = (t.detach().clone().requires_grad_() for t in (x, weight, bias))
(F.linear(x_ref, w_ref, b_ref) ** 2).sum().backward()
for got, ref in ((x, x_ref), (weight, w_ref), (bias, b_ref)):
    torch.testing.assert_close(got.grad, ref.grad)
print("check: gradcheck passes, and the gradients equal those of F.linear")
# --- check: end
