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


class GatedBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.gate = nn.Parameter(torch.ones(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        gated = h * self.gate  # MulBackward0 saves h (version 0) to compute d(gate)
        out = gated + F.relu(h, inplace=True)  # overwrites h: version 0 -> 1
        print(f"h._version after forward: {h._version}")
        return out


# --- fix: start
class FixedGatedBlock(GatedBlock):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        gated = h * self.gate  # saves h (version 0) for the gate's gradient
        out = gated + F.relu(h)  # out of place: h keeps the values mul saved
        print(f"h._version after forward: {h._version}")
        return out
# --- fix: end


torch.manual_seed(0)
print("torch", torch.__version__)
block = FixedGatedBlock() if FIXED else GatedBlock()
loss = block(torch.randn(4, 3)).pow(2).mean()
loss.backward()
print("gate.grad:", block.gate.grad)
