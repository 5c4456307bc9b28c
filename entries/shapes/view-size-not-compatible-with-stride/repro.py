"""Reproducer for view-size-not-compatible-with-stride.

`python repro.py`: the head-merge step of multi-head attention. The attention output has
shape `(batch, heads, seq, head_dim)`; it is transposed to `(batch, seq, heads, head_dim)`
and then merged with `.view(batch, seq, heads * head_dim)`. `transpose` only swaps strides,
so `heads` and `head_dim` are no longer adjacent in memory and `.view` cannot merge them:
`view size is not compatible with input tensor's size and stride ...`.
`python repro.py --fixed`: `.reshape(...)` merges them, copying into contiguous memory
because a view is impossible here.
"""

import sys

import torch

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

batch, heads, seq, head_dim = 2, 4, 5, 8
attn_out = torch.randn(batch, heads, seq, head_dim)

merged_in = attn_out.transpose(1, 2)  # (2, 5, 4, 8), a view: strides swapped, no copy
print("after transpose:", tuple(merged_in.shape), "stride", merged_in.stride(),
      "contiguous", merged_in.is_contiguous())

def merge_heads(x: torch.Tensor) -> torch.Tensor:
    return x.view(batch, seq, heads * head_dim)


if FIXED:
# --- fix: start
    def merge_heads(x: torch.Tensor) -> torch.Tensor:
        # reshape returns a view when the strides allow it and copies otherwise (here: copies).
        return x.reshape(batch, seq, heads * head_dim)
        # Equivalent, with the copy spelled out: x.contiguous().view(batch, seq, -1)
# --- fix: end


merged = merge_heads(merged_in)
print("merged:", tuple(merged.shape), "shares storage with input:",
      merged.data_ptr() == attn_out.data_ptr())

# --- check: start
# Reference: head h's output placed in columns h * head_dim to (h + 1) * head_dim.
expected = torch.cat([attn_out[:, h] for h in range(heads)], dim=-1)  # (batch, seq, heads * head_dim)
assert torch.equal(merged, expected)
print("check: each token's row holds its heads' outputs side by side, in head order")
# --- check: end
