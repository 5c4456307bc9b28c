"""Reproducer for embedding-indices-dtype.

`python repro.py`: token ids are read from a float array (a NumPy/pandas column, or a
tensor built with `torch.tensor(..., dtype=torch.float32)`), so they reach `nn.Embedding`
as float32. The embedding checks the dtype of its indices and refuses anything but int64
or int32: `Expected tensor for argument #1 'indices' to have one of the following scalar
types: Long, Int; but got torch.FloatTensor instead (while checking arguments for
embedding)`.
`python repro.py --fixed`: the ids are converted to int64 before the lookup, so the
embedding runs and returns the rows of its table that the ids name.
"""

import sys
import traceback

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

vocab_size, dim = 50, 8
embedding = nn.Embedding(vocab_size, dim)
token_ids = [[3, 17, 42, 0], [9, 9, 49, 1]]  # what the tokenizer produced

ids = torch.tensor(token_ids, dtype=torch.float32)  # ids stored in a float column
if FIXED:
# --- fix: start
    # Token ids are indices: convert them to int64 before the lookup.
    ids = ids.long()
# --- fix: end
print(f"ids dtype: {ids.dtype}")
output = None
try:
    output = embedding(ids)
    print(f"ok, output {tuple(output.shape)} {output.dtype}")
except RuntimeError:
    traceback.print_exc()  # torch's own traceback and message

# --- check: start
# Reference: the table rows named by the tokenizer's integer ids, picked one by one.
assert output is not None, "the embedding lookup did not run"
expected = torch.stack([torch.stack([embedding.weight[i] for i in row]) for row in token_ids])
assert output.shape == (2, 4, dim), output.shape
torch.testing.assert_close(output, expected, rtol=0, atol=0)
print("check: every position holds the table row of its integer id")
# --- check: end
