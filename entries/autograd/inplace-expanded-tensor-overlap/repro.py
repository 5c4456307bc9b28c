"""Reproducer for inplace-expanded-tensor-overlap.

`python repro.py`: an attention bias is built from one learned row per head with
`expand` (a view: every query row shares the same memory), and the additive causal mask is
then added into it in place (`bias += mask`). Writing different values to elements that
share one memory location is undefined, so ATen refuses: `RuntimeError: unsupported
operation: more than one element of the written-to tensor refers to a single memory
location. Please clone() the tensor before performing the operation.`
`python repro.py --fixed`: the mask is added out of place (`bias + mask`), which
allocates a full tensor. The check asserts that the attention output equals the one
computed with a bias built row by row, and that the learned bias row is unchanged.
"""

import sys

import torch

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

heads, seq, dim = 2, 6, 8
q, k, v = (torch.randn(heads, seq, dim) for _ in range(3))
bias_row = torch.randn(heads, 1, seq)  # one learned bias per key position and head
bias_before = bias_row.clone()
causal = torch.ones(seq, seq, dtype=torch.bool).triu(1)  # True above the diagonal
causal_add = torch.zeros(seq, seq).masked_fill(causal, float("-inf"))  # additive mask


def masked_bias(row: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    bias = row.expand(-1, seq, -1)  # a view with stride 0 over the query dimension
    bias += mask  # in place into the shared memory
    return bias


if FIXED:
    # --- fix: start
    def masked_bias(row: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        bias = row.expand(-1, seq, -1)
        return bias + mask  # out of place: a new, full tensor
    # --- fix: end


bias = masked_bias(bias_row, causal_add)
scores = q @ k.transpose(-1, -2) / dim**0.5 + bias
out = scores.softmax(-1) @ v
print(f"attention output {tuple(out.shape)}, bias {tuple(bias.shape)} stride {bias.stride()}")

# --- check: start
reference_bias = torch.empty(heads, seq, seq)
for i in range(seq):  # row by row: each query row gets the learned row, masked causally
    reference_bias[:, i, :] = bias_row[:, 0, :].masked_fill(causal[i], float("-inf"))
reference = ((q @ k.transpose(-1, -2) / dim**0.5 + reference_bias).softmax(-1)) @ v
torch.testing.assert_close(out, reference)
assert torch.equal(bias_row, bias_before), "the learned bias row was overwritten"
assert torch.isneginf(bias[:, 0, 1:]).all() and torch.isfinite(bias[:, -1, :]).all()
print("check: output equals the row-by-row reference; the learned bias row is unchanged")
# --- check: end
