"""Reproducer for layer-norm-mixed-dtype-cpu.

A small transformer block computes its LayerNorm in float32 for stability (the
`FP32LayerNorm` pattern of diffusion and video models: upcast the input, normalize, cast
back). To run it cheaply on a CPU, the whole model is cast with `model.to(torch.bfloat16)`,
which casts the norm's weight and bias too. `python repro.py`: the norm now feeds a float32
input and bfloat16 parameters to `F.layer_norm`, and the CPU kernel refuses it with
`mixed dtype (CPU): expect parameter to have scalar type of Float`. `python repro.py
--fixed`: after the cast the norm layers are put back to float32 (what `_keep_in_fp32_modules`
does in transformers), so every norm sees float32 input and float32 parameters; the
output matches a float64 run of the same weights within bfloat16 rounding.
"""

import sys

import torch
import torch.nn.functional as F
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


class FP32LayerNorm(nn.LayerNorm):
    """LayerNorm computed in float32 whatever the activations' dtype."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x.float(), self.normalized_shape, self.weight, self.bias, self.eps).type_as(x)


class Block(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = FP32LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(x))


model = nn.Sequential(nn.Linear(16, 32), Block(32), Block(32), nn.Linear(32, 4)).eval()
with torch.no_grad():  # trained norms are not identity: give them non-trivial parameters
    for m in model.modules():
        if isinstance(m, nn.LayerNorm):
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.2, 0.2)

# CPU inference in bfloat16 to halve memory.
model = model.to(torch.bfloat16)
if FIXED:
# --- fix: start
    # Keep the normalization layers in float32: the CPU kernels accept a bfloat16 or half
    # input with float32 parameters, never low-precision parameters.
    for module in model.modules():
        if isinstance(module, (nn.LayerNorm, nn.GroupNorm)):
            module.float()
# --- fix: end
print("norm weight dtype:", model[1].norm.weight.dtype)

x = torch.randn(8, 16).to(torch.bfloat16)
with torch.no_grad():
    out = model(x)
print(f"output: {tuple(out.shape)} {out.dtype}")

# --- check: start
# Reference: the same weights (as the run holds them) and the same input, written out
# by hand in float64.
def ref_norm(h: torch.Tensor, norm: nn.LayerNorm) -> torch.Tensor:
    mean = h.mean(-1, keepdim=True)
    var = h.var(-1, unbiased=False, keepdim=True)
    return (h - mean) / torch.sqrt(var + norm.eps) * norm.weight.double() + norm.bias.double()


def ref_linear(h: torch.Tensor, lin: nn.Linear) -> torch.Tensor:
    return h @ lin.weight.double().T + lin.bias.double()


with torch.no_grad():
    h = ref_linear(x.double(), model[0])
    for block in (model[1], model[2]):
        inner = ref_linear(ref_norm(h, block.norm), block.mlp[0])
        h = h + ref_linear(F.gelu(inner), block.mlp[2])
    expected = ref_linear(h, model[3])
assert out.dtype == torch.bfloat16 and out.shape == expected.shape == (8, 4)
torch.testing.assert_close(out.double(), expected, rtol=0.05, atol=0.05)
print("check: bfloat16 output matches the float64 run of the same weights within bfloat16 rounding")
# --- check: end
