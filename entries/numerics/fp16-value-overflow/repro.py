"""Reproducer for fp16-value-overflow.

`python repro.py`: a small attention block masks padded keys with
`scores.masked_fill(pad_mask, -1e9)`. In float32 that is fine. Under
`torch.autocast(dtype=torch.float16)` the matmul returns float16 scores, and -1e9 is far
outside the float16 range (largest magnitude 65504): `masked_fill` converts the fill value
to the tensor's dtype with an overflow check and raises
`RuntimeError: value cannot be converted to type c10::Half without overflow`.
`python repro.py --fixed`: the fill value is `torch.finfo(scores.dtype).min`, the most
negative finite value of whatever dtype the scores have (-65504 in float16), so the same
code runs in float32 and in float16 and padded keys still get zero attention weight.
"""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


def mask_value(scores: torch.Tensor) -> float:
    return -1e9  # "minus infinity" that only float32 and wider can hold


if FIXED:
    # --- fix: start
    def mask_value(scores: torch.Tensor) -> float:
        """Most negative finite value of the scores' own dtype (-65504 for float16)."""
        return torch.finfo(scores.dtype).min
    # --- fix: end


class TinyAttention(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, h: torch.Tensor, pad_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        scores = scores.masked_fill(pad_mask[:, None, :], mask_value(scores))
        weights = scores.softmax(dim=-1)
        return weights @ v, weights


attn = TinyAttention(8)
h = torch.randn(2, 5, 8)
pad_mask = torch.tensor([[False, False, False, True, True], [False] * 5])  # True = padding

out32, _ = attn(h, pad_mask)
print("float32 forward ok:", out32.dtype)

with torch.autocast(device_type="cpu", dtype=torch.float16):
    out16, weights = attn(h, pad_mask)
print("float16 forward ok:", out16.dtype,
      "| attention on padded keys:", weights[0, :, 3:].abs().max().item(),
      "| finite:", torch.isfinite(out16).all().item())

# --- check: start
with torch.no_grad():  # reference: PyTorch's own attention with a boolean mask, in float32
    q, k, v = attn.qkv(h).chunk(3, dim=-1)
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=~pad_mask[:, None, :])
torch.testing.assert_close(out32, reference)
torch.testing.assert_close(out16.float(), reference, atol=1e-2, rtol=1e-2)
assert weights[0, :, 3:].eq(0).all()  # padded keys get no attention in float16 either
print("check: float32 and float16 outputs equal scaled_dot_product_attention with the mask")
# --- check: end
