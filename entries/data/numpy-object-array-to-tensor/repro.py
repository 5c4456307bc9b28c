"""Reproducer for numpy-object-array-to-tensor.

`python repro.py`: token id sequences of different lengths are gathered into a NumPy
array with `dtype=object` (what `np.array` needs for ragged lists since NumPy 1.24, and
what a pandas column of lists gives with `.values`), and the batch is built with
`torch.from_numpy`. An object array holds Python objects, not numbers, so torch refuses
it: `TypeError: can't convert np.ndarray of type numpy.object_`.
`python repro.py --fixed`: the sequences are padded to the longest one into an int64
array, with a mask that marks the real tokens. The check asserts that every sequence is
in the batch unchanged and that a masked mean over the batch equals the mean of each
original sequence.
"""

import sys

import numpy as np
import torch

FIXED = "--fixed" in sys.argv[1:]

rng = np.random.default_rng(0)
sequences = [rng.integers(1, 1000, size=n).tolist() for n in (5, 9, 3, 7, 12, 1)]


def to_batch(seqs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    ids = np.array(seqs, dtype=object)  # ragged: one Python list per element
    mask = np.array([np.ones(len(s), dtype=bool) for s in seqs], dtype=object)
    return torch.from_numpy(ids), torch.from_numpy(mask)


if FIXED:
    # --- fix: start
    def to_batch(seqs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        # pad to the longest sequence into a numeric array, and keep a mask of real tokens
        longest = max(len(s) for s in seqs)
        ids = np.zeros((len(seqs), longest), dtype=np.int64)
        mask = np.zeros((len(seqs), longest), dtype=bool)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = s
            mask[i, : len(s)] = True
        return torch.from_numpy(ids), torch.from_numpy(mask)
    # --- fix: end


ids, mask = to_batch(sequences)
embedding = torch.nn.Embedding(1000, 4)
with torch.no_grad():
    vectors = embedding(ids)  # (batch, longest, 4)
    pooled = (vectors * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)
print(f"batch {tuple(ids.shape)} {ids.dtype}; pooled {tuple(pooled.shape)}")

# --- check: start
assert ids.dtype == torch.int64 and ids.shape[0] == len(sequences)
for i, s in enumerate(sequences):
    assert ids[i][mask[i]].tolist() == s, f"sequence {i} changed"  # every token kept, in order
assert int(mask.sum()) == sum(len(s) for s in sequences)  # padding is not counted as tokens
with torch.no_grad():
    reference = torch.stack([embedding(torch.tensor(s)).mean(0) for s in sequences])
torch.testing.assert_close(pooled, reference)  # masked pooling equals per-sequence pooling
print(f"check: {len(sequences)} sequences kept exactly; masked mean equals each sequence's own mean")
# --- check: end
