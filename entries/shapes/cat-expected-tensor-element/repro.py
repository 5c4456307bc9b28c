"""Reproducer for cat-expected-tensor-element.

`python repro.py`: a feature extractor runs an LSTM encoder over a dataset in chunks
of 4 sequences and collects what each call returns, then joins the chunks with
`torch.cat`. An `nn.LSTM` returns a tuple `(output, (h_n, c_n))`, not a tensor, so the
list holds tuples and `torch.cat` raises "TypeError: expected Tensor as element 0 in
argument 0, but got tuple".
`python repro.py --fixed`: each call's tuple is unpacked and only the output tensor is
collected.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
SEQUENCES, STEPS, FEATURES, HIDDEN, CHUNK = 10, 7, 5, 8, 4
encoder = nn.LSTM(FEATURES, HIDDEN, batch_first=True)
data = torch.randn(SEQUENCES, STEPS, FEATURES)


def encode(chunk: torch.Tensor) -> torch.Tensor:
    """One chunk's per-step features."""
    return encoder(chunk)  # nn.LSTM returns (output, (h_n, c_n))


if FIXED:
# --- fix: start
    def encode(chunk: torch.Tensor) -> torch.Tensor:
        output, _state = encoder(chunk)  # keep the tensor, not the tuple
        return output
# --- fix: end

with torch.no_grad():
    chunks = [encode(data[i : i + CHUNK]) for i in range(0, SEQUENCES, CHUNK)]
    features = torch.cat(chunks, dim=0)
print("features:", tuple(features.shape))

# --- check: start
# reference: the encoder over the whole dataset in one call
with torch.no_grad():
    expected, _ = encoder(data)
assert features.shape == (SEQUENCES, STEPS, HIDDEN), features.shape  # every sequence, every step
torch.testing.assert_close(features, expected, rtol=1e-5, atol=1e-6)
print("check: the chunked features equal one pass of the encoder over all 10 sequences")
# --- check: end
