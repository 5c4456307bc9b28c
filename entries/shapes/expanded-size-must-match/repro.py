"""Reproducer for expanded-size-must-match.

An evaluation script embeds a dataset of 250 samples in batches of 100 and stores the
embeddings in a buffer preallocated as `(number of batches, batch size, dim)`, writing
`buffer[i] = batch_embeddings`. The last batch holds only 50 samples, so the assignment
must broadcast a `[50, 32]` tensor into a `[100, 32]` slot, and `python repro.py` fails
with `The expanded size of the tensor (100) must match the existing size (50) at
non-singleton dimension 0.  Target sizes: [100, 32].  Tensor sizes: [50, 32]`.
`python repro.py --fixed`: the buffer is `(number of samples, dim)` and each batch is
written at a running offset by its real length, so every sample's embedding is stored
once, equal to embedding the whole dataset in one pass.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 32)).eval()
inputs = torch.randn(250, 12)
loader = DataLoader(TensorDataset(inputs), batch_size=100, shuffle=False)

buffer = torch.zeros(len(loader), loader.batch_size, 32)


def store(i: int, offset: int, emb: torch.Tensor) -> int:
    """Write one batch of embeddings into the buffer; return the next offset."""
    buffer[i] = emb
    return offset + len(emb)


if FIXED:
# --- fix: start
    # One row per sample, each batch written at a running offset by its real length:
    # the last batch may be shorter than batch_size.
    buffer = torch.zeros(len(loader.dataset), 32)

    def store(i: int, offset: int, emb: torch.Tensor) -> int:
        buffer[offset : offset + len(emb)] = emb
        return offset + len(emb)
# --- fix: end

offset = 0
with torch.no_grad():
    for i, (batch,) in enumerate(loader):
        offset = store(i, offset, encoder(batch))
embeddings = buffer
print(f"stored {offset} embeddings in a buffer of shape {tuple(embeddings.shape)}")

# --- check: start
# Reference: the whole dataset embedded in one forward pass.
with torch.no_grad():
    expected = encoder(inputs)
assert offset == len(inputs) == 250
assert embeddings.shape == expected.shape
torch.testing.assert_close(embeddings, expected)
print("check: every sample's embedding stored once, equal to a single-pass reference")
# --- check: end
