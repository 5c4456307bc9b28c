"""Reproducer for autograd-inplace-modified-saved-tensor.

`python repro.py`: a gated block multiplies `h` by a learned gate, which saves `h` for the
gate's gradient, then applies `F.relu(h, inplace=True)` to the same `h`. The in-place ReLU
bumps `h`'s version counter from 0 to 1, and backward refuses the saved copy.
`python repro.py --fixed`: the ReLU is out of place, so `h` stays at version 0 and
backward succeeds.
"""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]


def gated_relu(h: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
    gated = h * gate  # MulBackward0 saves h (version 0) to compute d(gate)
    return gated + F.relu(h, inplace=True)  # overwrites h: version 0 -> 1


if FIXED:
    # --- fix: start
    def gated_relu(h: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        gated = h * gate  # saves h (version 0) for the gate's gradient
        return gated + F.relu(h)  # out of place: h keeps the values mul saved
    # --- fix: end


class GatedBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.gate = nn.Parameter(torch.ones(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        out = gated_relu(h, self.gate)
        print(f"h._version after forward: {h._version}")
        return out


torch.manual_seed(0)
print("torch", torch.__version__)
block = GatedBlock()
x = torch.randn(4, 3)
out = block(x)
loss = out.pow(2).mean()
loss.backward()
print("gate.grad:", block.gate.grad)

# --- check: start
with torch.no_grad():
    h = block.fc(x)
    expected_out = h * block.gate + h.clamp(min=0)  # relu written by hand
    expected_grad = (2 * expected_out * h).sum(0) / expected_out.numel()  # d mean(out^2) / d gate
torch.testing.assert_close(out.detach(), expected_out)
torch.testing.assert_close(block.gate.grad, expected_grad)
print("check: output and gate.grad equal the hand-derived values")
# --- check: end
