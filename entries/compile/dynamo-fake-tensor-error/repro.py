"""Reproducer for dynamo-fake-tensor-error.

`python repro.py`: a model calls a custom operator, `demo::row_scale`, whose kernel is
opaque to PyTorch (here it goes through NumPy, standing in for a C++/CUDA extension). It
works in eager mode. Under `torch.compile`, Dynamo runs every operation on fake tensors
(shapes and dtypes, no data) to learn the output shapes; the custom op has no fake
implementation, so that run raises, and Dynamo reports
`TorchRuntimeError: RuntimeError when making fake tensor call` (on torch 2.7 to 2.10:
`TorchRuntimeError: Dynamo failed to run FX node with fake tensors: ...`).
`python repro.py --fixed`: the op gets a fake implementation with `register_fake` that
describes its output (same shape and dtype as `x`); the compiled model matches eager.
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]


@torch.library.custom_op("demo::row_scale", mutates_args=())
def row_scale(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Multiply each row of `x` by one entry of `scale` in a kernel torch cannot see into."""
    out = x.detach().cpu().numpy() * scale.detach().cpu().numpy()[:, None]
    return torch.from_numpy(np.ascontiguousarray(out)).to(x.device)


if FIXED:
    # --- fix: start
    @row_scale.register_fake
    def _(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        # Describe the output without computing it: same shape, dtype and device as `x`.
        torch._check(scale.shape[0] == x.shape[0])
        return torch.empty_like(x)
    # --- fix: end


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)
        self.gate = nn.Linear(16, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        return row_scale(h, self.gate(x).squeeze(-1).sigmoid()).relu()


torch.manual_seed(0)
model = Model()
x = torch.randn(8, 16)
with torch.no_grad():
    eager = model(x)
    print("eager forward works:", tuple(eager.shape))
    compiled = torch.compile(model, backend="eager")
    out = compiled(x)
print("compiled model ran:", tuple(out.shape))

# --- check: start
torch.testing.assert_close(out, eager)
print("check: compiled model output equals eager output")
# --- check: end
