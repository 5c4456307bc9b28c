"""Reproducer for autograd-requires-grad-integer.

`python repro.py`: a Fourier-feature layer learns its frequencies, initialised to
1, 2, 3, 4 with `torch.arange(1, 5)`. Given integers, `arange` returns an int64
tensor, and wrapping it in `nn.Parameter` (which sets `requires_grad=True`) is
refused: only floating point and complex tensors can have gradients.
`python repro.py --fixed`: the initial values are created as float32, so the
frequencies are a trainable parameter; the check compares the layer's output and the
frequencies' gradient with the hand-derived formulas in float64, and sees an
optimizer step move them.
"""

import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
print("torch", torch.__version__)


class FourierFeatures(nn.Module):
    """y = sum_k w_k * sin(f_k * x), with learnable frequencies f and weights w."""

    def __init__(self, freqs_init: torch.Tensor) -> None:
        super().__init__()
        self.freqs = nn.Parameter(freqs_init.clone())
        self.weight = nn.Parameter(torch.randn(len(freqs_init)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (torch.sin(x[:, None] * self.freqs) * self.weight).sum(dim=1)


freqs_init = torch.arange(1, 5)  # 1, 2, 3, 4
if FIXED:
    # --- fix: start
    freqs_init = torch.arange(1, 5, dtype=torch.float32)  # a float tensor can be trained
    # --- fix: end
print("freqs_init dtype", freqs_init.dtype)

layer = FourierFeatures(freqs_init)
x = torch.linspace(-1.0, 1.0, 16)
y = layer(x)
loss = y.sum()
loss.backward()
freqs_before = layer.freqs.detach().clone()
torch.optim.SGD(layer.parameters(), lr=0.1).step()

# --- check: start
# Hand-derived reference in float64: y_i = sum_k w_k sin(f_k x_i),
# d(sum_i y_i)/d f_k = sum_i w_k x_i cos(f_k x_i).
f = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
w = layer.weight.detach().double()
xd = x.double()
expected_y = (torch.sin(xd[:, None] * f) * w).sum(dim=1)
expected_grad = (w * xd[:, None] * torch.cos(xd[:, None] * f)).sum(dim=0)
torch.testing.assert_close(freqs_before.double(), f)
torch.testing.assert_close(y.detach().double(), expected_y, rtol=1e-5, atol=1e-6)
torch.testing.assert_close(layer.freqs.grad.double(), expected_grad, rtol=1e-5, atol=1e-5)
torch.testing.assert_close(layer.freqs.detach().double(), f - 0.1 * expected_grad, rtol=1e-5, atol=1e-5)
print("check: output and frequency gradient equal the hand-derived formulas; SGD moved the frequencies")
# --- check: end
